import {
  BudgetExceeded,
  Cancelled,
  Chat,
  ConfigurationError,
  Message,
  PythonText,
  Scope,
  ToolArgumentError,
  ToolCall,
  ToolExecutionError,
  ToolNotFoundError,
  ToolShapeError,
  ToolTimeoutError,
  Usage
} from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Schema } from "effect"

describe("Scope", () => {
  it("key renders absent parts as None, like the Python keys", () => {
    expect(Scope.make().key).toBe("orgNone:domNone")
    expect(Scope.empty.key).toBe("orgNone:domNone")
    expect(Scope.make({ orgId: 7, domainId: 42 }).key).toBe("org7:dom42")
    expect(Scope.make({ orgId: 1 }).key).toBe("org1:domNone")
    expect(Scope.make({ domainId: 3 }).key).toBe("orgNone:dom3")
    expect(Scope.make({ orgId: "acme", domainId: "eu" }).key).toBe("orgacme:domeu")
  })

  it("0 is a value, not an absent part", () => {
    expect(Scope.make({ orgId: 0, domainId: 0 }).key).toBe("org0:dom0")
  })

  it("user and session do not enter the key", () => {
    const scope = Scope.make({ orgId: 7, domainId: 42, userId: "u-1", sessionId: "s-1" })
    expect(scope.key).toBe("org7:dom42")
    expect(scope.userId).toBe("u-1")
    expect(scope.sessionId).toBe("s-1")
  })
})

describe("Scope.storeKey", () => {
  type Fields = Exclude<Scope.Fields, void | undefined>
  const storeKey = (fields: Fields) => Scope.make(fields).storeKey

  it("is the JSON text of the four parts, an absent part null", () => {
    expect(Scope.empty.storeKey).toBe("[null,null,null,null]")
    expect(storeKey({ orgId: 7, domainId: 42, userId: "u-1", sessionId: "s-1" })).toBe("[7,42,\"u-1\",\"s-1\"]")
    expect(storeKey({ orgId: "acme" })).toBe("[\"acme\",null,null,null]")
  })

  it("keeps apart the scopes whose display keys collide (the issue's cases)", () => {
    // `{ orgId: "None" }` and `{}` both read orgNone:domNone
    expect(Scope.make({ orgId: "None" }).key).toBe(Scope.empty.key)
    expect(storeKey({ orgId: "None" })).not.toBe(Scope.empty.storeKey)
    // "acme:dom7" + absent domain vs "acme" + "7:domNone": the same display text
    const a = Scope.make({ orgId: "acme:dom7" })
    const b = Scope.make({ orgId: "acme", domainId: "7:domNone" })
    expect(a.key).toBe(b.key)
    expect(a.storeKey).not.toBe(b.storeKey)
    // a number and its string
    expect(Scope.make({ orgId: 1 }).key).toBe(Scope.make({ orgId: "1" }).key)
    expect(storeKey({ orgId: 1 })).not.toBe(storeKey({ orgId: "1" }))
    expect(storeKey({ domainId: 1 })).not.toBe(storeKey({ domainId: "1" }))
    // user and session are part of it
    expect(storeKey({ orgId: 1, userId: "u" })).not.toBe(storeKey({ orgId: 1 }))
    expect(storeKey({ userId: "x" })).not.toBe(storeKey({ sessionId: "x" }))
  })

  it("is injective: distinct scopes never share a store key (property)", () => {
    const id = fc.oneof(
      fc.constant(undefined),
      fc.integer({ min: -3, max: 3 }),
      fc.double(),
      fc.constantFrom("", "1", "None", "null", "NaN", "Infinity", ":", "acme:dom7", "7:domNone", "\"", "\\", "[", ","),
      fc.string()
    )
    const text = fc.oneof(fc.constant(undefined), fc.constantFrom("", "null", "\"", ","), fc.string())
    const scope = fc.record({ orgId: id, domainId: id, userId: text, sessionId: text }).map((fields) =>
      Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Fields
    )
    // Same tenant exactly when every part is the same value (a number and a string never are;
    // 0 and -0 are the same number; NaN is NaN).
    const samePart = (a: unknown, b: unknown) => a === b || (Number.isNaN(a) && Number.isNaN(b))
    const same = (a: Fields, b: Fields) =>
      (["orgId", "domainId", "userId", "sessionId"] as const).every((k) => samePart(a[k], b[k]))
    fc.assert(
      fc.property(scope, scope, (a, b) => {
        expect(storeKey(a) === storeKey(b)).toBe(same(a, b))
      }),
      { numRuns: 5000 }
    )
  })

  it("is computed once per scope", () => {
    const scope = Scope.make({ orgId: 7 })
    expect(scope.storeKey).toBe(scope.storeKey)
    expect(Object.keys(scope)).toEqual(["orgId"])
  })
})

describe("Usage", () => {
  it("make fills missing fields with 0; zero is all zeros", () => {
    expect(Usage.make({ inputTokens: 3 })).toEqual({
      inputTokens: 3,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      costUsd: 0
    })
    expect(Usage.zero).toEqual(Usage.make())
  })

  it("add sums every field; money exactly, in integer nano-USD (no rounding to 6 places)", () => {
    const total = Usage.add(
      Usage.make({ inputTokens: 10, outputTokens: 1, cacheReadTokens: 2, cacheWriteTokens: 3, costUsd: 0.1 }),
      Usage.make({ inputTokens: 5, outputTokens: 4, cacheReadTokens: 20, cacheWriteTokens: 30, costUsd: 0.2 })
    )
    expect(total).toEqual({ inputTokens: 15, outputTokens: 5, cacheReadTokens: 22, cacheWriteTokens: 33, costUsd: 0.3 })
    expect(Usage.add(Usage.make({ costUsd: 0.0000004 }), Usage.make({ costUsd: 0.0000004 })).costUsd).toBe(0.0000008)
    expect(Usage.add(Usage.make({ costUsd: 0.0000001 }), Usage.make({ costUsd: 0.0000002 })).costUsd).toBe(0.0000003)
    let sum = Usage.zero
    for (let i = 0; i < 1000; i++) sum = Usage.add(sum, Usage.make({ costUsd: 0.0000125 }))
    expect(sum.costUsd).toBe(0.0125)
    expect(Usage.nanos(sum)).toBe(12_500_000)
  })

  it("round6", () => {
    expect(Usage.round6(0.1 + 0.2)).toBe(0.3)
    expect(Usage.round6(0.0000005)).toBe(0.000001)
    expect(Usage.round6(1.23456789)).toBe(1.234568)
  })

  it("totalTokens is input + output (cache tokens excluded)", () => {
    expect(
      Usage.totalTokens(Usage.make({ inputTokens: 100, outputTokens: 20, cacheReadTokens: 999, cacheWriteTokens: 7 }))
    ).toBe(120)
  })

  it("the schema decodes a usage record", () => {
    const decoded = Schema.decodeUnknownSync(Usage.Usage)({
      inputTokens: 10,
      outputTokens: 5,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      costUsd: 0.0001
    })
    expect(decoded.costUsd).toBe(0.0001)
  })
})

describe("Message", () => {
  it("constructors", () => {
    expect(Message.system("Be brief.")).toEqual({ role: "system", content: "Be brief." })
    expect(Message.user("hello")).toEqual({ role: "user", content: "hello" })
    expect(Message.assistant("Order A-771 shipped.")).toEqual({
      role: "assistant",
      content: "Order A-771 shipped.",
      toolCalls: []
    })
    const calls = [ToolCall.make({ id: "c1", name: "lookup_order", arguments: { order_id: "A-771" } })]
    expect(Message.assistant("", calls)).toEqual({ role: "assistant", content: "", toolCalls: calls })
    expect(Message.toolResult({ toolCallId: "c1", name: "lookup_order", content: "shipped" })).toEqual({
      role: "tool",
      toolCallId: "c1",
      name: "lookup_order",
      content: "shipped",
      isError: false
    })
    expect(Message.toolResult({ toolCallId: "c1", name: "x", content: "ERROR", isError: true }).isError).toBe(true)
  })

  it("every constructed message decodes with the Message schema", () => {
    const decode = Schema.decodeUnknownSync(Message.Message)
    const messages: ReadonlyArray<Message.Message> = [
      Message.system("s"),
      Message.user("u"),
      Message.assistant("a", [{ id: "c1", name: "t", arguments: {} }]),
      Message.toolResult({ toolCallId: "c1", name: "t", content: "r" })
    ]
    for (const message of messages) expect(decode(message)).toEqual(message)
    expect(() => decode({ role: "robot", content: "x" })).toThrow()
  })

  it("ChatRequest and ChatResponse schemas accept the values the pipelines pass", () => {
    const request = Schema.decodeUnknownSync(Chat.ChatRequest)({
      model: "m",
      messages: [Message.user("hi")],
      tools: []
    })
    expect(request.model).toBe("m")
    expect(Schema.is(Chat.FinishReason)("tool_use")).toBe(true)
    expect(Schema.is(Chat.FinishReason)("stop")).toBe(false)
  })
})

describe("error texts", () => {
  it("ToolArgumentError: the seed text (unexpected and missing)", () => {
    const error = new ToolArgumentError({
      toolName: "cancel_order",
      unexpected: ["order"],
      missing: ["order_id"],
      invalid: [],
      accepted: ["order_id", "reason"]
    })
    expect(error.message).toBe(
      "tool 'cancel_order' call rejected: unexpected argument(s) ['order']; missing required argument(s) ['order_id']. Accepted arguments: ['order_id', 'reason']"
    )
    expect(error._tag).toBe("ToolArgumentError")
  })

  it("ToolArgumentError: unexpected only, missing only", () => {
    expect(
      new ToolArgumentError({ toolName: "t", unexpected: ["a", "b"], missing: [], invalid: [], accepted: ["x"] })
        .message
    ).toBe("tool 't' call rejected: unexpected argument(s) ['a', 'b']. Accepted arguments: ['x']")
    expect(
      new ToolArgumentError({ toolName: "t", unexpected: [], missing: ["x"], invalid: [], accepted: ["x", "y"] })
        .message
    ).toBe("tool 't' call rejected: missing required argument(s) ['x']. Accepted arguments: ['x', 'y']")
  })

  it("ToolArgumentError: invalid values only when no key is wrong", () => {
    expect(
      new ToolArgumentError({
        toolName: "order",
        unexpected: [],
        missing: [],
        invalid: ["qty: Expected number, actual \"x\""],
        accepted: ["qty", "sku"]
      }).message
    ).toBe(
      `tool 'order' call rejected: invalid argument(s) ['qty']: qty: Expected number, actual "x". Accepted arguments: ['qty', 'sku']`
    )

    expect(
      new ToolArgumentError({
        toolName: "order",
        unexpected: ["extra"],
        missing: [],
        invalid: ["qty: Expected number, actual \"x\""],
        accepted: ["qty"]
      }).message
    ).toBe("tool 'order' call rejected: unexpected argument(s) ['extra']. Accepted arguments: ['qty']")
  })

  it("ToolArgumentError: several invalid values, names sorted and de-duplicated, nested paths named by their argument", () => {
    expect(
      new ToolArgumentError({
        toolName: "order",
        unexpected: [],
        missing: [],
        invalid: [
          "sku: Expected string, actual 1",
          "items.0.n: Expected number, actual null",
          "items.1.n: Expected number, actual null"
        ],
        accepted: ["items", "sku"]
      }).message
    ).toBe(
      "tool 'order' call rejected: invalid argument(s) ['items', 'sku']: sku: Expected string, actual 1; items.0.n: Expected number, actual null; items.1.n: Expected number, actual null. Accepted arguments: ['items', 'sku']"
    )
  })

  it("ToolArgumentError: names are quoted the Python way", () => {
    expect(
      new ToolArgumentError({ toolName: "t", unexpected: ["it's"], missing: [], invalid: [], accepted: [] }).message
    ).toBe(`tool 't' call rejected: unexpected argument(s) ["it's"]. Accepted arguments: []`)
  })

  it("ToolNotFoundError", () => {
    expect(new ToolNotFoundError({ name: "x", available: ["a", "b"] }).message).toBe(
      "no tool 'x'. Available tools: a, b."
    )
    expect(new ToolNotFoundError({ name: "x", available: [] }).message).toBe("no tool 'x'. Available tools: (none).")
  })

  it("ToolShapeError, ToolTimeoutError, ToolExecutionError, Cancelled, BudgetExceeded, ConfigurationError", () => {
    expect(new ToolShapeError({ toolName: "quote", expected: "Quote", raw: "oops", errors: [] }).message).toBe(
      "tool 'quote' returned value not matching schema 'Quote'"
    )
    expect(new ToolTimeoutError({ toolName: "slow", timeout: "2 seconds" }).message).toBe(
      "tool 'slow' timed out after 2 seconds"
    )
    expect(new ToolExecutionError({ toolName: "charge", cause: new Error("card declined") }).message).toBe(
      "card declined"
    )
    expect(new ToolExecutionError({ toolName: "charge", cause: "plain text" }).message).toBe("plain text")
    expect(new ToolExecutionError({ toolName: "charge", cause: 42 }).message).toBe("42")
    expect(new Cancelled().message).toBe("run cancelled")
    expect(new BudgetExceeded({ limit: "cost", message: "cost $0.02 > $0.015" }).message).toBe("cost $0.02 > $0.015")
    expect(new ConfigurationError({ field: "autonomy", message: "bad" }).field).toBe("autonomy")
  })

  it.effect("errors are yieldable typed failures", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(new Cancelled())
      expect(error._tag).toBe("Cancelled")
      const caught = yield* new ToolNotFoundError({ name: "x", available: [] }).pipe(
        Effect.catchTag("ToolNotFoundError", (e) => Effect.succeed(e.name))
      )
      expect(caught).toBe("x")
    }))
})

describe("PythonText", () => {
  it("float writes floats like Python's repr", () => {
    expect(PythonText.float(1)).toBe("1.0")
    expect(PythonText.float(0)).toBe("0.0")
    expect(PythonText.float(0.02)).toBe("0.02")
    expect(PythonText.float(0.015)).toBe("0.015")
    expect(PythonText.float(1.5)).toBe("1.5")
    expect(PythonText.float(0.0001)).toBe("0.0001")
    expect(PythonText.float(0.00001)).toBe("1e-05")
    expect(PythonText.float(0.000015)).toBe("1.5e-05")
    expect(PythonText.float(1e16)).toBe("1e+16")
    expect(PythonText.float(-2)).toBe("-2.0")
    expect(PythonText.float(Number.POSITIVE_INFINITY)).toBe("inf")
    expect(PythonText.float(Number.NaN)).toBe("nan")
  })

  it("repr / list / tuple quote like Python's repr; sorted is not locale-aware", () => {
    expect(PythonText.repr("a")).toBe("'a'")
    expect(PythonText.repr("it's")).toBe(`"it's"`)
    expect(PythonText.repr(`it's "x"`)).toBe(`'it\\'s "x"'`)
    expect(PythonText.repr("a\nb")).toBe("'a\\nb'")
    expect(PythonText.list(["a", "b"])).toBe("['a', 'b']")
    expect(PythonText.list([])).toBe("[]")
    expect(PythonText.tuple(["http", "https"])).toBe("('http', 'https')")
    expect(PythonText.tuple(["https"])).toBe("('https',)")
    expect(PythonText.sorted(["b", "B", "a", "_", "Z"])).toEqual(["B", "Z", "_", "a", "b"])
  })
})

describe("PythonText.list and PythonText.repr", () => {
  it("quotes like Python's repr of a list of strings", () => {
    expect(PythonText.list([])).toBe("[]")
    expect(PythonText.list(["order"])).toBe("['order']")
    expect(PythonText.list(["order_id", "reason"])).toBe("['order_id', 'reason']")
    expect(`unexpected argument(s) ${PythonText.list(["order"])}`).toBe("unexpected argument(s) ['order']")
  })

  it("switches to double quotes for a single quote without a double quote, and escapes otherwise", () => {
    expect(PythonText.repr("it's")).toBe(`"it's"`)
    expect(PythonText.repr(`it's "x"`)).toBe(`'it\\'s "x"'`)
    expect(PythonText.repr(`say "hi"`)).toBe(`'say "hi"'`)
    expect(PythonText.repr("a\\b")).toBe(`'a\\\\b'`)
    expect(PythonText.list(["it's", "a\\b"])).toBe(`["it's", 'a\\\\b']`)
  })

  it("escapes control and non-printable characters as Python does", () => {
    expect(PythonText.repr("a\nb\tc\r")).toBe(`'a\\nb\\tc\\r'`)
    expect(PythonText.repr("\u0000\u007f")).toBe(`'\\x00\\x7f'`)
    expect(PythonText.repr("\u00a0\u00ad")).toBe(`'\\xa0\\xad'`)
    expect(PythonText.repr("\u2028\u200b")).toBe(`'\\u2028\\u200b'`)
    expect(PythonText.repr("\u{E0001}")).toBe(`'\\U000e0001'`)
    expect(PythonText.repr("\ud800")).toBe(`'\\ud800'`)
    expect(PythonText.repr("é ü 日本 \u{1F600}")).toBe(`'é ü 日本 \u{1F600}'`)
  })
})
