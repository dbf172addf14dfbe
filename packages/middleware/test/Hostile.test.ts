/**
 * Hostile arguments through each middleware, targeted (issue 13): non-object arguments, 10,000-deep
 * values, proxies that throw, prototype keys and a getter that changes its answer reach every
 * middleware without a crash; audit is written for every call that ran; a middleware that cannot
 * read the arguments refuses the call with a typed error naming where.
 */
import { CanonicalJson, Invoker, Message, Quota, Scope, ToolArgumentError, ToolDenied } from "@agentkit/core"
import type { ToolCall, ToolMiddleware } from "@agentkit/core"
import { Audit, Egress, Idempotency, Memoize, Meter, Retry, Telemetry } from "@agentkit/middleware"
import { FakeLLM, Tracing } from "@agentkit/testing"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Option } from "effect"
import { countingTool, setup } from "./fixtures.js"

const deep = (depth: number): unknown => {
  let value: unknown = "bottom"
  for (let i = 0; i < depth; i++) value = [value]
  return value
}
const throwingProxy = () =>
  new Proxy({}, {
    ownKeys: () => {
      throw new Error("trap")
    }
  })
const hostileCall = (args: unknown, id = "c1"): ToolCall.ToolCall => ({
  id,
  name: "charge",
  arguments: args as Record<string, unknown>
})

const hostileArguments: ReadonlyArray<readonly [string, unknown]> = [
  ["null", null],
  ["a string", "charge everything"],
  ["a number", 42],
  ["an array", [1, 2]],
  ["a 10,000-deep value", { amount: deep(10_000) }],
  ["a 2,000-deep array argument", { amount: 1, note: deep(2_000) }],
  ["a proxy that throws", throwingProxy()],
  ["a nested proxy that throws", { amount: 1, note: throwingProxy() }],
  ["a __proto__ key", JSON.parse("{\"amount\":1,\"__proto__\":{\"admin\":true}}") as unknown],
  ["a bigint", { amount: 10n }]
]

const failure = (exit: Exit.Exit<unknown, unknown>): unknown => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  expect(Cause.isDie(exit.cause)).toBe(false)
  return Option.getOrThrow(Cause.failureOption(exit.cause))
}

describe("hostile arguments through every tool middleware", () => {
  const middleware: ReadonlyArray<readonly [string, () => ToolMiddleware]> = [
    ["audit", () => Audit.audit({ store: Audit.memoryStore() })],
    ["idempotent", () => Idempotency.idempotent()],
    ["egress", () => Egress.egress({ allow: ["example.com"] })],
    ["meter", () => Meter.meter({ quotas: [Quota.unsafeMake({ maxRpm: 1000 })] })],
    ["retry", () => Retry.retry({ maxAttempts: 3 })],
    ["telemetry", () => Telemetry.telemetry({ captureContent: true })]
  ]
  for (const [name, make] of middleware) {
    it.effect(`${name}: a typed error for every hostile argument, the tool never runs`, () => {
      const charge = countingTool("charge", { sideEffecting: true })
      return Effect.gen(function*() {
        const invoker = yield* Invoker
        for (const [, args] of hostileArguments) {
          const error = failure(yield* Effect.exit(invoker.tool(hostileCall(args), charge.tool)))
          expect(error instanceof ToolArgumentError || error instanceof ToolDenied).toBe(true)
        }
        expect(charge.count).toBe(0)
        // a 5 MB string is data like any other: the call runs
        expect((yield* invoker.tool(hostileCall({ amount: 1, note: "x".repeat(5_000_000) }), charge.tool)).text).toBe(
          "ok"
        )
        expect(charge.count).toBe(1)
      }).pipe(
        Effect.provide(setup({ toolMiddleware: [make()], tracing: true })),
        Effect.provide(Tracing.recording().layer)
      )
    })
  }
})

describe("audit is written for every call that ran, whatever its arguments", () => {
  it.effect("one record per call, the tenant's storeKey beside its display key, 'unhashable' arguments recorded", () => {
    const store = Audit.memoryStore()
    const charge = countingTool("charge", { sideEffecting: true })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      for (const [, args] of hostileArguments) yield* Effect.exit(invoker.tool(hostileCall(args), charge.tool))
      // a getter that reads once, then throws: the tool runs, the audit's hash cannot read it
      let reads = 0
      const flaky = Object.defineProperty({}, "amount", {
        enumerable: true,
        get: () => {
          if (++reads > 1) throw new Error("second read")
          return 5
        }
      })
      const outcome = yield* invoker.tool(hostileCall(flaky, "c2"), charge.tool)
      expect(outcome.text).toBe("ok")
      expect(charge.count).toBe(1)
      expect(store.records).toHaveLength(hostileArguments.length + 1)
      const ran = store.records.at(-1)!
      expect(ran).toMatchObject({ decision: "executed", callId: "c2", argHash: "unhashable" })
      for (const record of store.records) {
        expect(record.tenant).toBe("[\"acme\",\"eu\",null,null]")
      }
      expect(store.records.find((r) => r.callId === "c1" && r.argHash === CanonicalJson.hash({ amount: deep(10_000) })))
        .toBeDefined()
    }).pipe(
      Effect.provide(setup({ toolMiddleware: [Audit.audit({ store })], scope: { orgId: "acme", domainId: "eu" } }))
    )
  })

  it.effect("tenants whose display keys collide are told apart in the record", () => {
    const store = Audit.memoryStore()
    const charge = countingTool("charge", { sideEffecting: false })
    const runIn = (scope: { readonly orgId?: string; readonly domainId?: string }) =>
      Effect.flatMap(Invoker, (invoker) => invoker.tool(hostileCall({ amount: 1 }), charge.tool)).pipe(
        Effect.provide(setup({ toolMiddleware: [Audit.audit({ store })], scope }))
      )
    return Effect.gen(function*() {
      yield* runIn({ orgId: "acme:dom7" })
      yield* runIn({ orgId: "acme", domainId: "7:domNone" })
      const [a, b] = store.records
      expect(Scope.make({ orgId: "acme:dom7" }).key).toBe(Scope.make({ orgId: "acme", domainId: "7:domNone" }).key)
      expect(a!.tenant).not.toBe(b!.tenant)
      expect(a!.tenant).toBe(Scope.make({ orgId: "acme:dom7" }).storeKey)
    })
  })
})

describe("what each middleware does with arguments it cannot read", () => {
  it.effect("idempotency refuses the call (it cannot be deduplicated), naming where", () => {
    const charge = countingTool("charge", { sideEffecting: true })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      const error = failure(
        yield* Effect.exit(invoker.tool(hostileCall({ amount: 1, note: throwingProxy() }), charge.tool))
      )
      expect(error).toBeInstanceOf(ToolDenied)
      expect((error as ToolDenied).message).toBe("cannot write the value at note as canonical JSON: Error: trap")
      expect(charge.count).toBe(0)
      // non-object arguments hash like any value (no WeakMap crash), then the tool rejects them
      expect(failure(yield* Effect.exit(invoker.tool(hostileCall(7), charge.tool)))).toBeInstanceOf(ToolArgumentError)
    }).pipe(Effect.provide(setup({ toolMiddleware: [Idempotency.idempotent()] })))
  })

  it.effect("telemetry records a note instead of the arguments", () => {
    const tracer = Tracing.recording()
    const charge = countingTool("charge", { sideEffecting: false })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      yield* Effect.exit(invoker.tool(hostileCall({ note: throwingProxy() }), charge.tool))
      const span = tracer.one("execute_tool charge")
      expect(span.attributes.get("gen_ai.tool.call.arguments")).toBe(
        "[arguments not recorded: cannot write the value at note as canonical JSON: Error: trap]"
      )
    }).pipe(
      Effect.provide(setup({ toolMiddleware: [Telemetry.telemetry({ captureContent: true })], tracing: true })),
      Effect.provide(tracer.layer)
    )
  })

  it.effect("egress: the URL the tool gets is the URL it checked (a getter cannot swap it)", () => {
    const seen: Array<unknown> = []
    const fetchUrl = countingTool("fetch_url", { sideEffecting: false, urlArg: "url" }, (_n, args) => {
      seen.push(args["url"])
      return "fetched"
    })
    let reads = 0
    const swapping = Object.defineProperty({}, "url", {
      enumerable: true,
      get: () => (++reads === 1 ? "https://api.example.com/" : "https://evil.com/")
    })
    const unreadable = Object.defineProperty({ url: "https://api.example.com/" }, "token", {
      enumerable: true,
      get: () => {
        throw new Error("no")
      }
    })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      expect((yield* invoker.tool({ id: "c1", name: "fetch_url", arguments: swapping }, fetchUrl.tool)).text).toBe(
        "fetched"
      )
      expect(seen).toEqual(["https://api.example.com/"])
      expect(reads).toBe(1)
      const error = failure(
        yield* Effect.exit(invoker.tool({ id: "c2", name: "fetch_url", arguments: unreadable }, fetchUrl.tool))
      )
      expect(error).toStrictEqual(
        new ToolDenied({
          toolName: "fetch_url",
          reason: "egress",
          message: "egress: argument 'token' cannot be read (blocked)"
        })
      )
      const root = failure(
        yield* Effect.exit(
          invoker.tool({ id: "c3", name: "fetch_url", arguments: throwingProxy() as never }, fetchUrl.tool)
        )
      )
      expect((root as ToolDenied).message).toBe("egress: the arguments cannot be read (blocked)")
      for (const args of [null, 5, ["https://api.example.com/"]]) {
        const denied = failure(
          yield* Effect.exit(invoker.tool({ id: "c4", name: "fetch_url", arguments: args as never }, fetchUrl.tool))
        )
        expect((denied as ToolDenied).message).toBe("egress URL argument 'url' is missing or not a string (blocked)")
      }
      expect(fetchUrl.count).toBe(1)
    }).pipe(Effect.provide(setup({ toolMiddleware: [Egress.egress({ allow: ["example.com"] })] })))
  })

  it.effect("memoize: a 10,000-deep tool call in the transcript is a key like any other; a request it cannot read is not cached", () => {
    const llm = FakeLLM.replying()
    const transcript = (args: unknown) => ({
      model: "m",
      messages: [
        Message.user("hi"),
        Message.assistant("", [{ id: "t1", name: "charge", arguments: args as Record<string, unknown> }])
      ],
      tools: []
    })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      yield* invoker.chat(transcript({ a: deep(10_000) }))
      yield* invoker.chat(transcript({ a: deep(10_000) }))
      expect(llm.calls).toBe(1) // the second was a cache hit
      yield* invoker.chat(transcript({ a: throwingProxy() }))
      yield* invoker.chat(transcript({ a: throwingProxy() }))
      expect(llm.calls).toBe(3) // never cached, never a crash
    }).pipe(
      Effect.provide(
        setup({
          chatModel: llm.layer,
          chatMiddleware: [Memoize.memoize(), Telemetry.telemetry({ captureContent: true })],
          tracing: true
        })
      )
    )
  })
})
