/**
 * The drivers are optional peer dependencies, loaded on first use: a package that is not installed
 * fails with `DriverNotInstalled`, naming it and what to install; one that is there but broken is a
 * `StoreError` carrying the cause.
 */
import { StoreError } from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { DriverNotInstalled } from "../src/index.js"
import { drivers, load } from "../src/internal/stores.js"

// A package name that no install provides: importing it fails exactly as importing an
// uninstalled driver does.
const absent = "@agentkit/no-such-driver"
const importAbsent = () => import(/* @vite-ignore */ [absent][0]!)

describe("driver packages", () => {
  it.effect("one that is not installed: DriverNotInstalled naming it and every package its database needs", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(load("SQLite", absent, importAbsent))
      expect(error).toBeInstanceOf(DriverNotInstalled)
      expect(error.message).toBe(
        `the SQLite stores need the package ${absent}, which is not installed: install it beside @agentkit/sql (npm install @libsql/client@^0.12.0 @effect/sql-libsql@^0.42.0); nothing was opened`
      )
    }))

  it.effect("one that is installed but fails to load: a StoreError with the cause, not DriverNotInstalled", () =>
    Effect.gen(function*() {
      const broken = new Error("Cannot find package 'pg-native' imported from @effect/sql-pg")
      const error = yield* Effect.flip(load("Postgres", "@effect/sql-pg", () => Promise.reject(broken)))
      expect(error).toBeInstanceOf(StoreError)
      expect(error.message).toContain("the driver @effect/sql-pg could not be loaded")
      expect((error as StoreError).cause).toBe(broken)
    }))

  it.effect("one that is installed loads", () =>
    Effect.gen(function*() {
      const { PgClient } = yield* load("Postgres", "@effect/sql-pg", () => import("@effect/sql-pg"))
      expect(typeof PgClient.make).toBe("function")
    }))

  it("what the error says to install is what package.json declares: optional peers, with the same ranges", () => {
    const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"))
    const named = Object.values(drivers).flat()
    expect(named.length).toBe(3)
    for (const spec of named) {
      const at = spec.lastIndexOf("@")
      const [name, range] = [spec.slice(0, at), spec.slice(at + 1)]
      expect(manifest.peerDependencies[name], name).toBe(range)
      expect(manifest.peerDependenciesMeta[name], name).toEqual({ optional: true })
      expect(manifest.dependencies[name], name).toBeUndefined()
    }
  })
})
