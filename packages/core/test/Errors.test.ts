import {
  AlreadyDecided,
  approvalDeniedText,
  BudgetError,
  BudgetExceeded,
  Cancelled,
  CanonicalJson,
  ChatModelError,
  CheckpointStoreError,
  ConfigurationError,
  DEFECT_TEXT,
  DepthExceeded,
  endsRun,
  errorMessage,
  errorType,
  ExecutionLedgerError,
  FAILURE_TEXT_MAX_BYTES,
  invalidArgumentFields,
  isAgentkitError,
  isBudgetExceeded,
  isCancelled,
  isChatModelError,
  isDepthExceeded,
  LeaseHeld,
  LedgerConflict,
  PythonText,
  RecordedFailure,
  RunExists,
  RunFinished,
  RunNotFound,
  StaleLease,
  statusReason,
  ToolArgumentError,
  ToolDenied,
  ToolExecutionError,
  toolFailureText,
  ToolInDoubt,
  ToolNotFoundError,
  ToolShapeError,
  ToolTimeoutError,
  unknownToolText,
  Utf8,
  VersionConflict
} from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Schema } from "effect"

describe("errors: TypeId and guards", () => {
  it("every core error is an agentkit error; other values are not", () => {
    const errors = [
      new BudgetExceeded({ limit: "cost", message: "cost $0.02 > $0.015" }),
      new DepthExceeded({ depth: 5, maxDepth: 4 }),
      new Cancelled(),
      new ChatModelError({ reason: "timeout", retryable: true, message: "timed out" }),
      new ConfigurationError({ field: "f", message: "bad" }),
      new ToolDenied({ toolName: "t", reason: "egress", message: "blocked" })
    ]
    for (const error of errors) expect(isAgentkitError(error)).toBe(true)
    for (const value of [new Error("x"), { _tag: "BudgetExceeded" }, "BudgetExceeded", null, undefined]) {
      expect(isAgentkitError(value)).toBe(false)
    }
  })

  it("the per-class guards read the tag of an agentkit error only (a look-alike is refused)", () => {
    expect(isBudgetExceeded(new BudgetExceeded({ limit: "tokens", message: "m" }))).toBe(true)
    expect(isBudgetExceeded({ _tag: "BudgetExceeded", limit: "tokens", message: "m" })).toBe(false)
    expect(isDepthExceeded(new DepthExceeded({ depth: 2, maxDepth: 1 }))).toBe(true)
    expect(isDepthExceeded(new BudgetExceeded({ limit: "tokens", message: "m" }))).toBe(false)
    expect(isCancelled(new Cancelled())).toBe(true)
    expect(isChatModelError(new ChatModelError({ reason: "auth", retryable: false, message: "401" }))).toBe(true)
  })

  it("endsRun: cancellation and every budget ceiling; a depth overflow goes back to the model", () => {
    expect(endsRun(new Cancelled())).toBe(true)
    expect(endsRun(new BudgetExceeded({ limit: "quota", message: "quota" }))).toBe(true)
    expect(endsRun(new DepthExceeded({ depth: 5, maxDepth: 4 }))).toBe(false)
    expect(endsRun(new ToolDenied({ toolName: "t", reason: "policy", message: "no" }))).toBe(false)
  })

  it("BudgetExceeded no longer accepts a depth limit (DepthExceeded is its own error)", () => {
    expect(() => new BudgetExceeded({ limit: "depth" as never, message: "agent depth 5 > max_depth 4" })).toThrow()
  })
})

describe("errors: the stored ones travel as Schema values, texts intact", () => {
  const roundTrip = <A extends { readonly message: string }, I>(schema: Schema.Schema<A, I>, error: A) => {
    const encoded = Schema.encodeSync(schema)(error)
    const wire = JSON.parse(JSON.stringify(encoded)) as unknown
    const decoded = Schema.decodeUnknownSync(schema)(wire)
    expect(decoded).toBeInstanceOf(error.constructor as never)
    expect(decoded.message).toBe(error.message)
    return decoded
  }

  it("BudgetExceeded, DepthExceeded, Cancelled, ToolDenied, ToolTimeoutError, ToolNotFoundError, ToolArgumentError", () => {
    roundTrip(BudgetExceeded, new BudgetExceeded({ limit: "cost", message: "cost $0.02 > $0.015" }))
    expect(roundTrip(DepthExceeded, new DepthExceeded({ depth: 5, maxDepth: 4 })).message).toBe(
      "agent depth 5 > max_depth 4"
    )
    expect(roundTrip(Cancelled, new Cancelled()).message).toBe("run cancelled")
    roundTrip(
      ToolDenied,
      new ToolDenied({ toolName: "fetch_url", reason: "egress", message: "egress to 'evil.com' not allowed" })
    )
    roundTrip(ToolTimeoutError, new ToolTimeoutError({ toolName: "slow", timeout: "2 seconds" }))
    roundTrip(ToolNotFoundError, new ToolNotFoundError({ name: "x", available: ["a", "b"] }))
    const args = new ToolArgumentError({
      toolName: "cancel_order",
      unexpected: ["order"],
      missing: ["order_id"],
      invalid: [],
      accepted: ["order_id", "reason"]
    })
    expect(roundTrip(ToolArgumentError, args).message).toBe(
      "tool 'cancel_order' call rejected: unexpected argument(s) ['order']; missing required argument(s) ['order_id']. Accepted arguments: ['order_id', 'reason']"
    )
  })

  it("ChatModelError keeps retryAfter and a cause of any kind never breaks its encoding", () => {
    const decoded = roundTrip(
      ChatModelError,
      new ChatModelError({
        reason: "rate_limit",
        retryable: true,
        message: "429",
        status: 429,
        retryAfter: Duration.seconds(2),
        cause: new TypeError("socket hang up")
      })
    )
    expect(Duration.toMillis(decoded.retryAfter!)).toBe(2000)
    expect(decoded.cause).toBeInstanceOf(Error)
    expect(decoded.cause).toMatchObject({ name: "TypeError", message: "socket hang up" })
    const circular: Record<string, unknown> = { big: 1n }
    circular.self = circular
    for (const cause of [circular, { big: 10n }, 10n, Symbol.for("x").description, () => 1]) {
      const error = new ChatModelError({ reason: "unknown", retryable: false, message: "odd cause", cause })
      expect(() => JSON.stringify(Schema.encodeSync(ChatModelError)(error))).not.toThrow()
    }
  })

  it("ToolShapeError and ToolExecutionError encode whatever they carry", () => {
    const shape = new ToolShapeError({
      toolName: "quote",
      expected: "Quote",
      raw: { price: 1n },
      errors: ["price: Expected number"]
    })
    expect(() => JSON.stringify(Schema.encodeSync(ToolShapeError)(shape))).not.toThrow()
    const execution = new ToolExecutionError({ toolName: "charge", cause: new Error("card declined") })
    expect(roundTrip(ToolExecutionError, execution).message).toBe("card declined")
  })
})

describe("errors: each concept's union schema decodes its errors back to their classes", () => {
  const wire = <A, I>(schema: Schema.Schema<A, I>, error: A) =>
    JSON.parse(JSON.stringify(Schema.encodeSync(schema)(error))) as unknown

  it("BudgetError: a ceiling and a depth overflow, each its own class, message intact", () => {
    const errors = [
      new BudgetExceeded({ limit: "toolCalls", message: "tool calls 3 > 2" }),
      new DepthExceeded({ depth: 5, maxDepth: 4 })
    ]
    for (const error of errors) {
      const decoded = Schema.decodeUnknownSync(BudgetError)(wire(BudgetError, error))
      expect(decoded).toBeInstanceOf(error.constructor)
      expect(decoded.message).toBe(error.message)
    }
  })

  it("CheckpointStoreError: every compare-and-set outcome, each its own class, message intact", () => {
    const errors = [
      new RunExists({ runId: "run-1" }),
      new RunNotFound({ runId: "run-1" }),
      new StaleLease({ runId: "run-1", token: 1 }),
      new LeaseHeld({ runId: "run-1", owner: "worker-a", expiresAt: 0 }),
      new RunFinished({ runId: "run-1", status: "done" }),
      new VersionConflict({ runId: "run-1", expected: 3, actual: 4 }),
      new AlreadyDecided({ rootRunId: "run-1", pendingId: "p-1", decision: "{}", by: "alice" })
    ]
    for (const error of errors) {
      const decoded = Schema.decodeUnknownSync(CheckpointStoreError)(wire(CheckpointStoreError, error))
      expect(decoded).toBeInstanceOf(error.constructor)
      expect(decoded.message).toBe(error.message)
    }
  })

  it("ExecutionLedgerError: in doubt, recorded failure and conflict, each its own class, message intact", () => {
    const errors = [
      new ToolInDoubt({ key: "run-1/t0/c0", call: { id: "c1", name: "charge", arguments: {} }, claimedAt: 0 }),
      new RecordedFailure({ toolName: "charge", text: "ERROR: tool 'charge' failed: card declined" }),
      new LedgerConflict({ key: "run-1/t0/c0", state: "reclaimed" })
    ]
    for (const error of errors) {
      const decoded = Schema.decodeUnknownSync(ExecutionLedgerError)(wire(ExecutionLedgerError, error))
      expect(decoded).toBeInstanceOf(error.constructor)
      expect(decoded.message).toBe(error.message)
    }
  })

  it("a union refuses another concept's error and a member with a bad field", () => {
    const depth = wire(BudgetError, new DepthExceeded({ depth: 2, maxDepth: 1 }))
    expect(Schema.decodeUnknownEither(CheckpointStoreError)(depth)._tag).toBe("Left")
    expect(Schema.decodeUnknownEither(ExecutionLedgerError)(depth)._tag).toBe("Left")
    expect(Schema.decodeUnknownEither(BudgetError)({ _tag: "BudgetExceeded", limit: "depth", message: "m" })._tag)
      .toBe("Left")
    expect(Schema.decodeUnknownEither(CheckpointStoreError)({ _tag: "RunFinished", runId: "r", status: "paused" })._tag)
      .toBe("Left")
  })
})

describe("errors: the model-visible texts, all in FailureText", () => {
  it("the generic failure text names the type and the message", () => {
    expect(toolFailureText("research", new DepthExceeded({ depth: 5, maxDepth: 4 }))).toBe(
      "ERROR: tool 'research' failed: DepthExceeded: agent depth 5 > max_depth 4"
    )
    expect(toolFailureText("t", new TypeError("bad"))).toBe("ERROR: tool 't' failed: TypeError: bad")
    expect(toolFailureText("t", "plain")).toBe("ERROR: tool 't' failed: Error: plain")
    expect(toolFailureText("t", { message: 42 })).toBe("ERROR: tool 't' failed: Error: [object Object]")
  })

  it("a shape mismatch and an unknown tool read as the Python agentkit's texts", () => {
    const shape = new ToolShapeError({
      toolName: "quote",
      expected: "Quote",
      raw: {},
      errors: ["price: is missing", "symbol: is missing"]
    })
    expect(toolFailureText("quote", shape)).toBe(
      "ERROR: tool returned a value that does not match its declared output schema 'Quote'. Details: price: is missing; symbol: is missing"
    )
    expect(unknownToolText("refund", [])).toBe("ERROR: no tool named 'refund'. Available tools: (none).")
  })

  it("a rejected approval reads as the Python agentkit's text, with the reason after it when there is one", () => {
    expect(approvalDeniedText()).toBe("DENIED: tool call rejected by human approval")
    expect(approvalDeniedText("")).toBe("DENIED: tool call rejected by human approval")
    expect(approvalDeniedText("not confirmed")).toBe("DENIED: tool call rejected by human approval: not confirmed")
  })

  it("the invalid-argument summary names each top-level key from the problems' paths, whatever the key holds (found by the attack suite)", () => {
    const fields = invalidArgumentFields([
      { path: [": ", "d", "d"], message: "nested deeper than 64 levels" },
      { path: ["", "x"], message: "Expected string, actual 1" },
      { path: ["a:  b", "c"], message: "Expected number, actual null" },
      { path: ["q.r"], message: "Expected string, actual 2" },
      { path: [], message: "a filter threw" },
      { path: ["quantity"], message: "Expected number, actual \"two\"" },
      { path: ["quantity"], message: "Expected number, actual \"two\"" }
    ])
    expect(fields.invalidArguments).toEqual(["", "(root)", ": ", "a:  b", "q.r", "quantity"])
    expect(fields.invalid).toEqual([
      "(root): a filter threw",
      ".x: Expected string, actual 1",
      ": .d.d: nested deeper than 64 levels",
      "a:  b.c: Expected number, actual null",
      "q.r: Expected string, actual 2",
      "quantity: Expected number, actual \"two\""
    ])
    const error = new ToolArgumentError({
      toolName: "search",
      unexpected: [],
      missing: [],
      ...fields,
      accepted: ["q", "quantity"]
    })
    expect(error.message).toBe(
      `tool 'search' call rejected: invalid argument(s) ['', '(root)', ': ', 'a:  b', 'q.r', 'quantity']: ${
        fields.invalid.join("; ")
      }. Accepted arguments: ['q', 'quantity']`
    )
    // the names travel with a stored error
    const decoded = Schema.decodeUnknownSync(ToolArgumentError)(Schema.encodeSync(ToolArgumentError)(error))
    expect(decoded.message).toBe(error.message)
  })

  it("an error stored without the names (an older version's) names its arguments from the lines' text", () => {
    const error = new ToolArgumentError({
      toolName: "search",
      unexpected: [],
      missing: [],
      invalid: ["a.b: x", "quantity: Expected number, actual \"two\""],
      accepted: ["q", "quantity"]
    })
    expect(error.message).toBe(
      "tool 'search' call rejected: invalid argument(s) ['a', 'quantity']: a.b: x; quantity: Expected number, actual \"two\". Accepted arguments: ['q', 'quantity']"
    )
  })

  it("a rejection reason of 1 MB is capped with a marker before the model sees it", () => {
    const text = approvalDeniedText("x".repeat(1_000_000))
    expect(text.startsWith("DENIED: tool call rejected by human approval: xxx")).toBe(true)
    expect(text).toMatch(/…\[truncated \d+ bytes\]$/)
    expect(Utf8.byteLength(text)).toBeLessThan(FAILURE_TEXT_MAX_BYTES + 64)
  })

  it("errorType: the tag, else the class name, else Error", () => {
    expect(errorType(new Cancelled())).toBe("Cancelled")
    expect(errorType(new RangeError("x"))).toBe("RangeError")
    expect(errorType(undefined)).toBe("Error")
  })
})

describe("PythonText.compare: code point order, as Python sorts", () => {
  it("a character above U+E000 sorts before an astral one (UTF-16 order puts it after)", () => {
    // "\uFF5E" (U+FF5E) < "\u{1F600}" by code point; by UTF-16 code unit 0xFF5E > 0xD83D
    expect(PythonText.sorted(["\u{1F600}", "\uFF5E", "a"])).toEqual(["a", "\uFF5E", "\u{1F600}"])
    expect(["\u{1F600}", "\uE000"].sort(PythonText.compare)).toEqual(["\uE000", "\u{1F600}"])
    expect(PythonText.compare("ab", "a")).toBeGreaterThan(0)
    expect(PythonText.compare("same", "same")).toBe(0)
  })

  it("ToolArgumentError lists invalid argument names in Python's order", () => {
    const error = new ToolArgumentError({
      toolName: "t",
      unexpected: [],
      missing: [],
      invalid: ["\u{1F600}: Expected string", "\uFF5E: Expected number"],
      accepted: ["\uFF5E", "\u{1F600}"]
    })
    expect(error.message).toContain("invalid argument(s) ['\uFF5E', '\u{1F600}']")
  })

  it("CanonicalJson sorts keys by code point too", () => {
    expect(CanonicalJson.stringify({ "\u{1F600}": 1, "\uFF5E": 2 })).toBe("{\"\uFF5E\":2,\"\u{1F600}\":1}")
  })
})

describe("Utf8", () => {
  it("byteLength counts UTF-8 bytes; a lone surrogate is U+FFFD's three", () => {
    expect(Utf8.byteLength("")).toBe(0)
    expect(Utf8.byteLength("aé€😀")).toBe(1 + 2 + 3 + 4)
    expect(Utf8.byteLength("\uD83D")).toBe(3)
    expect(Utf8.byteLength("aé€😀")).toBe(new TextEncoder().encode("aé€😀").length)
  })

  it("cut keeps the longest prefix that fits and never splits a character", () => {
    expect(Utf8.cut("abcdef", 4)).toEqual({ kept: "abcd", droppedBytes: 2 })
    expect(Utf8.cut("naïve", 3)).toEqual({ kept: "na", droppedBytes: 4 })
    expect(Utf8.cut("😀😀", 5)).toEqual({ kept: "😀", droppedBytes: 4 })
    expect(Utf8.cut("😀", 3)).toEqual({ kept: "", droppedBytes: 4 })
    expect(Utf8.cut("fits", 4)).toEqual({ kept: "fits", droppedBytes: 0 })
    expect(Utf8.cut("abc", -1)).toEqual({ kept: "", droppedBytes: 3 })
  })

  it("cut of long text: the kept part is within the limit and is a prefix", () => {
    const text = "é😀a".repeat(5000)
    for (const limit of [0, 1, 2, 3, 7, 100, 4097, 34999]) {
      const { kept, droppedBytes } = Utf8.cut(text, limit)
      expect(text.startsWith(kept)).toBe(true)
      expect(Utf8.byteLength(kept)).toBeLessThanOrEqual(limit)
      expect(Utf8.byteLength(kept) + droppedBytes).toBe(Utf8.byteLength(text))
      expect(limit - Utf8.byteLength(kept)).toBeLessThan(4)
    }
  })
})

describe("model-facing failure texts are bounded and safe", () => {
  const maxShown = FAILURE_TEXT_MAX_BYTES + Utf8.byteLength(`…[truncated ${10_000_000} bytes]`)

  it("Utf8.truncate cuts on a character boundary and marks the cut after the limit", () => {
    expect(Utf8.truncate("a".repeat(10), 4)).toBe("aaaa…[truncated 6 bytes]")
    expect(Utf8.truncate("😀😀", 5)).toBe("😀…[truncated 4 bytes]")
    expect(Utf8.truncate("fits", 4)).toBe("fits")
  })

  it("a 1 MB rejection, denial or error message is capped with a marker", () => {
    const huge = "x".repeat(1_000_000)
    const errors = [
      new ToolArgumentError({ toolName: "t", unexpected: [huge], missing: [], invalid: [], accepted: ["a"] }),
      new ToolDenied({ toolName: "t", reason: "approval", message: huge }),
      new ToolExecutionError({ toolName: "t", cause: new Error(huge) }),
      new Error(huge),
      huge
    ]
    for (const error of errors) {
      const text = toolFailureText("t", error)
      expect(Utf8.byteLength(text)).toBeLessThanOrEqual(maxShown)
      expect(text).toMatch(/…\[truncated \d+ bytes\]$/)
      expect(text.startsWith("ERROR: tool 't' failed: ")).toBe(true)
    }
    const shape = new ToolShapeError({
      toolName: "q",
      expected: "Quote",
      raw: {},
      errors: Array(100_000).fill("price: is missing")
    })
    expect(Utf8.byteLength(toolFailureText("q", shape))).toBeLessThanOrEqual(maxShown)
    expect(Utf8.byteLength(unknownToolText("x".repeat(1_000_000), Array.from({ length: 5000 }, (_, i) => `tool_${i}`))))
      .toBeLessThanOrEqual(maxShown)
    expect(unknownToolText("x".repeat(100), ["a"])).toBe(
      `ERROR: no tool named '${"x".repeat(64)}…'. Available tools: a.`
    )
  })

  it("the invalid-argument summary names the declared argument, even one holding '.' or ':'", () => {
    const error = new ToolArgumentError({
      toolName: "t",
      unexpected: [],
      missing: [],
      invalid: [
        "a.b.c: Expected string, actual 1",
        "x:y: Expected number, actual \"z\"",
        "rest.key: Expected string, actual 2",
        ":.0: nested deeper than 64 levels"
      ],
      accepted: ["a.b", "x:y"]
    })
    expect(error.message).toContain("invalid argument(s) [':', 'a.b', 'rest', 'x:y']: ")
  })

  it("short texts are unchanged (the seed's texts stay byte-identical)", () => {
    const error = new ToolArgumentError({
      toolName: "cancel_order",
      unexpected: ["order"],
      missing: ["order_id"],
      invalid: [],
      accepted: ["order_id", "reason"]
    })
    expect(toolFailureText("cancel_order", error)).toBe(
      "ERROR: tool 'cancel_order' failed: ToolArgumentError: tool 'cancel_order' call rejected: unexpected argument(s) ['order']; missing required argument(s) ['order_id']. Accepted arguments: ['order_id', 'reason']"
    )
  })

  it("a defect is shown as a generic failure; the error keeps the details", () => {
    const defect = new ToolExecutionError({ toolName: "boom", cause: new Error("password=hunter2"), defect: true })
    expect(toolFailureText("boom", defect)).toBe(`ERROR: tool 'boom' failed: ${DEFECT_TEXT}`)
    expect(defect.message).toBe("password=hunter2")
    expect(toolFailureText("boom", new ToolExecutionError({ toolName: "boom", cause: new Error("card declined") })))
      .toBe(
        "ERROR: tool 'boom' failed: ToolExecutionError: card declined"
      )
    const encoded = Schema.decodeUnknownSync(ToolExecutionError)(
      JSON.parse(JSON.stringify(Schema.encodeSync(ToolExecutionError)(defect)))
    )
    expect(encoded.defect).toBe(true)
  })

  it("never throws, whatever was thrown: proxies, objects whose toString throws, symbols", () => {
    const hostile = new Proxy({}, {
      get: () => {
        throw new Error("trap")
      },
      has: () => {
        throw new Error("trap")
      },
      getPrototypeOf: () => {
        throw new Error("trap")
      }
    })
    const badString = {
      toString: () => {
        throw new Error("no")
      }
    }
    for (const error of [hostile, badString, Symbol("s"), Object.create(null)]) {
      const text = toolFailureText("t", error)
      expect(text.startsWith("ERROR: tool 't' failed: ")).toBe(true)
    }
    expect(errorMessage(hostile)).toBe("(an error value that cannot be read)")
    expect(errorType(hostile)).toBe("Error")
    expect(new ToolExecutionError({ toolName: "t", cause: badString }).message).toBe(
      "(an error value that cannot be read)"
    )
    expect(() => Schema.encodeSync(ToolExecutionError)(new ToolExecutionError({ toolName: "t", cause: badString }))).not
      .toThrow()
  })
})

describe("statusReason: one HTTP status table for every provider", () => {
  it("classifies each status a model API sends, and what is retryable", () => {
    const table: ReadonlyArray<readonly [number, string, boolean]> = [
      [400, "invalid_request", false],
      [401, "auth", false],
      [402, "permission", false],
      [403, "permission", false],
      [404, "not_found", false],
      [408, "timeout", true],
      [409, "server", true],
      [413, "too_large", false],
      [418, "invalid_request", false],
      [422, "invalid_request", false],
      [429, "rate_limit", true],
      [500, "server", true],
      [502, "server", true],
      [503, "overloaded", true],
      [504, "timeout", true],
      [529, "overloaded", true]
    ]
    for (const [status, reason, retryable] of table) {
      expect({ status, ...statusReason(status) }).toEqual({ status, reason, retryable })
    }
  })
})
