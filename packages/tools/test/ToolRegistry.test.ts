/**
 * `ToolRegistry` (spec-tools-testing §3 and the seed's "Collecting tools").
 */
import { RunContext, ToolDefinitionError, ToolNotFoundError } from "@agentkit/core"
import { asTool, Tool, ToolRegistry } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Schema } from "effect"

const DESCRIPTION = "A test tool with a description long enough to pass."
const RunContextLayer = RunContext.layer()

const make = (name: string, reply = name, sideEffecting = false) =>
  Tool.make(name, { description: DESCRIPTION, parameters: { id: Schema.String }, sideEffecting, handler: () => reply })

const lookupOrder = make("lookup_order")
const cancelOrder = make("cancel_order", "cancel_order", true)

const duplicateText = (name: string) =>
  `ToolRegistry: tool '${name}' already registered. Pass { replace: true } to swap deliberately.`

const thrown = (f: () => unknown): unknown => {
  try {
    f()
  } catch (error) {
    return error
  }
  throw new Error("expected a throw")
}

describe("ToolRegistry", () => {
  it("fromTools: names sorted, schemas in that order, tools in insertion order", () => {
    const registry = ToolRegistry.fromTools([lookupOrder, cancelOrder])
    expect(registry.names()).toEqual(["cancel_order", "lookup_order"])
    expect(registry.schemas()).toHaveLength(2)
    expect(registry.schemas()).toEqual([cancelOrder.schema, lookupOrder.schema])
    expect(registry.tools()).toEqual([lookupOrder, cancelOrder])
    expect(registry.get("lookup_order").name).toBe("lookup_order")
    expect(registry.get("lookup_order")).toBe(lookupOrder)
  })

  it("names are sorted by code point, never by locale", () => {
    const registry = ToolRegistry.fromTools([make("b"), make("B"), make("a"), make("_z"), make("A-1")])
    expect(registry.names()).toEqual(["A-1", "B", "_z", "a", "b"])
    expect(registry.schemas().map((s) => s.name)).toEqual(["A-1", "B", "_z", "a", "b"])
  })

  it("the lists it returns cannot be mutated", () => {
    const registry = ToolRegistry.fromTools([lookupOrder, cancelOrder])
    expect(() => (registry.names() as Array<string>).push("x")).toThrow(TypeError)
    expect(() => (registry.tools() as Array<unknown>).pop()).toThrow(TypeError)
    expect(() => (registry.schemas() as Array<unknown>).reverse()).toThrow(TypeError)
  })

  it("the empty registry has nothing", () => {
    expect(ToolRegistry.empty.names()).toEqual([])
    expect(ToolRegistry.empty.schemas()).toEqual([])
    expect(ToolRegistry.fromTools([]).tools()).toEqual([])
  })

  it("registering a duplicate name throws ToolDefinitionError with the pinned text", () => {
    const registry = ToolRegistry.fromTools([lookupOrder])
    const error = thrown(() => registry.register(make("lookup_order", "other")))
    expect(error).toBeInstanceOf(ToolDefinitionError)
    expect((error as ToolDefinitionError).message).toBe(duplicateText("lookup_order"))
    expect(() => registry.register(lookupOrder)).toThrow(duplicateText("lookup_order"))
  })

  it("fromTools with two tools of one name throws the same error", () => {
    const error = thrown(() => ToolRegistry.fromTools([make("x"), make("x", "second")]))
    expect(error).toBeInstanceOf(ToolDefinitionError)
    expect((error as ToolDefinitionError).message).toBe(duplicateText("x"))
  })

  it("`replace: false` is the same as leaving it out", () => {
    expect(() => ToolRegistry.fromTools([make("x")]).register(make("x"), { replace: false })).toThrow(
      duplicateText("x")
    )
  })

  it.effect("replace swaps the tool in place, returns a new registry and leaves the old one unchanged", () =>
    Effect.gen(function*() {
      const a = make("alpha", "old alpha")
      const b = make("beta")
      const c = make("gamma")
      const before = ToolRegistry.fromTools([a, b, c])
      const replacement = make("alpha", "new alpha")
      const after = before.register(replacement, { replace: true })
      expect(after).not.toBe(before)
      expect(after.get("alpha")).toBe(replacement)
      expect(after.tools()).toEqual([replacement, b, c])
      expect(after.names()).toEqual(["alpha", "beta", "gamma"])
      // The old registry still has the old tool.
      expect(before.get("alpha")).toBe(a)
      expect(before.tools()).toEqual([a, b, c])
      expect(yield* after.get("alpha").run({ id: "1" })).toBe("new alpha")
    }).pipe(Effect.provide(RunContextLayer)))

  it("replace of a new name appends it", () => {
    const registry = ToolRegistry.fromTools([make("b")]).register(make("a"), { replace: true })
    expect(registry.tools().map((t) => t.name)).toEqual(["b", "a"])
    expect(registry.names()).toEqual(["a", "b"])
  })

  it("register returns a new registry and never changes the receiver", () => {
    const one = ToolRegistry.fromTools([lookupOrder])
    const two = one.register(cancelOrder)
    expect(one.names()).toEqual(["lookup_order"])
    expect(two.names()).toEqual(["cancel_order", "lookup_order"])
    expect(ToolRegistry.empty.names()).toEqual([])
  })

  it("get of an unknown name throws ToolNotFoundError listing the available tools", () => {
    const registry = ToolRegistry.fromTools([lookupOrder, cancelOrder])
    const error = thrown(() => registry.get("nope"))
    expect(error).toBeInstanceOf(ToolNotFoundError)
    expect(error).toMatchObject({
      _tag: "ToolNotFoundError",
      name: "nope",
      available: ["cancel_order", "lookup_order"]
    })
    expect((error as ToolNotFoundError).message).toBe("no tool 'nope'. Available tools: cancel_order, lookup_order.")
    expect((thrown(() => ToolRegistry.empty.get("x")) as ToolNotFoundError).message).toBe(
      "no tool 'x'. Available tools: (none)."
    )
  })

  it("getOption finds a tool or returns None", () => {
    const registry = ToolRegistry.fromTools([lookupOrder, cancelOrder])
    expect(registry.getOption("cancel_order")).toEqual(Option.some(cancelOrder))
    expect(Option.isNone(registry.getOption("nope"))).toBe(true)
    // Inherited object keys are not tools.
    expect(Option.isNone(registry.getOption("constructor"))).toBe(true)
    expect(Option.isNone(registry.getOption("__proto__"))).toBe(true)
  })

  it("only tools can be registered", () => {
    const fake = { name: "fake", schema: lookupOrder.schema, run: lookupOrder.run } as never
    expect(thrown(() => ToolRegistry.fromTools([fake]))).toBeInstanceOf(ToolDefinitionError)
    expect(thrown(() => ToolRegistry.empty.register(null as never))).toBeInstanceOf(ToolDefinitionError)
  })

  it("holds asTool tools beside plain ones", () => {
    const research = asTool({ run: () => Effect.succeed("x") }, { name: "research", description: DESCRIPTION })
    const registry = ToolRegistry.fromTools([lookupOrder, research])
    expect(registry.names()).toEqual(["lookup_order", "research"])
    expect(registry.get("research").delegating).toBe(true)
  })

  it("is pipeable and recognised by isToolRegistry", () => {
    const registry = ToolRegistry.fromTools([lookupOrder])
    expect(registry.pipe((r) => r.names())).toEqual(["lookup_order"])
    expect(ToolRegistry.isToolRegistry(registry)).toBe(true)
    expect(ToolRegistry.isToolRegistry({ names: () => [] })).toBe(false)
  })
})
