#!/usr/bin/env node
// Checks the documentation of every package (and app) source module:
//
// 1. Examples compile. Every ```ts block inside an `@example` JSDoc tag of packages/*/src/**/*.ts
//    and apps/*/src/**/*.ts is written as its own module to <package>/build/examples/ (gitignored;
//    written next to the package it documents, so it resolves that package's dependencies) and
//    all of them are type-checked in ONE TypeScript program with the repository's strict compiler
//    options (tsconfig.base.json). `@agentkit/<name>` resolves to packages/<name>/src. The free
//    names examples use (`agent`, `lookupOrder`, ...) are declared once, with the real public
//    types, in scripts/docs/prelude.d.ts: an example that misuses them still fails.
// 2. Every export of a public package module (not src/internal/, not the index re-exports) has a
//    JSDoc block with a description, one `@since <version>`, an `@example` and exactly one
//    `@category` from the vocabulary below.
//
// Failures are reported as `file:line:col` of the JSDoc and the TypeScript error. Known failures
// may be listed, each with its reason, in scripts/docs/allowlist.json; an allowlisted entry that
// no longer fails is itself an error (the list only shrinks).
//
// Usage: node scripts/check-docs.mjs [--list] [--write-allowlist] [--root <dir>]
//   --list             print every example location and its key
//   --write-allowlist  rewrite the allowlist with the current failures (keeps existing reasons)
// The generated program can be re-checked by hand: tsc -p build/doc-examples/tsconfig.json
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { dirname, join, relative, resolve, sep } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const argv = process.argv.slice(2)
const args = new Set(argv)
// --root <dir> checks another tree laid out like this repository (the checker's own tests use it).
const rootArg = argv.indexOf("--root")
const root = rootArg === -1 ? fileURLToPath(new URL("..", import.meta.url)) : resolve(argv[rootArg + 1] ?? ".")
const allowlistPath = join(root, "scripts/docs/allowlist.json")
const preludePath = join(root, "scripts/docs/prelude.d.ts")
const programDir = join(root, "build/doc-examples")

// The category vocabulary: every export carries exactly one of these.
const categories = {
  models: "types, interfaces and data classes that describe a value",
  schemas: "Schema values (decoders and encoders of a model)",
  constructors: "functions and values that make a model",
  combinators: "functions that take a value or an effect and return a changed one",
  getters: "functions that read a value out of a model or a table",
  predicates: "boolean tests that are not type guards (`isRetryable`)",
  guards: "type guards (`x is T`)",
  "type ids": "the unique identifiers that mark a family of values (`ErrorTypeId`)",
  constants: "fixed values and tables",
  services: "`Context.Tag` classes and the shapes of services",
  layers: "`Layer` values that provide a service",
  middleware: "chat or tool pipeline middleware and their options",
  errors: "error classes and error types",
  names: "telemetry names: spans, attributes, events",
  tracing: "spans, annotations and samplers",
  metrics: "metric instruments",
  formatting: "text for people or models (Python-compatible repr, tool output rendering)",
  metering: "token, cost and usage accounting: estimates, prices, rounding",
  encoding: "canonical encodings",
  hashing: "hashes and cache or idempotency keys",
  testing: "test doubles and fixtures"
}

const rel = (path) => relative(root, path).split(sep).join("/")

const walk = (dir) =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return walk(path)
    return name.endsWith(".ts") && !name.endsWith(".d.ts") ? [path] : []
  })

// Each workspace member with a src/ folder: packages/* (public) and apps/* (private programs).
const members = ["packages", "apps"].flatMap((group) =>
  existsSync(join(root, group))
    ? readdirSync(join(root, group))
      .filter((name) => existsSync(join(root, group, name, "src")))
      .map((name) => ({ group, name, dir: join(root, group, name) }))
    : []
)
const packageNames = members.filter((m) => m.group === "packages").map((m) => m.name)

/** The ranges of string and template literals, where a `/**` is not a comment. */
const literalRanges = (sourceFile) => {
  const ranges = []
  const visit = (node) => {
    if (ts.isStringLiteralLike(node) || ts.isTemplateLiteral(node) || ts.isRegularExpressionLiteral(node)) {
      ranges.push([node.getStart(sourceFile), node.end])
      return
    }
    ts.forEachChild(node, visit)
  }
  visit(sourceFile)
  return ranges
}

/**
 * The name of what each JSDoc block documents, keyed by the block's start offset: `Name`,
 * `Name.member`, or absent for a block that documents nothing (a module header).
 */
const jsDocOwners = (sourceFile) => {
  const owners = new Map()
  const nameOf = (node) => {
    if (ts.isVariableStatement(node)) {
      return node.declarationList.declarations.flatMap((d) => boundNames(d.name)).join(",")
    }
    if (ts.isExportDeclaration(node)) return "export"
    if (node.name !== undefined) return node.name.getText(sourceFile)
    if (ts.isConstructorDeclaration(node)) return "constructor"
    return undefined
  }
  const visit = (node, prefix) => {
    const name = nameOf(node)
    const qualified = name === undefined ? prefix : prefix === undefined ? name : `${prefix}.${name}`
    // `jsDoc` is the parser's list of the JSDoc blocks attached to a node (not in the public
    // typings, but what ts.getJSDocCommentsAndTags reads).
    for (const doc of node.jsDoc ?? []) {
      if (!owners.has(doc.getStart(sourceFile))) owners.set(doc.getStart(sourceFile), qualified ?? "?")
    }
    ts.forEachChild(node, (child) => visit(child, ts.isSourceFile(node) ? undefined : qualified))
  }
  ts.forEachChild(sourceFile, (child) => visit(child, undefined))
  return owners
}

/** Every JSDoc block of a file: its start offset, first line (1-based) and de-starred lines. */
const jsDocBlocks = (text, sourceFile) => {
  const literals = literalRanges(sourceFile)
  const blocks = []
  for (const match of text.matchAll(/\/\*\*(?!\/)[\s\S]*?\*\//g)) {
    const start = match.index
    if (literals.some(([from, to]) => start >= from && start < to)) continue
    const firstLine = sourceFile.getLineAndCharacterOfPosition(start).line + 1
    const lines = match[0]
      .replace(/^\/\*\*/, "")
      .replace(/\*\/$/, "")
      .split("\n")
      .map((line) => {
        const star = /^(\s*\*? ?)/.exec(line)[1]
        return { text: line.slice(star.length), column: star.length + 1 }
      })
    blocks.push({ start, firstLine, lines })
  }
  return blocks
}

/** The tags of a block: name, line index, and the lines up to the next tag (fences respected). */
const tagsOf = (block) => {
  const tags = []
  let current = { name: "description", index: 0, lines: [] }
  let fenced = false
  block.lines.forEach((line, index) => {
    const tag = !fenced && /^@(\w+)\s*(.*)$/.exec(line.text.trimStart())
    if (tag) {
      tags.push(current)
      current = { name: tag[1], value: tag[2].trim(), index, lines: [] }
      return
    }
    if (/^\s*```/.test(line.text)) fenced = !fenced
    current.lines.push({ ...line, index })
  })
  tags.push(current)
  return tags
}

/** The ```ts fences of an `@example` tag. */
const fencesOf = (tag) => {
  const fences = []
  let open
  for (const line of tag.lines) {
    const fence = /^(\s*)```(\w*)\s*$/.exec(line.text)
    if (fence === null) {
      if (open !== undefined) open.body.push(line)
      continue
    }
    if (open === undefined) open = { lang: fence[2], index: line.index, body: [] }
    else {
      fences.push(open)
      open = undefined
    }
  }
  if (open !== undefined) fences.push({ ...open, unclosed: true })
  return fences
}

// ---------------------------------------------------------------------------------------------
// Collect the examples and the export problems.

const examples = [] // { key, file, member, line (of the fence), body: [{ text, column, line }] }
const problems = [] // { key, kind: "example" | "docs", at, message }
const keyCount = new Map()
const uniqueKey = (base) => {
  const n = keyCount.get(base) ?? 0
  keyCount.set(base, n + 1)
  return n === 0 ? base : `${base}[${n}]`
}

for (const member of members) {
  for (const path of walk(join(member.dir, "src"))) {
    const file = rel(path)
    const text = readFileSync(path, "utf8")
    const sourceFile = ts.createSourceFile(path, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS)
    const owners = jsDocOwners(sourceFile)
    const blocks = jsDocBlocks(text, sourceFile)
    for (const block of blocks) {
      const owner = owners.get(block.start) ?? "module"
      for (const tag of tagsOf(block)) {
        if (tag.name !== "example") continue
        const fences = fencesOf(tag)
        const at = `${file}:${block.firstLine + tag.index}`
        if (fences.length === 0) {
          problems.push({
            key: uniqueKey(`${file}#${owner}`),
            kind: "example",
            at,
            message: "@example without a ```ts block"
          })
        }
        for (const fence of fences) {
          const key = uniqueKey(`${file}#${owner}`)
          const fenceLine = block.firstLine + fence.index
          if (fence.lang !== "ts") {
            problems.push({
              key,
              kind: "example",
              at: `${file}:${fenceLine}`,
              message: `example fence is \`\`\`${fence.lang || "(none)"}, not \`\`\`ts`
            })
            continue
          }
          if (fence.unclosed) {
            problems.push({ key, kind: "example", at: `${file}:${fenceLine}`, message: "example fence is not closed" })
            continue
          }
          examples.push({
            key,
            member,
            file,
            line: fenceLine,
            body: fence.body.map((l) => ({ text: l.text, column: l.column, line: block.firstLine + l.index }))
          })
        }
      }
    }
    if (member.group === "packages" && !file.includes("/src/internal/") && !file.endsWith("/src/index.ts")) {
      checkExports(file, sourceFile, blocks)
    }
  }
}

/** The names a binding declares: `a`, or each name of `{ a, b: c }` / `[a, b]`. */
function boundNames(name) {
  if (ts.isIdentifier(name)) return [name.text]
  return name.elements.flatMap((element) => (ts.isOmittedExpression(element) ? [] : boundNames(element.name)))
}

/** The export checks of one public module. */
function checkExports(file, sourceFile, blocks) {
  const blockAt = new Map(blocks.map((b) => [b.start, b]))
  const seen = new Set()
  for (const statement of sourceFile.statements) {
    if (ts.isExportDeclaration(statement) || ts.isExportAssignment(statement)) continue
    const exported = ts.getCombinedModifierFlags(statement) & ts.ModifierFlags.Export
    if (!exported) continue
    const name = ts.isVariableStatement(statement)
      ? statement.declarationList.declarations.flatMap((d) => boundNames(d.name)).join(",")
      : statement.name?.getText(sourceFile) ?? "default"
    // A function's overloads and its implementation are documented once, on the first one.
    const group = ts.isFunctionDeclaration(statement) ? `function ${name}` : undefined
    if (group !== undefined && seen.has(group)) continue
    if (group !== undefined) seen.add(group)
    const key = `${file}#${name}`
    const line = sourceFile.getLineAndCharacterOfPosition(statement.getStart(sourceFile)).line + 1
    const docs = (statement.jsDoc ?? []).map((doc) => blockAt.get(doc.getStart(sourceFile))).filter(Boolean)
    const block = docs.at(-1)
    const report = (message, at = `${file}:${line}`) =>
      problems.push({ key: `${key}:${message.split(":")[0]}`, kind: "docs", at, message })
    if (block === undefined) {
      report(`missing JSDoc: export '${name}' has no documentation block`)
      continue
    }
    const at = `${file}:${block.firstLine}`
    const tags = tagsOf(block)
    const named = (tagName) => tags.filter((t) => t.name === tagName)
    if (!tags[0].lines.some((l) => l.text.trim() !== "")) report(`missing description: export '${name}'`, at)
    const since = named("since")
    if (since.length !== 1 || !/^\d+\.\d+\.\d+$/.test(since[0].value)) {
      report(
        `@since: export '${name}' needs exactly one '@since <major.minor.patch>' (found ${
          since.map((t) => `'${t.value}'`).join(", ") || "none"
        })`,
        at
      )
    }
    if (named("example").length === 0) report(`missing @example: export '${name}'`, at)
    const category = named("category")
    if (category.length !== 1) {
      report(
        `@category: export '${name}' needs exactly one @category (found ${
          category.map((t) => `'${t.value}'`).join(", ") || "none"
        })`,
        at
      )
    } else if (!Object.hasOwn(categories, category[0].value)) {
      report(
        `@category: export '${name}' has '${category[0].value}', not one of: ${Object.keys(categories).join(", ")}`,
        at
      )
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Write the examples and type-check them in one program.

const outDirs = new Set(members.map((m) => join(m.dir, "build/examples")))
for (const dir of [...outDirs, programDir]) rmSync(dir, { recursive: true, force: true })

const generated = new Map() // generated path -> example
for (const example of examples) {
  // src/internal/errors.ts:12 -> internal-errors-L12.ts: unique within the member, case included.
  const inSrc = relative(join(example.member.dir, "src"), join(root, example.file)).split(sep).join("-")
  const base = `${inSrc.replace(/\.ts$/, "")}-L${example.line}.ts`
  const path = join(example.member.dir, "build/examples", base)
  mkdirSync(dirname(path), { recursive: true })
  // `export {}` makes every example a module, so its top-level names never clash with another's.
  writeFileSync(path, `${example.body.map((l) => l.text).join("\n")}\nexport {}\n`)
  generated.set(path, example)
  // An example imports what a user can import: a package's root or a public module, never internal/.
  example.body.forEach((l) => {
    const internal = /from\s+["'](@agentkit\/[^"']*\/internal\/[^"']*)["']/.exec(l.text)
    if (internal !== null) {
      problems.push({
        key: example.key,
        kind: "example",
        at: `${example.file}:${l.line}`,
        message: `imports '${internal[1]}': internal modules are not part of the package exports`
      })
    }
  })
}

const base = ts.readConfigFile(join(root, "tsconfig.base.json"), ts.sys.readFile)
if (base.error) throw new Error(ts.flattenDiagnosticMessageText(base.error.messageText, "\n"))
const paths = Object.fromEntries(
  packageNames.flatMap((name) => [
    [`@agentkit/${name}`, [rel(join(root, "packages", name, "src/index.ts"))]],
    [`@agentkit/${name}/*`, [rel(join(root, "packages", name, "src")) + "/*.ts"]]
  ]).map(([k, v]) => [k, v.map((p) => `../../${p}`)])
)
const tsconfig = {
  compilerOptions: {
    ...base.config.compilerOptions,
    composite: false,
    declaration: false,
    declarationMap: false,
    sourceMap: false,
    incremental: false,
    noEmit: true,
    paths
  },
  files: [preludePath, ...generated.keys()].map((p) => relative(programDir, p).split(sep).join("/"))
}
mkdirSync(programDir, { recursive: true })
const tsconfigPath = join(programDir, "tsconfig.json")
writeFileSync(tsconfigPath, `${JSON.stringify(tsconfig, null, 2)}\n`)

const parsed = ts.getParsedCommandLineOfConfigFile(tsconfigPath, {}, {
  ...ts.sys,
  onUnRecoverableConfigFileDiagnostic: (d) => {
    throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"))
  }
})
const generatedPaths = new Set([...generated.keys()].map((p) => ts.sys.resolvePath(p)))
const started = performance.now()
const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options })
// Only the examples and the prelude are checked: the package sources are checked by `tsc -b`, and
// the checker then resolves only the types the examples use (about a quarter faster).
const checked = program.getSourceFiles().filter((f) =>
  generatedPaths.has(ts.sys.resolvePath(f.fileName)) ||
  ts.sys.resolvePath(f.fileName) === ts.sys.resolvePath(preludePath)
)
const diagnostics = [
  ...program.getOptionsDiagnostics(),
  ...program.getGlobalDiagnostics(),
  ...checked.flatMap((f) => [...program.getSyntacticDiagnostics(f), ...program.getSemanticDiagnostics(f)])
]
const checkMs = performance.now() - started

const byPath = new Map([...generated].map(([path, example]) => [ts.sys.resolvePath(path), example]))
for (const diagnostic of diagnostics) {
  const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n  ")
  const file = diagnostic.file
  const example = file && byPath.get(ts.sys.resolvePath(file.fileName))
  if (example === undefined) {
    // An error outside the examples (the prelude, a source file, the options) is the checker's own.
    const where = file
      ? `${rel(file.fileName)}:${file.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1}`
      : "tsconfig"
    problems.push({ key: `setup:${where}`, kind: "setup", at: where, message: `TS${diagnostic.code}: ${message}` })
    continue
  }
  const { line, character } = file.getLineAndCharacterOfPosition(diagnostic.start ?? 0)
  const source = example.body[line]
  const at = source === undefined
    ? `${example.file}:${example.line}`
    : `${example.file}:${source.line}:${source.column + character}`
  problems.push({ key: example.key, kind: "example", at, message: `TS${diagnostic.code}: ${message}` })
}

// ---------------------------------------------------------------------------------------------
// Report against the allowlist.

const allowlist = existsSync(allowlistPath) ? JSON.parse(readFileSync(allowlistPath, "utf8")) : {}
const allowed = new Map(Object.entries(allowlist).filter(([k]) => !k.startsWith("$")))
const failingKeys = new Set(problems.map((p) => p.key))

if (args.has("--list")) {
  for (const example of examples) console.log(`${example.file}:${example.line}  ${example.key}`)
}

if (args.has("--write-allowlist")) {
  const next = {
    $comment: allowlist.$comment ??
      "Known documentation failures: key -> reason. Only shrinks; see scripts/check-docs.mjs."
  }
  for (const key of [...failingKeys].sort()) {
    if (key.startsWith("setup:")) continue
    const first = problems.find((p) => p.key === key)
    next[key] = allowed.get(key) ?? first.message.split("\n")[0]
  }
  writeFileSync(allowlistPath, `${JSON.stringify(next, null, 2)}\n`)
}

const blocking = problems.filter((p) => !allowed.has(p.key))
const stale = [...allowed.keys()].filter((key) => !failingKeys.has(key))
const known = problems.filter((p) => allowed.has(p.key))

const failingExamples = new Set(problems.filter((p) => p.kind === "example").map((p) => p.key))
const print = (p) => console.error(`${p.at}: ${p.message}`)
blocking.forEach(print)
for (const key of stale) console.error(`scripts/docs/allowlist.json: '${key}' is allowlisted but passes now: remove it`)
const knownExamples = new Set(known.filter((p) => p.kind === "example").map((p) => p.key)).size
const knownDocs = known.filter((p) => p.kind === "docs").length
console.error(
  `docs: ${examples.length} examples in ${
    new Set(examples.map((e) => e.file)).size
  } files type-checked in one program (${(checkMs / 1000).toFixed(1)}s); ` +
    `${failingExamples.size} failing (${knownExamples} allowlisted), ` +
    `${problems.filter((p) => p.kind === "docs").length} export tag problems (${knownDocs} allowlisted)`
)
if (blocking.length > 0 || stale.length > 0) process.exit(1)
