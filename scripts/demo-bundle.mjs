// The demos' bundles (scripts/run.mjs): a demo's entry in apps/support-desk/src and the TypeScript
// sources of every @agentkit package it imports, in one ES module made by esbuild, in about a
// second, so a first `npm run demo` builds nothing else (no `tsc -b`: type-checking is
// `npm test`'s work). `@agentkit/<name>` and `@agentkit/<name>/<Module>` are read from
// packages/<name>/src; every other package (effect, ajv, @anthropic-ai/sdk, libsql...) stays an
// import, resolved from the file that imports it the way Node would and written as that file's
// URL, so Node loads it from node_modules as usual: one copy of `effect` in the process, native
// drivers included. In a package's sources, `import.meta.url` is the source file's own URL (the
// console finds its web/ folder from it), not the bundle's; an entry's stays the bundle's (it
// checks that it is the program node was started on).
import * as esbuild from "esbuild"
import { existsSync, readFileSync } from "node:fs"
import { isBuiltin } from "node:module"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const RESOLVING = Symbol("resolving")

/** @type {esbuild.Plugin} */
const workspaceSources = {
  name: "agentkit-workspace-sources",
  setup(build) {
    build.onResolve({ filter: /^@agentkit\// }, ({ path }) => {
      const match = /^@agentkit\/([^/]+)(?:\/(.+))?$/.exec(path)
      const file = match === null ? undefined : join(root, "packages", match[1], "src", `${match[2] ?? "index"}.ts`)
      if (file === undefined || !existsSync(file)) {
        return { errors: [{ text: `${path}: no such workspace module (looked for ${file ?? "packages/<name>/src"})` }] }
      }
      return { path: file }
    })
    build.onLoad({ filter: /[\\/]packages[\\/][^\\/]+[\\/]src[\\/].*\.ts$/ }, ({ path }) => {
      const source = readFileSync(path, "utf8")
      if (!source.includes("import.meta.url")) return undefined
      return { contents: source.replaceAll("import.meta.url", JSON.stringify(pathToFileURL(path).href)), loader: "ts" }
    })
    build.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.pluginData === RESOLVING || isBuiltin(args.path)) return undefined
      const resolved = await build.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: RESOLVING
      })
      if (resolved.errors.length > 0) return { errors: resolved.errors }
      return { path: pathToFileURL(resolved.path).href, external: true }
    })
  }
}

/** Bundles `entry` (a .ts file) into `outfile` (an ES module), with its source map. */
export const bundleDemo = async (entry, outfile) => {
  await esbuild.build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    sourcemap: true,
    logLevel: "warning",
    plugins: [workspaceSources],
    tsconfigRaw: { compilerOptions: { target: "ES2022", useDefineForClassFields: true, verbatimModuleSyntax: true } }
  })
}
