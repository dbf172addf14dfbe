/**
 * Reading rows whatever the driver returns (numbers, bigints, Postgres' int8 strings), and options
 * that cannot work: each refused with a typed error naming the field, before anything is opened.
 */
import { ConfigurationError } from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option, Schema } from "effect"
import { SqlStores } from "../src/index.js"
import { IntColumn } from "../src/internal/codec.js"
import { postgresUrl, sqlite } from "./databases.js"

const refusal = <A, E>(layer: Layer.Layer<A, E>) =>
  Effect.map(Effect.exit(Layer.build(layer)), (exit) => {
    if (Exit.isSuccess(exit)) throw new Error("the layer was built")
    expect(Cause.defects(exit.cause).length).toBe(0)
    return Option.getOrThrow(Cause.failureOption(exit.cause))
  })

describe("integer columns", () => {
  const decode = Schema.decodeUnknownEither(IntColumn)
  it("read a number, a bigint or a string of digits as the same safe integer", () => {
    for (const value of [1796109563587, 1796109563587n, "1796109563587"]) {
      expect(decode(value)).toMatchObject({ _tag: "Right", right: 1796109563587 })
    }
    expect(decode("-3")).toMatchObject({ _tag: "Right", right: -3 })
  })
  it("refuse what is not an integer, or not a safe one", () => {
    for (const value of ["1.5", "abc", "", 1.5, 2n ** 60n, "123456789012345678", null, undefined, {}, Number.NaN]) {
      expect(decode(value)._tag, String(value)).toBe("Left")
    }
  })
})

describe("options that cannot work", () => {
  it.scoped("a prefix, a schema on SQLite, a memo bound, a retention or a busy timeout that are not valid: ConfigurationError naming the field", () =>
    Effect.gen(function*() {
      const place = yield* sqlite.fresh
      const cases: ReadonlyArray<readonly [SqlStores.Options, string]> = [
        [{ prefix: "Bad-Prefix" }, "sqlStores.prefix"],
        [{ prefix: "x".repeat(30) }, "sqlStores.prefix"],
        [{ prefix: "1st_" }, "sqlStores.prefix"],
        [{ schema: "agentkit" }, "sqlStores.schema"],
        [{ memo: { maxEntries: 0 } }, "sqlStores.memo.maxEntries"],
        [{ memo: { ttl: "soon" as never } }, "sqlStores.memo.ttl"],
        [{ idempotencyRetention: -5 }, "sqlStores.idempotencyRetention"],
        [{ busyTimeout: "forever" as never }, "sqlStores.busyTimeout"]
      ]
      for (const [options, field] of cases) {
        const error = yield* refusal(place.stores(options))
        expect(error, field).toBeInstanceOf(ConfigurationError)
        expect((error as ConfigurationError).field).toBe(field)
        expect((error as ConfigurationError).message).toMatch(
          new RegExp(`^${field.replace(/\./g, "\\.")} (must|names)`)
        )
      }
    }))

  it.scoped("a SQLite filename that is no file, a Postgres URL that is no Postgres URL: refused, the password never shown", () =>
    Effect.gen(function*() {
      for (const filename of ["", ":memory:", "file:stores.db", "a\0b"]) {
        const error = yield* refusal(SqlStores.layerSqlite({ filename }))
        expect(error).toMatchObject({ _tag: "ConfigurationError", field: "sqlStores.filename" })
      }
      expect(((yield* refusal(SqlStores.layerSqlite({ filename: ":memory:" }))) as ConfigurationError).message)
        .toContain("use the in-memory stores of @agentkit/core")
      const pg = yield* refusal(SqlStores.layerPg({ url: "mysql://root:hunter2@db/app" }))
      expect(pg).toMatchObject({ _tag: "ConfigurationError", field: "sqlStores.url" })
      expect((pg as ConfigurationError).message).not.toContain("hunter2")
      const size = yield* refusal(
        SqlStores.layerPg({ url: postgresUrl ?? "postgres://localhost/x", maxConnections: 0 })
      )
      expect(size).toMatchObject({ _tag: "ConfigurationError", field: "sqlStores.maxConnections" })
    }))
})
