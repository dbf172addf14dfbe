/**
 * `FakeTool` (spec-tools-testing §5.4, DESIGN "Testing"): a real tool that records its calls and
 * plays responses.
 */
import { RunContext, ToolArgumentError, ToolDefinitionError, ToolExecutionError } from "@agentkit/core"
import { FakeTool } from "@agentkit/testing"
import { Tool, ToolRegistry } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Data, Effect } from "effect"

const runLayer = RunContext.layer()

class Flaky extends Data.TaggedError("Flaky")<{ readonly message: string }> {}

describe("FakeTool.make", () => {
  it("is a real, frozen tool with a default description and flags", () => {
    const tool = FakeTool.make("search")
    expect(Tool.isTool(tool)).toBe(true)
    expect(Object.isFrozen(tool)).toBe(true)
    expect(tool.name).toBe("search")
    expect(tool.description).toBe("A fake tool for unit tests that records every call it receives.")
    expect([tool.sideEffecting, tool.idempotent, tool.requiresApproval, tool.delegating]).toEqual([
      false,
      false,
      false,
      false
    ])
    expect(tool.caps).toEqual([])
    expect(tool.calls).toEqual([])
    // it accepts any arguments: a rest record
    expect(JSON.stringify(tool.schema)).toBe(
      "{\"name\":\"search\",\"description\":\"A fake tool for unit tests that records every call it receives.\",\"parameters\":{\"type\":\"object\",\"properties\":{},\"required\":[],\"additionalProperties\":true}}"
    )
  })

  it("passes the flags and description through", () => {
    const tool = FakeTool.make("pay", {
      description: "Charge the customer's card; there is no undo at all.",
      sideEffecting: true,
      idempotent: false,
      requiresApproval: true,
      caps: ["egress"]
    })
    expect(tool.description).toBe("Charge the customer's card; there is no undo at all.")
    expect([tool.sideEffecting, tool.idempotent, tool.requiresApproval]).toEqual([true, false, true])
    expect(tool.caps).toEqual(["egress"])
  })

  it("obeys Tool.make's rules: the name pattern and the 30-character description", () => {
    expect(() => FakeTool.make("has space")).toThrow(ToolDefinitionError)
    expect(() => FakeTool.make("x".repeat(65))).toThrow(ToolDefinitionError)
    expect(() => FakeTool.make("search", { description: "searches" })).toThrow(
      "tool 'search' needs a description of at least 30 characters so the model can understand it; got 8 chars: 'searches'"
    )
    expect(() => FakeTool.make("search", { caps: ["teleport" as never] })).toThrow(ToolDefinitionError)
  })

  it("registers in a ToolRegistry like any tool (and a duplicate name is refused)", () => {
    const registry = ToolRegistry.fromTools([FakeTool.make("b"), FakeTool.make("a")])
    expect(registry.names()).toEqual(["a", "b"])
    expect(() => registry.register(FakeTool.make("a"))).toThrow(ToolDefinitionError)
  })

  it.effect("records the arguments of every call, in order; the default response is `ok`", () =>
    Effect.gen(function*() {
      const tool = FakeTool.make("t")
      expect(yield* tool.run({ x: 1 })).toBe("ok")
      expect(yield* tool.run({ x: 2 })).toBe("ok")
      expect(yield* tool.run({ x: 3, nested: { deep: true } })).toBe("ok")
      expect(tool.calls).toEqual([{ x: 1 }, { x: 2 }, { x: 3, nested: { deep: true } }])
    }).pipe(Effect.provide(runLayer)))

  it.effect("a list of responses is played in order, the last one repeating", () =>
    Effect.gen(function*() {
      const tool = FakeTool.make("t", { responses: ["first", { n: 2 }, "last"] })
      const out: Array<unknown> = []
      for (let i = 0; i < 5; i++) out.push(yield* tool.run({}))
      expect(out).toEqual(["first", { n: 2 }, "last", "last", "last"])
      expect(tool.calls).toHaveLength(5)
    }).pipe(Effect.provide(runLayer)))

  it.effect("a function gets the arguments and the call number (from 1)", () =>
    Effect.gen(function*() {
      const tool = FakeTool.make("t", { responses: (args, n) => `call ${n}: ${String(args["q"])}` })
      expect(yield* tool.run({ q: "a" })).toBe("call 1: a")
      expect(yield* tool.run({ q: "b" })).toBe("call 2: b")
    }).pipe(Effect.provide(runLayer)))

  it.effect("a function may return a Promise (awaited) or an Effect (run, with its typed failure)", () =>
    Effect.gen(function*() {
      const promised = FakeTool.make("p", { responses: (args) => Promise.resolve(`async ${String(args["q"])}`) })
      expect(yield* promised.run({ q: "x" })).toBe("async x")

      const effectful = FakeTool.make("e", {
        responses: (
          _args,
          n
        ) => (n === 1 ? Effect.fail(new Flaky({ message: "try again" })) : Effect.succeed("recovered"))
      })
      const error = yield* Effect.flip(effectful.run({}))
      expect(error).toBeInstanceOf(Flaky)
      expect(yield* effectful.run({})).toBe("recovered")
      expect(effectful.calls).toHaveLength(2)
    }).pipe(Effect.provide(runLayer)))

  it.effect("a function that throws, or a Promise that rejects, is a ToolExecutionError (the call is recorded)", () =>
    Effect.gen(function*() {
      const throwing = FakeTool.make("t", {
        responses: () => {
          throw new Error("boom")
        }
      })
      const thrown = (yield* Effect.flip(throwing.run({ a: 1 }))) as ToolExecutionError
      expect(thrown).toBeInstanceOf(ToolExecutionError)
      expect(thrown.message).toBe("boom")
      expect(throwing.calls).toEqual([{ a: 1 }])

      const rejecting = FakeTool.make("r", { responses: () => Promise.reject(new Error("down")) })
      const rejected = (yield* Effect.flip(rejecting.run({}))) as ToolExecutionError
      expect(rejected).toBeInstanceOf(ToolExecutionError)
      expect(rejected.message).toBe("down")
    }).pipe(Effect.provide(runLayer)))

  it.effect("a non-object argument is refused before the tool runs (nothing is recorded)", () =>
    Effect.gen(function*() {
      const tool = FakeTool.make("t")
      const error = yield* Effect.flip(tool.run("not an object"))
      expect(error).toBeInstanceOf(ToolArgumentError)
      expect(tool.calls).toEqual([])
    }).pipe(Effect.provide(runLayer)))

  it.effect("the recorded arguments are the frozen ones the handler got", () =>
    Effect.gen(function*() {
      const tool = FakeTool.make("t")
      yield* tool.run({ list: [1, 2], nested: { deep: "x" } })
      const recorded = tool.calls[0] as { list: Array<number>; nested: { deep: string } }
      expect(recorded).toEqual({ list: [1, 2], nested: { deep: "x" } })
      expect(Object.isFrozen(recorded)).toBe(true)
      expect(Object.isFrozen(recorded.list)).toBe(true)
      expect(Object.isFrozen(recorded.nested)).toBe(true)
      expect(() => recorded.list.push(3)).toThrow(TypeError)
    }).pipe(Effect.provide(runLayer)))
})
