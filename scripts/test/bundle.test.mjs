// The bundles of @agentkit/core, @agentkit/tools and @agentkit/agents (scripts/bundle.mjs), checked
// on the built packages: this suite runs after `tsc -b` and the bundling (`pnpm check`, CI). In
// vitest every `@agentkit/<name>` resolves to the sources, so the packages are imported by name in
// fresh `node` processes started in apps/support-desk (it depends on all of them), the way an app
// loads them. Checked: the bundles are those of the current tsc output; the package and every
// public module (`@agentkit/core/Budget`) export exactly the names of tsc's module, by `import`
// and by `require`; each module is loaded once (a subpath's exports ARE the package's); only the
// package's own code is in its bundle; its source map leads to src/*.ts.
import { execFileSync } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { SourceMap } from "node:module"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { describe, expect, it } from "vitest"
import { bundledPackages, check } from "../bundle.mjs"

const repo = fileURLToPath(new URL("../..", import.meta.url))
const app = join(repo, "apps/support-desk")

/** Runs ES module code in a fresh `node` in apps/support-desk; answers the JSON it prints. */
const probe = (code) =>
  JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", code], { cwd: app, encoding: "utf8" }))

/** A package's public modules: its src/**\/*.ts but src/internal/, without `.ts` (`index` is the package). */
const modules = (name) =>
  readdirSync(join(repo, "packages", name, "src"), { recursive: true })
    .map((path) => path.split("\\").join("/"))
    .filter((path) => path.endsWith(".ts") && !path.startsWith("internal/"))
    .map((path) => path.slice(0, -".ts".length))
const specifier = (name, module) => (module === "index" ? `@agentkit/${name}` : `@agentkit/${name}/${module}`)
const plan = Object.fromEntries(bundledPackages.map((name) => [name, modules(name)]))
const bundleText = (name) => readFileSync(join(repo, "packages", name, "dist/bundle/internal/bundle.js"), "utf8")
const manifest = (name) => JSON.parse(readFileSync(join(repo, "packages", name, "package.json"), "utf8"))

describe("the bundles (scripts/bundle.mjs) of the built packages", { timeout: 60_000 }, () => {
  it("are those of the current tsc output (nothing stale, missing or left over)", async () => {
    expect(await check()).toEqual([])
  })

  it("export, by import and by require, exactly the names of tsc's modules: the package and each public module", () => {
    const names = probe(`
      import { createRequire } from "node:module"
      const require = createRequire(process.cwd() + "/package.json")
      const plan = ${JSON.stringify(plan)}
      const out = {}
      for (const [name, modules] of Object.entries(plan)) {
        for (const module of modules) {
          const spec = module === "index" ? "@agentkit/" + name : "@agentkit/" + name + "/" + module
          out[spec] = {
            imported: Object.keys(await import(spec)),
            required: Object.keys(require(spec)).filter((key) => key !== "__esModule" && key !== "module.exports")
          }
        }
      }
      // tsc's own modules, for their names (loaded after the bundles: other copies, names only)
      for (const [name, modules] of Object.entries(plan)) {
        for (const module of modules) {
          const spec = module === "index" ? "@agentkit/" + name : "@agentkit/" + name + "/" + module
          out[spec].tsc = Object.keys(await import(${
      JSON.stringify(pathToFileURL(repo).href)
    } + "packages/" + name + "/dist/" + module + ".js"))
        }
      }
      console.log(JSON.stringify(out))
    `)
    const specs = bundledPackages.flatMap((name) => plan[name].map((module) => specifier(name, module)))
    expect(Object.keys(names).sort()).toEqual(specs.sort())
    for (const spec of specs) {
      const { imported, required, tsc } = names[spec]
      expect(imported.slice().sort(), `import("${spec}")`).toEqual(tsc.slice().sort())
      expect(required.slice().sort(), `require("${spec}")`).toEqual(tsc.slice().sort())
    }
    expect(names["@agentkit/core"].tsc.length).toBeGreaterThan(50)
  })

  it("load each module once: the three packages are 6 files of ours, a subpath's exports are the package's, ajv stays unloaded", () => {
    const result = probe(`
      import { register } from "node:module"
      import { MessageChannel } from "node:worker_threads"
      // every module Node loads, reported by a load hook (it runs on the loader's thread)
      const { port1, port2 } = new MessageChannel()
      const loaded = []
      let marks = 0
      let flushed = () => {}
      port1.on("message", (url) => (url.startsWith("data:text/javascript,export{}//mark") ? flushed() : loaded.push(url)))
      port1.unref()
      const hooks = "let port; export const initialize = (data) => { port = data.port };" +
        "export const load = (url, context, next) => { port.postMessage(url); return next(url, context) }"
      register("data:text/javascript," + encodeURIComponent(hooks), { data: { port: port2 }, transferList: [port2] })
      const ours = async () => {
        const done = new Promise((resolve) => (flushed = resolve))
        await import("data:text/javascript,export{}//mark" + marks++)
        await done
        const root = ${JSON.stringify(pathToFileURL(repo).href)}
        return loaded.filter((url) => url.startsWith(root + "packages/")).map((url) => url.slice(root.length)).sort()
      }
      const plan = ${JSON.stringify(plan)}
      const packages = {}
      for (const name of Object.keys(plan)) packages[name] = await import("@agentkit/" + name)
      const packagesLoaded = await ours()
      let checked = 0
      const failures = []
      for (const [name, modules] of Object.entries(plan)) {
        const index = packages[name]
        for (const module of modules.filter((module) => module !== "index")) {
          const ns = await import("@agentkit/" + name + "/" + module)
          // each name the package also exports: as a namespace of the module (index.Budget) or by itself
          const namespace = index[module] !== null && typeof index[module] === "object" &&
            Object.keys(index[module]).sort().join() === Object.keys(ns).sort().join()
          for (const key of Object.keys(ns)) {
            const path = namespace ? [module, key] : key in index ? [key] : undefined
            if (path === undefined) continue
            const value = path.reduce((object, step) => object[step], index)
            if (value === ns[key]) checked++
            else failures.push("@agentkit/" + name + "/" + module + " " + key + " !== @agentkit/" + name + " " + path.join("."))
          }
        }
      }
      const core = packages.core
      const examples = {
        "Budget.Budget": (await import("@agentkit/core/Budget")).Budget === core.Budget.Budget,
        "RunContext": (await import("@agentkit/core/RunContext")).RunContext === core.RunContext,
        "ToolArgumentError": (await import("@agentkit/core/ToolError")).ToolArgumentError === core.ToolArgumentError,
        "tools' ToolArgumentError is core's": packages.tools.ToolArgumentError === core.ToolArgumentError,
        "RunLease": (await import("@agentkit/agents/RunLease")).RunLease === packages.agents.RunLease,
        "Tool.make": (await import("@agentkit/tools/Tool")).make === packages.tools.Tool.make
      }
      console.log(JSON.stringify({ packagesLoaded, allLoaded: await ours(), ajv: loaded.filter((url) => url.includes("/ajv")), checked, failures, examples }))
    `)
    expect(result.failures).toEqual([])
    expect(result.checked).toBeGreaterThan(200)
    expect(result.examples).toEqual(Object.fromEntries(Object.keys(result.examples).map((key) => [key, true])))
    expect(result.packagesLoaded).toEqual(
      bundledPackages.flatMap((
        name
      ) => [`packages/${name}/dist/bundle/index.js`, `packages/${name}/dist/bundle/internal/bundle.js`]).sort()
    )
    // with every subpath imported too: only bundle/ files (the same three bundles), never tsc's modules
    const shims = bundledPackages.flatMap((name) =>
      plan[name].map((module) => `packages/${name}/dist/bundle/${module}.js`)
    )
    expect(result.allLoaded).toEqual(
      [...shims, ...bundledPackages.map((name) => `packages/${name}/dist/bundle/internal/bundle.js`)].sort()
    )
    expect(result.ajv).toEqual([])
  })

  it("hold only their package's own code: effect, the other packages and ajv stay imports (ajv a lazy one)", () => {
    for (const name of bundledPackages) {
      const text = bundleText(name)
      const pkg = manifest(name)
      const allowed = new Set([...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})])
      const statics = [...text.matchAll(/^(?:import|export)\b[^;"]*?(?:\bfrom\s*)?"([^"]+)";?$/gm)].map((match) =>
        match[1]
      )
      const dynamics = [...text.matchAll(/\bimport\("([^"]+)"\)/g)].map((match) => match[1])
      const packageOf = (spec) => spec.split("/").slice(0, spec.startsWith("@") ? 2 : 1).join("/")
      expect(statics.length, name).toBeGreaterThan(0)
      for (const spec of [...statics, ...dynamics]) {
        expect(spec.startsWith("node:") || allowed.has(packageOf(spec)), `${name} imports ${spec}`).toBe(true)
      }
      expect(statics.filter((spec) => packageOf(spec).startsWith("ajv")), name).toEqual([])
      // every file esbuild put in is one of the package's own dist/ files (it names each in a comment)
      const files = [...text.matchAll(/^\/\/ (\S+\.js)$/gm)].map((match) => match[1])
      expect(files.length, name).toBeGreaterThan(0)
      expect(files.filter((file) => !file.startsWith("dist/") || file.startsWith("dist/bundle/")), name).toEqual([])
      // no path into node_modules, no copy of effect's code, no CommonJS wrapper of esbuild's
      expect(/node_modules|effect\/dist\/|__commonJS|__require\b/.exec(text)?.[0], name).toBeUndefined()
    }
    const imports = (name) =>
      new Set([...bundleText(name).matchAll(/^import\b[^;"]*?from\s*"([^"]+)";?$/gm)].map((match) => match[1]))
    expect(imports("tools").has("@agentkit/core")).toBe(true)
    expect(imports("agents").has("@agentkit/core")).toBe(true)
    expect(imports("agents").has("@agentkit/tools")).toBe(true)
    expect(imports("core").has("effect/Schema")).toBe(true)
    expect([...bundleText("agents").matchAll(/\bimport\("([^"]+)"\)/g)].map((match) => match[1]).sort()).toEqual([
      "ajv",
      "ajv-formats",
      "ajv/dist/2020.js"
    ])
  })

  it("map back to src/*.ts: each module's code in the bundle to its own TypeScript source", () => {
    for (const name of bundledPackages) {
      const dir = join(repo, "packages", name, "dist/bundle/internal")
      const map = JSON.parse(readFileSync(join(dir, "bundle.js.map"), "utf8"))
      expect(map.sources.filter((source) => !/^\.\.\/\.\.\/\.\.\/src\/.+\.ts$/.test(source)), name).toEqual([])
      const sourceMap = new SourceMap(map)
      const lines = bundleText(name).split("\n")
      let mapped = 0
      lines.forEach((line, at) => {
        const file = /^\/\/ dist\/(\S+)\.js$/.exec(line)?.[1]
        if (file === undefined) return
        // the module's first declaration after esbuild's comment naming it
        const next = lines.findIndex((text, index) => index > at && /^(var|function|class|async function) /.test(text))
        if (next === -1 || lines.slice(at + 1, next).some((text) => text.startsWith("// dist/"))) return
        const entry = sourceMap.findEntry(next, 4)
        expect(entry.originalSource, `${name}: line ${next + 1}`).toMatch(new RegExp(`/src/${file}\\.ts$`))
        mapped++
      })
      expect(mapped, name).toBeGreaterThan(3)
    }
  })
})
