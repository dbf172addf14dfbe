#!/usr/bin/env node
// Bundles @agentkit/core, @agentkit/tools and @agentkit/agents, after `tsc -b`, for import time.
//
// Why: importing the three packages from tsc's output loads ~78 files, and most of the ~85 ms that
// costs on top of `effect` is Node's ES module loader working per file and per import specifier
// (resolving ~385 specifiers, 256 of them `effect/*` subpaths through effect's exports map, then
// stat, realpath, read and compile each file). One file per package cuts that loader work.
//
// What it writes, for each of those packages, from the JavaScript tsc wrote to its dist/ (so tsc
// stays the only compiler, and the bundle's source map chains through tsc's maps to src/*.ts):
//   dist/bundle/internal/bundle.js   all of the package's own code in one ES module (esbuild; with
//                                    its .map). Everything imported by a bare name stays an import:
//                                    `effect`, `effect/*`, the other @agentkit packages (one
//                                    instance of each in a process) and third-party packages (the
//                                    lazy `import("ajv")` stays lazy). It exports every runtime
//                                    export of every public module M as `M$name`: the package
//                                    itself is the module `index`, so `index$Budget` is what
//                                    `@agentkit/core` exports as `Budget`.
//   dist/bundle/index.js             the package (`"."` in package.json's exports): re-exports
//                                    `index$*` under their own names, so the package exports
//                                    exactly what src/index.ts does and nothing else.
//   dist/bundle/M.js                 `@agentkit/core/M` (`"./*"`), for every public module M of
//                                    dist/ (not dist/internal/): re-exports M's names from the same
//                                    bundle, so `@agentkit/core/Budget`'s `Budget` IS
//                                    `@agentkit/core`'s `Budget.Budget` (no module is ever loaded
//                                    twice). Types still come from tsc's dist/*.d.ts.
// The names each module exports are read from esbuild's metafile (a first, in-memory bundle of
// every public module), so a new export needs nothing here. A file is only rewritten when its
// content changes. Importing the three packages loads 6 files of ours (each package's index and
// bundle) instead of ~78.
//
// Every command that builds runs it after `tsc -b` (package.json: build, typecheck, bench;
// scripts/run.mjs's check; vitest.config.ts for the tests that start `node` on built code). `--check` bundles
// in memory and fails, naming the files, when what is on disk differs from that, i.e. when the
// bundles are not those of the current dist/ (apps/support-desk/scripts/check-imports.mjs and
// scripts/test/bundle.test.mjs run it).
//
// Usage: node scripts/bundle.mjs            write (or refresh) the bundles
//        node scripts/bundle.mjs --check    exit 1 when a bundle is stale or missing
//        node scripts/bundle.mjs --clean    remove every packages/*/dist/bundle/
import * as esbuild from "esbuild"
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join, relative, sep } from "node:path"
import { fileURLToPath } from "node:url"

/** The bundled packages (packages/<name>), each bundled on its own. */
export const bundledPackages = ["core", "tools", "agents"]

const root = fileURLToPath(new URL("..", import.meta.url))
const OUT = "dist/bundle"
const BUNDLE = "internal/bundle.js"
const posix = (path) => path.split(sep).join("/")

/**
 * A package's public modules: src/**\/*.ts but src/internal/, as paths relative to src/ without
 * `.ts` (`index` is the package itself). Listed from src/, not dist/, so a file tsc left in dist/
 * after its source was deleted is not bundled.
 */
const publicModules = (src, under = "") =>
  readdirSync(join(src, under), { withFileTypes: true }).flatMap((entry) => {
    const path = under === "" ? entry.name : `${under}/${entry.name}`
    if (entry.isDirectory()) return under === "" && entry.name === "internal" ? [] : publicModules(src, path)
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path.slice(0, -".ts".length)] : []
  })

/** The prefix of module M's names among the bundle's exports. */
const prefix = (module) => `${module.replace(/[^A-Za-z0-9_]/g, "_")}$`

const common = (dir) => ({
  absWorkingDir: dir,
  bundle: true,
  format: "esm",
  platform: "node",
  // every bare import (effect, effect/*, @agentkit/*, ajv, node:*) stays an import
  packages: "external",
  write: false,
  metafile: true,
  logLevel: "silent"
})

/**
 * The files of packages/<name>/dist/bundle/ as bundling the current dist/ makes them: path
 * (relative to the package) -> content.
 */
export const bundleFiles = async (name) => {
  const dir = join(root, "packages", name)
  const dist = join(dir, "dist")
  const modules = publicModules(join(dir, "src"))
  const unbuilt = modules.filter((module) => !existsSync(join(dist, `${module}.js`)))
  if (unbuilt.length > 0) {
    const listed = unbuilt.slice(0, 3).map((module) => `${module}.js`).join(", ")
    throw new Error(
      `packages/${name}/dist/ has no ${listed}${
        unbuilt.length > 3 ? ` (nor ${unbuilt.length - 3} more)` : ""
      }: run tsc -b first`
    )
  }
  if (modules.some((module) => module.startsWith("bundle/"))) {
    throw new Error(`packages/${name}/src/bundle/: tsc's dist/bundle/ would be the bundle's`)
  }

  // 1. The runtime names each public module exports (each module bundled on its own, in memory).
  const listed = await esbuild.build({
    ...common(dir),
    entryPoints: modules.map((module) => `dist/${module}.js`),
    outdir: "names"
  })
  const names = new Map()
  for (const output of listed.outputFiles) {
    const meta = listed.metafile.outputs[posix(relative(dir, output.path))]
    if (meta?.entryPoint === undefined) continue
    const module = meta.entryPoint.slice("dist/".length, -".js".length)
    // `export * from "effect/X"` would export names no metafile lists
    if (/^export \* from /m.test(output.text)) {
      throw new Error(
        `packages/${name}/dist/${module}.js re-exports * from another package: its names cannot be listed`
      )
    }
    names.set(module, meta.exports)
  }
  if (names.size !== modules.length) {
    throw new Error(`packages/${name}: esbuild listed ${names.size} of ${modules.length} modules`)
  }
  const exported = new Set()
  for (const [module, list] of names) {
    for (const exportName of list) {
      const as = prefix(module) + exportName
      if (exported.has(as)) throw new Error(`packages/${name}: two modules' exports are both named ${as} in the bundle`)
      exported.add(as)
    }
  }

  // 2. The bundle: one entry re-exporting every public module's names under M$name.
  const entry = [...names]
    .filter(([, list]) => list.length > 0)
    .map(([module, list]) =>
      `export { ${
        list.map((exportName) => `${exportName} as ${prefix(module)}${exportName}`).join(", ")
      } } from "./${module}.js"`
    )
    .join("\n")
  const bundled = await esbuild.build({
    ...common(dir),
    stdin: { contents: entry, resolveDir: dist, sourcefile: "bundle-entry.js", loader: "js" },
    outfile: join(dir, OUT, BUNDLE),
    // (no `keepNames`: it would name every function esbuild renames, but also every closure a run
    // makes, with a `defineProperty` each time one is made: 5 KB more a run. A top-level function
    // whose name clashes with another module's is renamed, `make` becoming `make2`, in stack
    // traces and `Function.name`; the exported names are the modules' own.)
    sourcemap: true,
    sourcesContent: false
  })
  const foreign = Object.keys(bundled.metafile.inputs).filter((input) =>
    !input.startsWith("dist/") && input !== "<stdin>"
  )
  if (foreign.length > 0) {
    throw new Error(`packages/${name}: the bundle would include files from outside its dist/: ${foreign.join(", ")}`)
  }
  const files = new Map(bundled.outputFiles.map((output) => [posix(relative(dir, output.path)), output.text]))

  // 3. The package's index and one module per public module, each re-exporting from the bundle.
  for (const [module, list] of names) {
    const specifier = module === "index" ? `@agentkit/${name}` : `@agentkit/${name}/${module}`
    const from = posix(relative(dirname(join(OUT, module)), join(OUT, BUNDLE)))
    const lines = list.map((exportName) => `  ${prefix(module)}${exportName} as ${exportName}`)
    files.set(
      `${OUT}/${module}.js`,
      `// ${specifier}: generated by scripts/bundle.mjs from dist/${module}.js; its code is in the package's bundle.\n` +
        `export {${lines.length === 0 ? "" : `\n${lines.join(",\n")}\n`}} from "${
          from.startsWith(".") ? from : `./${from}`
        }"\n`
    )
  }
  return files
}

/** Every file under a folder, as paths relative to `base`. */
const walk = (folder, base) =>
  existsSync(folder)
    ? readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? walk(join(folder, entry.name), base) : [posix(relative(base, join(folder, entry.name)))]
    )
    : []

/** What differs between packages/<name>/dist/bundle/ on disk and a bundle of its current dist/: one line per file. */
const differences = (name, files) => {
  const dir = join(root, "packages", name)
  const onDisk = walk(join(dir, OUT), dir)
  return [
    ...[...files].flatMap(([path, text]) =>
      !existsSync(join(dir, path))
        ? [`packages/${name}/${path} is missing`]
        : readFileSync(join(dir, path), "utf8") !== text
        ? [`packages/${name}/${path} is stale`]
        : []
    ),
    ...onDisk.filter((path) => !files.has(path)).map((path) => `packages/${name}/${path} is left over`)
  ]
}

/** Writes the bundles; answers the files it wrote or removed. */
export const write = async () => {
  const changed = []
  for (const name of bundledPackages) {
    const dir = join(root, "packages", name)
    const files = await bundleFiles(name)
    for (const [path, text] of files) {
      const file = join(dir, path)
      if (existsSync(file) && readFileSync(file, "utf8") === text) continue
      mkdirSync(dirname(file), { recursive: true })
      // a process starting meanwhile reads the old file or the new one, never half of one
      writeFileSync(`${file}.tmp-${process.pid}`, text)
      renameSync(`${file}.tmp-${process.pid}`, file)
      changed.push(`packages/${name}/${path}`)
    }
    for (const path of walk(join(dir, OUT), dir).filter((path) => !files.has(path))) {
      rmSync(join(dir, path))
      changed.push(`packages/${name}/${path}`)
    }
  }
  return changed
}

/** The problems with the bundles on disk (stale, missing or left-over files): empty when they are those of the current dist/. */
export const check = async () => {
  const problems = []
  for (const name of bundledPackages) {
    try {
      problems.push(differences(name, await bundleFiles(name)))
    } catch (error) {
      problems.push([`packages/${name} cannot be bundled: ${error instanceof Error ? error.message : String(error)}`])
    }
  }
  return problems.flat()
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const mode = process.argv[2]
  try {
    if (mode === "--check") {
      const problems = await check()
      if (problems.length > 0) {
        console.error(
          `the bundles are not those of the current tsc output (run \`pnpm run build\`):\n  ${problems.join("\n  ")}`
        )
        process.exit(1)
      }
    } else if (mode === "--clean") {
      for (const name of bundledPackages) rmSync(join(root, "packages", name, OUT), { recursive: true, force: true })
    } else if (mode === undefined) {
      await write()
    } else {
      console.error("usage: node scripts/bundle.mjs [--check | --clean]")
      process.exit(2)
    }
  } catch (error) {
    console.error(`scripts/bundle.mjs: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  }
}
