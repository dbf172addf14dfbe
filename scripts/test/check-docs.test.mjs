// The doc checker against small trees laid out like this repository. Each tree lives under the
// repository's build/ folder (gitignored), so it resolves `effect`, `typescript` and `@types/node`
// from the root node_modules the way the real packages do.
import { describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll } from "vitest"

const repo = fileURLToPath(new URL("../..", import.meta.url))
const checker = join(repo, "scripts/check-docs.mjs")
mkdirSync(join(repo, "build"), { recursive: true })
const trees = []
const baseOptions = JSON.parse(readFileSync(join(repo, "tsconfig.base.json"), "utf8")).compilerOptions
afterAll(() => trees.forEach((dir) => rmSync(dir, { recursive: true, force: true })))

/** Writes a tree (path -> text) and runs the checker on it. */
const check = async (files) => {
  const dir = mkdtempSync(join(repo, "build/check-docs-"))
  trees.push(dir)
  const tree = {
    "package.json": `{ "type": "module" }\n`,
    // The repository's strict options, without @types/node (it alone doubles the check time).
    "tsconfig.base.json": JSON.stringify({ compilerOptions: { ...baseOptions, types: [] } }),
    "scripts/docs/prelude.d.ts": [
      `import type { Greeter } from "@agentkit/demo"`,
      `declare global {`,
      `  const greeter: Greeter`,
      `}`,
      `export {}`
    ].join("\n"),
    ...files
  }
  for (const [path, text] of Object.entries(tree)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  return new Promise((resolve) => {
    execFile(process.execPath, [checker, "--root", dir], { encoding: "utf8" }, (error, stdout, stderr) => {
      resolve({ status: error === null ? 0 : error.code, output: stderr + stdout })
    })
  })
}

/** A documented export: its JSDoc lines (without the stars) and its declaration. */
const doc = (lines, declaration) =>
  ["/**", ...lines.map((l) => (l === "" ? " *" : ` * ${l}`)), " */", declaration, ""].join("\n")
const example = (...body) => ["@example", "```ts", ...body, "```"]
const tags = (category = "models") => ["", "@since 0.1.0", `@category ${category}`]

const greeter = doc(
  [
    "Says hello.",
    "",
    ...example(`import type { Greeter } from "@agentkit/demo"`, `const g: Greeter = greeter`),
    ...tags()
  ],
  "export interface Greeter { greet(name: string): string }"
)
const index = `export type { Greeter } from "./Greeter.js"\nexport { make } from "./Greeter.js"\n`
const make = (body) =>
  doc(
    ["Makes a greeter.", "", ...example(...body), ...tags("constructors")],
    `export const make = (): Greeter => ({ greet: (name) => \`hello \${name}\` })`
  )

// Each test runs the checker, a TypeScript compile: generous timeouts, no timing assertions.
describe.concurrent("check-docs", { timeout: 120_000 }, () => {
  it("passes a tree whose examples compile, each example in its own module", async () => {
    const result = await check({
      "packages/demo/src/index.ts": index,
      // Two examples declare the same top-level name: they are separate modules, so no clash.
      "packages/demo/src/Greeter.ts": greeter +
        make([`import { make } from "@agentkit/demo"`, `const g = make()`, `g.greet("A-771")`]) +
        doc(
          ["A constant.", "", ...example(`const g = 1`), ...example(`const g = "two"`), ...tags("constants")],
          `export const two = 2`
        ) +
        // A `/**` inside a string is not a comment.
        doc(
          ["Text.", "", ...example(`const s: string = "x"`), ...tags("constants")],
          `export const text = "/** @example \\n\`\`\`ts\\nnope\\n\`\`\` */"`
        )
    })
    expect(result.output).toContain("docs: 5 examples in 1 files type-checked in one program")
    expect(result.output).toContain("0 failing")
    expect(result.status).toBe(0)
  })

  it("reports file:line:col of type errors, misused prelude names, undeclared names, internal imports and tag problems", async () => {
    const source = greeter +
      make([
        `import { make } from "@agentkit/demo"`,
        `const n: number = make().greet("x")`,
        `greeter.greet(42)`,
        `undeclared.run()`
      ]) +
      doc([
        "Imports internals.",
        "",
        ...example(`import { secret } from "@agentkit/demo/internal/secret"`, `secret`),
        ...tags("constants")
      ], "export const i = 1") +
      doc(["Odd category.", "", ...example("1"), "", "@since 0.1.0", "@category utils"], "export const a = 1") +
      doc(
        ["Two categories.", "", ...example("1"), "", "@since 0.1.0", "@category models", "@category guards"],
        "export const b = 1"
      ) +
      doc(["No since.", "", ...example("1"), "", "@category constants"], "export const c = 1") +
      doc(["No example.", ...tags("constants")], "export const d = 1") +
      doc(["@since 0.1.0", "@category constants", ...example("1")], "export const e = 1") +
      "export const f = 1\n"
    const result = await check({
      "packages/demo/src/index.ts": index,
      // Internal modules and the index re-exports are not checked for tags.
      "packages/demo/src/internal/secret.ts": "export const secret = 1\n",
      "packages/demo/src/Greeter.ts": source
    })
    const lines = source.split("\n")
    const lineOf = (text) => lines.findIndex((l) => l.includes(text)) + 1
    const at = (text, token) => `${file}:${lineOf(text)}:${lines[lineOf(text) - 1].indexOf(token) + 1}`
    const file = "packages/demo/src/Greeter.ts"
    expect(result.output).toContain(
      `${at("const n: number", "n:")}: TS2322: Type 'string' is not assignable to type 'number'`
    )
    expect(result.output).toContain(`${at("greeter.greet(42)", "42")}: TS2345`)
    expect(result.output).toContain(`${at("undeclared.run()", "undeclared")}: TS2304: Cannot find name 'undeclared'`)
    expect(result.output).toContain(
      `${file}:${
        lineOf("@agentkit/demo/internal/secret")
      }: imports '@agentkit/demo/internal/secret': internal modules are not part of the package exports`
    )
    expect(result.output).toMatch(
      new RegExp(`${file}:\\d+: @category: export 'a' has 'utils', not one of: models, schemas, constructors`)
    )
    expect(result.output).toContain("@category: export 'b' needs exactly one @category (found 'models', 'guards')")
    expect(result.output).toContain("@since: export 'c' needs exactly one '@since <major.minor.patch>' (found none)")
    expect(result.output).toContain("missing @example: export 'd'")
    expect(result.output).toContain("missing description: export 'e'")
    expect(result.output).toContain(
      `${file}:${lineOf("export const f")}: missing JSDoc: export 'f' has no documentation block`
    )
    expect(result.output).toContain("2 failing (0 allowlisted), 6 export tag problems")
    expect(result.status).toBe(1)
  })

  it("passes listed failures, and fails on an allowlist entry that passes now", async () => {
    const files = {
      "packages/demo/src/index.ts": index,
      "packages/demo/src/Greeter.ts": greeter + make([`greeter.greet(42)`]) +
        doc(["Odd category.", "", ...example("1"), "", "@since 0.1.0", "@category utils"], "export const a = 1")
    }
    const allowed = {
      "packages/demo/src/Greeter.ts#make": "misuses greeter on purpose",
      "packages/demo/src/Greeter.ts#a:@category": "utils is going away"
    }
    const [listed, stale] = await Promise.all([
      check({ ...files, "scripts/docs/allowlist.json": JSON.stringify(allowed) }),
      check({
        ...files,
        "scripts/docs/allowlist.json": JSON.stringify({
          ...allowed,
          "packages/demo/src/Greeter.ts#Greeter": "fixed already"
        })
      })
    ])
    expect(listed.output).toContain("1 failing (1 allowlisted), 1 export tag problems (1 allowlisted)")
    expect(listed.status).toBe(0)

    expect(stale.output).toContain("'packages/demo/src/Greeter.ts#Greeter' is allowlisted but passes now: remove it")
    expect(stale.status).toBe(1)
  })
})
