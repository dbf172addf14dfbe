import { readdirSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

// Tests run against source: every `@agentkit/<name>` import resolves to `packages/<name>/src`.
const root = fileURLToPath(new URL(".", import.meta.url))
const packages = readdirSync(new URL("./packages", import.meta.url))
const apps = readdirSync(new URL("./apps", import.meta.url))
// The crash suites kill real worker processes at random points and wait out their leases: they run
// last, by themselves, so that neither they nor the other suites slow each other down.
const crashSuites = [
  "packages/sql/test/crash.test.ts",
  "packages/sql/test/sessionProcesses.test.ts",
  "packages/sql/test/budgetCrash.test.ts",
  "packages/durable/test/crash.test.ts"
]
// The projects whose tests start `node` on built code build and bundle core, tools and agents first
// (scripts/bundle.mjs: `node` loads their bundles, which `tsc -b` alone leaves behind).
const globalSetup = ["scripts/test/bundles.setup.mjs"]

export default defineConfig({
  resolve: {
    alias: [
      ...packages.map((name) => ({
        find: new RegExp(`^@agentkit/${name}$`),
        replacement: `${root}packages/${name}/src/index.ts`
      })),
      // a module subpath (`@agentkit/evals/Vitest`) resolves to its source module too
      { find: /^@agentkit\/([a-z-]+)\/([A-Z][A-Za-z]*)$/, replacement: `${root}packages/$1/src/$2.ts` }
    ]
  },
  test: {
    // Sized for a loaded 2-core machine (a second suite beside this one): a 100,000-element case
    // that takes 1 s alone takes 10 s at load 10. A timeout only bounds a hang; no outcome
    // depends on it. Tests that start processes or servers set their own, longer ones.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 60_000,
    projects: [
      ...packages.map((name) => ({
        extends: true as const,
        test: { name: `@agentkit/${name}`, include: [`packages/${name}/test/**/*.test.ts`], exclude: crashSuites }
      })),
      ...apps.map((name) => ({
        extends: true as const,
        test: { name: `app:${name}`, include: [`apps/${name}/test/**/*.test.ts`], globalSetup }
      })),
      { extends: true as const, test: { name: "scripts", include: ["scripts/test/**/*.test.mjs"] } },
      {
        extends: true as const,
        test: { name: "crash", include: crashSuites, globalSetup, sequence: { groupOrder: 1 } }
      }
    ]
  }
})
