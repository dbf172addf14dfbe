/**
 * `Tool.make`: definition rules, conventions, execution, errors, timeouts, frozen arguments and
 * output checks (spec-tools-testing §1, §2, §6: test_function_tool, test_tool_conventions,
 * test_tool_protocol, test_tool_output_schema).
 */
import {
  ChatModel,
  Invoker,
  RunContext,
  ToolArgumentError,
  ToolDefinitionError,
  ToolExecutionError,
  ToolShapeError,
  ToolTimeoutError,
  Tracing
} from "@agentkit/core"
import type { ToolMiddleware } from "@agentkit/core"
import { asTool, Tool } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Data, Effect, Exit, Fiber, Layer, Option, Schema } from "effect"

const DESCRIPTION = "A test tool with a description long enough to pass."
const runLayer = RunContext.layer({ runId: "run-9" })

const definitionError = (f: () => unknown): ToolDefinitionError => {
  try {
    f()
  } catch (error) {
    expect(error).toBeInstanceOf(ToolDefinitionError)
    return error as ToolDefinitionError
  }
  throw new Error("expected a ToolDefinitionError, nothing was thrown")
}

const MISSING_FLAG =
  "Tool.make requires an explicit `sideEffecting` (true if the tool mutates the world / has external effects, false if it's read-only). The framework's approval gating and idempotency depend on knowing upfront."

/** The failure of an exit, asserting that it is a failure and not a defect or an interruption. */
const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  expect(Exit.isFailure(exit)).toBe(true)
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  expect(Cause.isDie(exit.cause)).toBe(false)
  expect(Cause.isInterrupted(exit.cause)).toBe(false)
  const failure = Cause.failureOption(exit.cause)
  expect(Option.isSome(failure)).toBe(true)
  return Option.getOrThrow(failure)
}

describe("Tool.make: definition", () => {
  it("keeps name, trimmed description and flags; optional flags default to false / empty", () => {
    const tool = Tool.make("echo", {
      description: `  ${DESCRIPTION}\n\nSecond paragraph is kept.  \n`,
      parameters: { msg: Schema.String },
      sideEffecting: false,
      handler: ({ msg }) => msg
    })
    expect(tool.name).toBe("echo")
    expect(tool.description).toBe(`${DESCRIPTION}\n\nSecond paragraph is kept.`)
    expect(tool.schema).toEqual({ name: "echo", description: tool.description, parameters: tool.schema.parameters })
    expect(tool.sideEffecting).toBe(false)
    expect(tool.idempotent).toBe(false)
    expect(tool.requiresApproval).toBe(false)
    expect(tool.caps).toEqual([])
    expect(tool.urlArg).toBeUndefined()
    expect(tool.timeout).toBeUndefined()
    expect(tool.success).toBeUndefined()
    expect(tool.delegating).toBe(false)
  })

  it("round-trips every flag", () => {
    const tool = Tool.make("fetch_url", {
      description: DESCRIPTION,
      parameters: { url: Schema.String },
      sideEffecting: true,
      idempotent: true,
      requiresApproval: true,
      caps: ["egress", "untrusted_content"],
      urlArg: "url",
      handler: ({ url }) => url
    })
    expect(tool.sideEffecting).toBe(true)
    expect(tool.idempotent).toBe(true)
    expect(tool.requiresApproval).toBe(true)
    expect(tool.caps).toEqual(["egress", "untrusted_content"])
    expect(tool.urlArg).toBe("url")
  })

  it("accepts a whole Schema.Struct as parameters", () => {
    const parameters = Schema.Struct({ location: Schema.String, days: Schema.optional(Schema.Int) })
    const tool = Tool.make("weather", {
      description: DESCRIPTION,
      parameters,
      sideEffecting: false,
      handler: () => "sunny"
    })
    expect(tool.parameters).toBe(parameters)
    expect(JSON.stringify(tool.schema.parameters)).toBe(
      "{\"type\":\"object\",\"properties\":{\"location\":{\"type\":\"string\"},\"days\":{\"type\":\"integer\"}},\"required\":[\"location\"]}"
    )
  })

  describe("name", () => {
    const named = (name: string) =>
      Tool.make(name, { description: DESCRIPTION, parameters: {}, sideEffecting: false, handler: () => "ok" })

    it("matches ^[a-zA-Z0-9_-]{1,64}$: 64 characters pass", () => {
      expect(named("a".repeat(64)).name).toBe("a".repeat(64))
      expect(named("Get_order-2").name).toBe("Get_order-2")
    })

    it.each([
      ["65 characters", "a".repeat(65)],
      ["a space", "get order"],
      ["empty", ""],
      ["a dot", "orders.get"],
      ["a non-ASCII letter", "café"]
    ])("%s fails", (_label, name) => {
      const error = definitionError(() => named(name))
      expect(error.message).toContain("^[a-zA-Z0-9_-]{1,64}$")
    })

    it("a non-string name fails (plain JavaScript callers)", () => {
      definitionError(() => named(42 as never))
    })
  })

  describe("sideEffecting is required", () => {
    it("missing → ToolDefinitionError with the pinned text", () => {
      const error = definitionError(() =>
        Tool.make("x", { description: DESCRIPTION, parameters: {}, handler: () => "ok" } as never)
      )
      expect(error.message).toBe(MISSING_FLAG)
    })

    it.each([["undefined", undefined], ["null", null], ["a string", "false"], ["a number", 0]])(
      "%s → the same text",
      (_label, value) => {
        const error = definitionError(() =>
          Tool.make("x", {
            description: DESCRIPTION,
            parameters: {},
            sideEffecting: value as never,
            handler: () => "ok"
          })
        )
        expect(error.message).toBe(MISSING_FLAG)
      }
    )

    it("is checked before the description", () => {
      const error = definitionError(() =>
        Tool.make("x", { description: "short", parameters: {}, handler: () => "ok" } as never)
      )
      expect(error.message).toBe(MISSING_FLAG)
    })
  })

  it.each([["idempotent"], ["requiresApproval"]])("a non-boolean `%s` → ToolDefinitionError", (flag) => {
    const error = definitionError(() =>
      Tool.make("x", {
        description: DESCRIPTION,
        parameters: {},
        sideEffecting: false,
        [flag]: "yes",
        handler: () => "ok"
      })
    )
    expect(error.message).toContain(flag)
  })

  describe("description floor", () => {
    const described = (description: string) =>
      Tool.make("x", { description, parameters: {}, sideEffecting: false, handler: () => "ok" })

    it("29 characters fail with the pinned text; 30 pass", () => {
      const error = definitionError(() => described("a".repeat(29)))
      expect(error.message).toBe(
        `tool 'x' needs a description of at least 30 characters so the model can understand it; got 29 chars: '${
          "a".repeat(29)
        }'`
      )
      expect(described("a".repeat(30)).description).toBe("a".repeat(30))
    })

    it("'too short' is refused", () => {
      expect(definitionError(() => described("too short")).message).toBe(
        "tool 'x' needs a description of at least 30 characters so the model can understand it; got 9 chars: 'too short'"
      )
    })

    it("counts code points, not UTF-16 units", () => {
      // 15 emoji are 30 UTF-16 units but 15 code points.
      const fifteen = "😀".repeat(15)
      expect(fifteen.length).toBe(30)
      expect(definitionError(() => described(fifteen)).message).toBe(
        `tool 'x' needs a description of at least 30 characters so the model can understand it; got 15 chars: '${fifteen}'`
      )
      expect(described("😀".repeat(30)).description).toBe("😀".repeat(30))
      expect(described(`${"a".repeat(29)}😀`).description).toBe(`${"a".repeat(29)}😀`)
    })

    it("is measured after trimming", () => {
      const padded = `   ${"a".repeat(29)}\n\t `
      expect(definitionError(() => described(padded)).message).toContain(`got 29 chars: '${"a".repeat(29)}'`)
      expect(described(`  ${"b".repeat(30)}  `).description).toBe("b".repeat(30))
    })

    it("a missing or empty description counts as 0 characters", () => {
      expect(definitionError(() => described("")).message).toBe(
        "tool 'x' needs a description of at least 30 characters so the model can understand it; got 0 chars: ''"
      )
      expect(definitionError(() => described(undefined as never)).message).toContain("got 0 chars: ''")
    })

    it("quotes the description the way Python's repr does", () => {
      expect(definitionError(() => described("it's short")).message).toContain(`got 10 chars: "it's short"`)
    })
  })

  describe("caps", () => {
    it("accepts the three known capabilities", () => {
      const tool = Tool.make("x", {
        description: DESCRIPTION,
        parameters: {},
        sideEffecting: false,
        caps: ["private_data", "untrusted_content", "egress"],
        handler: () => "ok"
      })
      expect(tool.caps).toEqual(["private_data", "untrusted_content", "egress"])
      expect(Object.isFrozen(tool.caps)).toBe(true)
    })

    it("an unknown capability → ToolDefinitionError naming it and the accepted values", () => {
      const error = definitionError(() =>
        Tool.make("x", {
          description: DESCRIPTION,
          parameters: {},
          sideEffecting: false,
          caps: ["secrets" as never],
          handler: () => "ok"
        })
      )
      expect(error.message).toBe(
        `tool 'x': unknown capability "secrets"; accepted: 'private_data', 'untrusted_content', 'egress'`
      )
    })

    it("caps that are not an array → ToolDefinitionError", () => {
      definitionError(() =>
        Tool.make("x", {
          description: DESCRIPTION,
          parameters: {},
          sideEffecting: false,
          caps: "egress" as never,
          handler: () => "ok"
        })
      )
    })

    it("the caller's caps array is copied, not kept", () => {
      const caps: Array<"egress" | "private_data"> = ["egress"]
      const tool = Tool.make("x", {
        description: DESCRIPTION,
        parameters: {},
        sideEffecting: false,
        caps,
        handler: () => "ok"
      })
      caps.push("private_data")
      expect(tool.caps).toEqual(["egress"])
    })
  })

  describe("urlArg", () => {
    const withUrlArg = (urlArg: string) =>
      Tool.make("fetch_url", {
        description: DESCRIPTION,
        parameters: { url: Schema.String, count: Schema.Number, link: Schema.optional(Schema.String) },
        sideEffecting: false,
        urlArg,
        handler: () => "ok"
      })

    it("may name a declared string parameter, required or optional", () => {
      expect(withUrlArg("url").urlArg).toBe("url")
      expect(withUrlArg("link").urlArg).toBe("link")
    })

    it("an undeclared parameter → ToolDefinitionError", () => {
      expect(definitionError(() => withUrlArg("href")).message).toBe(
        "tool 'fetch_url': urlArg 'href' must name a declared string parameter; declared: count, link, url"
      )
    })

    it("a parameter that is not a string → ToolDefinitionError", () => {
      expect(definitionError(() => withUrlArg("count")).message).toContain(
        "urlArg 'count' must name a declared string parameter"
      )
    })
  })

  it("a handler that is not a function → ToolDefinitionError", () => {
    definitionError(() =>
      Tool.make("x", { description: DESCRIPTION, parameters: {}, sideEffecting: false, handler: "ok" as never })
    )
  })

  it("parameters that are not a struct → ToolDefinitionError", () => {
    definitionError(() =>
      Tool.make("x", {
        description: DESCRIPTION,
        parameters: Schema.String as never,
        sideEffecting: false,
        handler: () => "ok"
      })
    )
  })

  it("a timeout that is not a positive Duration → ToolDefinitionError", () => {
    for (const timeout of ["0 millis", "soon", -5]) {
      definitionError(() =>
        Tool.make("x", {
          description: DESCRIPTION,
          parameters: {},
          sideEffecting: false,
          timeout: timeout as never,
          handler: () => "ok"
        })
      )
    }
  })
})

describe("Tool.make: protocol", () => {
  const tool = Tool.make("echo", {
    description: DESCRIPTION,
    parameters: { msg: Schema.String },
    sideEffecting: false,
    handler: ({ msg }) => msg
  })

  it("Tool.isTool recognises tools made by Tool.make and asTool, and nothing else", () => {
    expect(Tool.isTool(tool)).toBe(true)
    expect(Tool.isTool(asTool({ run: () => Effect.succeed("x") }, { name: "sub", description: DESCRIPTION }))).toBe(
      true
    )
    expect(Tool.isTool({ ...tool })).toBe(false)
    expect(
      Tool.isTool({ name: "echo", description: DESCRIPTION, schema: tool.schema, sideEffecting: false, run: tool.run })
    ).toBe(false)
    for (const value of [null, undefined, "echo", 42, () => "ok"]) expect(Tool.isTool(value)).toBe(false)
  })

  it("a tool is frozen, and so is its advertised schema", () => {
    expect(Object.isFrozen(tool)).toBe(true)
    expect(Object.isFrozen(tool.schema)).toBe(true)
    expect(() => {
      ;(tool as { name: string }).name = "other"
    }).toThrow(TypeError)
    expect(tool.name).toBe("echo")
  })

  it("a tool is pipeable", () => {
    expect(tool.pipe((t) => t.name)).toBe("echo")
    expect(tool.pipe((t) => t.name, (name) => name.toUpperCase())).toBe("ECHO")
  })

  it("`accepted` is sorted by code point, whatever the declaration order", () => {
    const t = Tool.make("x", {
      description: DESCRIPTION,
      parameters: { zeta: Schema.String, Alpha: Schema.String, alpha: Schema.optional(Schema.String) },
      sideEffecting: false,
      handler: () => "ok"
    })
    expect(t.accepted).toEqual(["Alpha", "alpha", "zeta"])
    expect(Object.keys(t.schema.parameters["properties"] as object)).toEqual(["zeta", "Alpha", "alpha"])
  })
})

describe("Tool.run: arguments", () => {
  it.effect("runs a sync handler with its named arguments", () =>
    Effect.gen(function*() {
      const weather = Tool.make("weather", {
        description: DESCRIPTION,
        parameters: { location: Schema.String, days: Schema.Int.pipe(Schema.optionalWith({ default: () => 1 })) },
        sideEffecting: false,
        handler: ({ location, days }) => `Weather in ${location}: sunny (${days}d)`
      })
      expect(yield* weather.run({ location: "Paris", days: 2 })).toBe("Weather in Paris: sunny (2d)")
      expect(yield* weather.run({ location: "Paris" })).toBe("Weather in Paris: sunny (1d)")
    }).pipe(Effect.provide(runLayer)))

  it.effect("awaits a Promise handler", () =>
    Effect.gen(function*() {
      const fetchUrl = Tool.make("fetch", {
        description: DESCRIPTION,
        parameters: { url: Schema.String },
        sideEffecting: false,
        handler: async ({ url }) => {
          await new Promise((resolve) => setTimeout(resolve, 1))
          return `got ${url}`
        }
      })
      expect(yield* fetchUrl.run({ url: "x" })).toBe("got x")
    }).pipe(Effect.provide(runLayer)))

  it.effect("a parameter named `context` is an ordinary argument", () =>
    Effect.gen(function*() {
      const t = Tool.make("annotate", {
        description: DESCRIPTION,
        parameters: { context: Schema.String },
        sideEffecting: false,
        handler: ({ context }, handlerContext) => `${context} / ${handlerContext.context.correlationId}`
      })
      expect(JSON.stringify(t.schema.parameters)).toBe(
        "{\"type\":\"object\",\"properties\":{\"context\":{\"type\":\"string\"}},\"required\":[\"context\"]}"
      )
      expect(yield* t.run({ context: "note" })).toBe("note / run-9")
      const error = yield* Effect.flip(t.run({}))
      expect(error.message).toBe(
        "tool 'annotate' call rejected: missing required argument(s) ['context']. Accepted arguments: ['context']"
      )
    }).pipe(Effect.provide(runLayer)))

  it.effect("the handler never runs when the arguments are rejected", () =>
    Effect.gen(function*() {
      let calls = 0
      const t = Tool.make("count", {
        description: DESCRIPTION,
        parameters: { n: Schema.Number },
        sideEffecting: true,
        handler: ({ n }) => {
          calls++
          return n
        }
      })
      yield* Effect.flip(t.run({ n: "1" }))
      yield* Effect.flip(t.run({ m: 1 }))
      yield* Effect.flip(t.run({}))
      yield* Effect.flip(t.run({ n: 1, extra: true }))
      expect(calls).toBe(0)
      expect(yield* t.run({ n: 1 })).toBe(1)
      expect(calls).toBe(1)
    }).pipe(Effect.provide(runLayer)))

  it.effect("a wrong type is rejected with the path and the schema's message, only when no key is wrong", () =>
    Effect.gen(function*() {
      const t = Tool.make("cancel_order", {
        description: DESCRIPTION,
        parameters: { order_id: Schema.String, reason: Schema.optional(Schema.String) },
        sideEffecting: true,
        handler: () => "ok"
      })
      const invalid = yield* Effect.flip(t.run({ order_id: 5 }))
      expect(invalid).toBeInstanceOf(ToolArgumentError)
      expect(invalid.message).toBe(
        "tool 'cancel_order' call rejected: invalid argument(s) ['order_id']: order_id: Expected string, actual 5. Accepted arguments: ['order_id', 'reason']"
      )
      const keyWrong = yield* Effect.flip(t.run({ order_id: 5, order: "A" }))
      expect(keyWrong.message).toBe(
        "tool 'cancel_order' call rejected: unexpected argument(s) ['order']. Accepted arguments: ['order_id', 'reason']"
      )
    }).pipe(Effect.provide(runLayer)))

  it.effect("arguments that are not an object are rejected", () =>
    Effect.gen(function*() {
      const t = Tool.make("x", { description: DESCRIPTION, parameters: {}, sideEffecting: false, handler: () => "ok" })
      for (const args of [null, undefined, "x", 1, [1]]) {
        const error = yield* Effect.flip(t.run(args))
        expect(error).toBeInstanceOf(ToolArgumentError)
        expect(error.message).toMatch(
          /^tool 'x' call rejected: invalid argument\(s\) \['\(root\)'\]: \(root\): expected an object of arguments, got /
        )
      }
    }).pipe(Effect.provide(runLayer)))

  it.effect("unexpected and missing lists are sorted by code point", () =>
    Effect.gen(function*() {
      const t = Tool.make("x", {
        description: DESCRIPTION,
        parameters: { b: Schema.String, B: Schema.String, a: Schema.String },
        sideEffecting: false,
        handler: () => "ok"
      })
      const error = yield* Effect.flip(t.run({ z: 1, Z: 1, "é": 1 }))
      expect(error.message).toBe(
        "tool 'x' call rejected: unexpected argument(s) ['Z', 'z', 'é']; missing required argument(s) ['B', 'a', 'b']. Accepted arguments: ['B', 'a', 'b']"
      )
    }).pipe(Effect.provide(runLayer)))

  it.effect("a rest record accepts extra keys, passes them to the handler, and advertises additionalProperties: true", () =>
    Effect.gen(function*() {
      let received: unknown
      const search = Tool.make("search", {
        description: DESCRIPTION,
        parameters: Schema.Struct({ q: Schema.String }, Schema.Record({ key: Schema.String, value: Schema.Unknown })),
        sideEffecting: false,
        handler: (args) => {
          received = args
          return Object.keys(args).sort().join(",")
        }
      })
      expect(JSON.stringify(search.schema.parameters)).toBe(
        "{\"type\":\"object\",\"properties\":{\"q\":{\"type\":\"string\"}},\"required\":[\"q\"],\"additionalProperties\":true}"
      )
      expect(search.accepted).toEqual(["q"])
      expect(yield* search.run({ q: "x", colour: "red", size: 3 })).toBe("colour,q,size")
      expect(received).toEqual({ q: "x", colour: "red", size: 3 })
      const missing = yield* Effect.flip(search.run({ colour: "red" }))
      expect(missing.message).toBe(
        "tool 'search' call rejected: missing required argument(s) ['q']. Accepted arguments: ['q']"
      )
    }).pipe(Effect.provide(runLayer)))

  it.effect("arguments arrive deep-frozen; class instances (Date) are left unfrozen", () =>
    Effect.gen(function*() {
      let seen: Record<string, unknown> | undefined
      const t = Tool.make("filter", {
        description: DESCRIPTION,
        parameters: {
          limit: Schema.Number,
          filters: Schema.Struct({ tags: Schema.Array(Schema.String), range: Schema.Struct({ from: Schema.Number }) }),
          since: Schema.Date
        },
        sideEffecting: false,
        handler: (args) => {
          seen = args as never
          return "ok"
        }
      })
      const input = { limit: 10, filters: { tags: ["a"], range: { from: 1 } }, since: "2026-08-14T00:00:00.000Z" }
      yield* t.run(input)
      const args = seen as { limit: number; filters: { tags: Array<string>; range: { from: number } }; since: Date }
      expect(() => {
        args.limit = 100
      }).toThrow(TypeError)
      expect(() => {
        args.filters.tags.push("b")
      }).toThrow(TypeError)
      expect(() => {
        args.filters.range.from = 2
      }).toThrow(TypeError)
      expect(() => {
        ;(args as Record<string, unknown>)["extra"] = 1
      }).toThrow(TypeError)
      expect(args).toEqual({
        limit: 10,
        filters: { tags: ["a"], range: { from: 1 } },
        since: new Date("2026-08-14T00:00:00.000Z")
      })
      expect(args.since).toBeInstanceOf(Date)
      expect(Object.isFrozen(args.since)).toBe(false)
      // The caller's own object is not the one frozen.
      expect(Object.isFrozen(input)).toBe(false)
      expect(Object.isFrozen(input.filters.tags)).toBe(false)
    }).pipe(Effect.provide(runLayer)))

  it.effect("a handler's mutation attempt fails the call as a ToolExecutionError carrying the TypeError", () =>
    Effect.gen(function*() {
      const t = Tool.make("mutate", {
        description: DESCRIPTION,
        parameters: { limit: Schema.Number },
        sideEffecting: false,
        handler: (args) => {
          ;(args as { limit: number }).limit = 100
          return "unreachable"
        }
      })
      const error = failureOf(yield* Effect.exit(t.run({ limit: 1 })))
      expect(error).toBeInstanceOf(ToolExecutionError)
      expect((error as ToolExecutionError).cause).toBeInstanceOf(TypeError)
    }).pipe(Effect.provide(runLayer)))
})

it.layer(runLayer)("Tool.run: handler failures", (it) => {
  const boom = new Error("card declined")
  const make = (handler: () => unknown) =>
    Tool.make("charge", { description: DESCRIPTION, parameters: {}, sideEffecting: true, handler })

  it.effect.each(
    [
      ["a throw in a sync handler", () =>
        make(() => {
          throw boom
        })],
      ["a rejected Promise", () => make(() => Promise.reject(boom))],
      ["an async function that throws", () =>
        make(async () => {
          throw boom
        })],
      ["Effect.die in an Effect handler", () => make(() => Effect.die(boom))],
      ["a throw inside Effect.sync", () =>
        make(() =>
          Effect.sync(() => {
            throw boom
          })
        )]
    ] as const
  )("%s → ToolExecutionError with the original cause, never a defect", ([_label, tool]) =>
    Effect.gen(function*() {
      const error = failureOf(yield* Effect.exit(tool().run({})))
      expect(error).toBeInstanceOf(ToolExecutionError)
      expect(error).toMatchObject({ _tag: "ToolExecutionError", toolName: "charge", message: "card declined" })
      expect((error as ToolExecutionError).cause).toBe(boom)
    }))

  it.effect("a non-Error throw is kept as the cause", () =>
    Effect.gen(function*() {
      const error = failureOf(
        yield* Effect.exit(
          make(() => {
            throw "plain string"
          }).run({})
        )
      )
      expect(error).toMatchObject({ _tag: "ToolExecutionError", cause: "plain string", message: "plain string" })
    }))

  it.effect("a typed failure of an Effect handler passes through with its own type", () =>
    Effect.gen(function*() {
      class OrderNotFound extends Data.TaggedError("OrderNotFound")<{ readonly id: string }> {}
      const t = Tool.make("lookup", {
        description: DESCRIPTION,
        parameters: { id: Schema.String },
        sideEffecting: false,
        handler: ({ id }) => (id === "A-1" ? Effect.succeed("found") : Effect.fail(new OrderNotFound({ id })))
      })
      const error = failureOf(yield* Effect.exit(t.run({ id: "nope" })))
      expect(error).toBeInstanceOf(OrderNotFound)
      expect(error).toMatchObject({ _tag: "OrderNotFound", id: "nope" })
      expect(yield* t.run({ id: "A-1" })).toBe("found")
    }))
})

describe("Tool.run: timeout and interruption", () => {
  it.live("a handler past its timeout fails with ToolTimeoutError and its signal is aborted", () =>
    Effect.gen(function*() {
      let signal: AbortSignal | undefined
      const slow = Tool.make("slow", {
        description: DESCRIPTION,
        parameters: {},
        sideEffecting: false,
        timeout: "50 millis",
        handler: (_args, handlerContext) => {
          signal = handlerContext.signal
          return new Promise<string>(() => {})
        }
      })
      const error = failureOf(yield* Effect.exit(slow.run({})))
      expect(error).toBeInstanceOf(ToolTimeoutError)
      expect(error).toMatchObject({ _tag: "ToolTimeoutError", toolName: "slow" })
      expect((error as ToolTimeoutError).message).toMatch(/^tool 'slow' timed out after /)
      expect(signal?.aborted).toBe(true)
    }).pipe(Effect.provide(runLayer)))

  it.live("a handler that reads its signal only after the timeout still sees it aborted", () =>
    Effect.gen(function*() {
      let handlerContext: Tool.HandlerContext | undefined
      const slow = Tool.make("slow", {
        description: DESCRIPTION,
        parameters: {},
        sideEffecting: false,
        timeout: "50 millis",
        handler: (_args, context) => {
          handlerContext = context // the signal is not read yet
          return new Promise<string>(() => {})
        }
      })
      failureOf(yield* Effect.exit(slow.run({})))
      expect(handlerContext?.signal.aborted).toBe(true)
    }).pipe(Effect.provide(runLayer)))

  it.live("an Effect handler past its timeout is interrupted", () =>
    Effect.gen(function*() {
      let interrupted = false
      const slow = Tool.make("slow", {
        description: DESCRIPTION,
        parameters: {},
        sideEffecting: false,
        timeout: "50 millis",
        handler: () => Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => (interrupted = true))))
      })
      expect(failureOf(yield* Effect.exit(slow.run({})))).toBeInstanceOf(ToolTimeoutError)
      expect(interrupted).toBe(true)
    }).pipe(Effect.provide(runLayer)))

  it.live("a handler that finishes in time is not affected by its timeout", () =>
    Effect.gen(function*() {
      let signal: AbortSignal | undefined
      const quick = Tool.make("quick", {
        description: DESCRIPTION,
        parameters: {},
        sideEffecting: false,
        timeout: "10 seconds",
        handler: async (_args, handlerContext) => {
          signal = handlerContext.signal
          return "done"
        }
      })
      expect(yield* quick.run({})).toBe("done")
      expect(signal?.aborted).toBe(false)
    }).pipe(Effect.provide(runLayer)))

  it.effect("a Promise handler sees its signal abort when the fiber is interrupted", () =>
    Effect.gen(function*() {
      let started: (signal: AbortSignal) => void = () => {}
      const running = new Promise<AbortSignal>((resolve) => (started = resolve))
      const hang = Tool.make("hang", {
        description: DESCRIPTION,
        parameters: {},
        sideEffecting: false,
        handler: (_args, { signal }) => {
          started(signal)
          return new Promise<string>(() => {})
        }
      })
      const fiber = yield* Effect.fork(hang.run({}))
      const signal = yield* Effect.promise(() => running)
      expect(signal.aborted).toBe(false)
      const exit = yield* Fiber.interrupt(fiber)
      expect(Exit.isInterrupted(exit)).toBe(true)
      expect(signal.aborted).toBe(true)
    }).pipe(Effect.provide(runLayer)))
})

it.layer(runLayer)("Tool: output schema", (it) => {
  class Report extends Schema.Class<Report>("Report")({ title: Schema.String, pages: Schema.Number }) {}

  it.effect("a valid instance comes back as the same object", () =>
    Effect.gen(function*() {
      const report = new Report({ title: "Q3", pages: 4 })
      const t = Tool.make("report", {
        description: DESCRIPTION,
        parameters: {},
        success: Report,
        sideEffecting: false,
        handler: () => report
      })
      expect(yield* t.run({})).toBe(report)
    }))

  it.effect("a wrong value → ToolShapeError with the class identifier as the expected shape", () =>
    Effect.gen(function*() {
      const t = Tool.make("bad", {
        description: DESCRIPTION,
        parameters: {},
        success: Report,
        sideEffecting: false,
        // not of the success schema's type: it does not compile (see types.test.ts), so `as never`; a JavaScript caller gets this runtime check
        handler: (() => ({ title: "Q3" })) as never
      })
      const error = failureOf(yield* Effect.exit(t.run({})))
      expect(error).toBeInstanceOf(ToolShapeError)
      expect(error).toMatchObject({ toolName: "bad", expected: "Report", raw: { title: "Q3" } })
      expect((error as ToolShapeError).errors.length).toBeGreaterThan(0)
    }))

  it.effect("an untyped upstream value marked Tool.unchecked is checked when the tool runs: a wrong shape is a ToolShapeError", () =>
    Effect.gen(function*() {
      const Summary = Schema.Struct({ title: Schema.String, pages: Schema.Number }).annotations({
        identifier: "Summary"
      })
      let upstream: unknown = { title: "Q3" }
      const t = Tool.make("upstream", {
        description: DESCRIPTION,
        parameters: {},
        success: Summary,
        sideEffecting: false,
        handler: () => Tool.unchecked(upstream)
      })
      const error = failureOf(yield* Effect.exit(t.run({})))
      expect(error).toBeInstanceOf(ToolShapeError)
      expect(error).toMatchObject({ toolName: "upstream", expected: "Summary", raw: { title: "Q3" } })
      upstream = { title: "Q3", pages: 4 }
      const ok = yield* Effect.exit(t.run({}))
      expect(Exit.isSuccess(ok)).toBe(true)
    }))

  it.effect("the expected shape is the identifier, else the title, else 'Output'", () =>
    Effect.gen(function*() {
      const expectedOf = (success: Schema.Schema.AnyNoContext) =>
        Effect.map(
          Effect.flip(
            Tool.make("shape", {
              description: DESCRIPTION,
              parameters: {},
              success,
              sideEffecting: false,
              handler: () => 42
            }).run({})
          ),
          (error) => (error as ToolShapeError).expected
        )
      const fields = { symbol: Schema.String }
      expect(yield* expectedOf(Schema.Struct(fields).annotations({ identifier: "Quote" }))).toBe("Quote")
      expect(yield* expectedOf(Schema.Struct(fields).annotations({ title: "Price quote" }))).toBe("Price quote")
      expect(yield* expectedOf(Schema.Struct(fields))).toBe("Output")
    }))

  it.effect("shape errors name the path and the problem", () =>
    Effect.gen(function*() {
      const t = Tool.make("wrong", {
        description: DESCRIPTION,
        parameters: {},
        success: Schema.Struct({ items: Schema.Array(Schema.Struct({ qty: Schema.Number })) }),
        sideEffecting: false,
        // not of the success schema's type: it does not compile (see types.test.ts), so `as never`; a JavaScript caller gets this runtime check
        handler: (() => ({ items: [{ qty: 1 }, { qty: "two" }] })) as never
      })
      const error = (yield* Effect.flip(t.run({}))) as ToolShapeError
      expect(error.errors).toEqual(["items.1.qty: Expected number, actual \"two\""])
      const topLevel = Tool.make("wrong", {
        description: DESCRIPTION,
        parameters: {},
        success: Schema.Struct({ items: Schema.Array(Schema.Number) }),
        sideEffecting: false,
        // not of the success schema's type: it does not compile (see types.test.ts), so `as never`; a JavaScript caller gets this runtime check
        handler: (() => "not an object") as never
      })
      const top = (yield* Effect.flip(topLevel.run({}))) as ToolShapeError
      expect(top.errors).toHaveLength(1)
      expect(top.errors[0]).toMatch(/^top-level: /)
    }))

  it.effect("without a success schema any value passes through untouched", () =>
    Effect.gen(function*() {
      const value = { anything: [1, "two"], nested: { ok: true } }
      const t = Tool.make("free", {
        description: DESCRIPTION,
        parameters: {},
        sideEffecting: false,
        handler: () => value
      })
      expect(yield* t.run({})).toBe(value)
    }))

  it.effect("the shape check runs outside the timeout: a mismatch is still a ToolShapeError", () =>
    Effect.gen(function*() {
      const t = Tool.make("timed", {
        description: DESCRIPTION,
        parameters: {},
        success: Schema.Number,
        sideEffecting: false,
        timeout: "1 minute",
        // not of the success schema's type: it does not compile (see types.test.ts), so `as never`; a JavaScript caller gets this runtime check
        handler: (() => "not a number") as never
      })
      expect(failureOf(yield* Effect.exit(t.run({})))).toBeInstanceOf(ToolShapeError)
    }))

  it.effect("no span event is added when there is no span", () =>
    Effect.gen(function*() {
      const tracer = Tracing.recording()
      const t = Tool.make("bad", {
        description: DESCRIPTION,
        parameters: {},
        success: Report,
        sideEffecting: false,
        handler: (() => 1) as never
      })
      const error = yield* Effect.flip(t.run({}).pipe(Effect.provide(tracer.layer)))
      expect(error).toBeInstanceOf(ToolShapeError)
      expect(tracer.spans).toEqual([])
    }))
})

describe("Tool.render: the text the model sees", () => {
  it.effect("the encoded form of a success schema is rendered (a Date becomes its ISO string)", () =>
    Effect.gen(function*() {
      const t = Tool.make("when", {
        description: DESCRIPTION,
        parameters: {},
        success: Schema.Struct({ at: Schema.Date, count: Schema.NumberFromString }),
        sideEffecting: false,
        handler: () => ({ at: new Date(Date.UTC(2026, 7, 14)), count: 3 })
      })
      const value = yield* t.run({})
      expect(value.at).toBeInstanceOf(Date)
      expect(t.render(value)).toBe("{\"at\":\"2026-08-14T00:00:00.000Z\",\"count\":\"3\"}")
    }).pipe(Effect.provide(runLayer)))

  it("a string is rendered as is, anything else as compact JSON", () => {
    const t = Tool.make("free", { description: DESCRIPTION, parameters: {}, sideEffecting: false, handler: () => "x" })
    expect(t.render("plain text")).toBe("plain text")
    expect(t.render({ s: 200, list: [1, "a"] })).toBe("{\"s\":200,\"list\":[1,\"a\"]}")
    expect(t.render(12)).toBe("12")
    expect(t.render(null)).toBe("null")
    expect(t.render(undefined)).toBe("null")
  })

  it("BigInt and cycles do not break rendering", () => {
    const t = Tool.make("free", { description: DESCRIPTION, parameters: {}, sideEffecting: false, handler: () => "x" })
    const cyclic: Record<string, unknown> = { n: 10n }
    cyclic["self"] = cyclic
    expect(t.render(cyclic)).toBe("{\"n\":\"10\",\"self\":\"[Circular]\"}")
  })

  it("a big result is cut at maxResultBytes with a marker", () => {
    const t = Tool.make("big", {
      description: DESCRIPTION,
      parameters: {},
      sideEffecting: false,
      maxResultBytes: 100,
      handler: () => "x"
    })
    expect(t.render("x".repeat(1000))).toBe(`${"x".repeat(100)}…[truncated 900 bytes]`)
    expect(t.render("x".repeat(100))).toBe("x".repeat(100))
  })

  it("the default limit is 64 KiB", () => {
    const t = Tool.make("big", { description: DESCRIPTION, parameters: {}, sideEffecting: false, handler: () => "x" })
    expect(t.render("y".repeat(65536))).toBe("y".repeat(65536))
    expect(t.render("y".repeat(70000))).toBe(`${"y".repeat(65536)}…[truncated 4464 bytes]`)
  })

  it("Tool.renderResult renders without a tool", () => {
    expect(Tool.renderResult({ status: 200 })).toBe("{\"status\":200}")
    expect(Tool.renderResult("z".repeat(10), { maxBytes: 4 })).toBe("zzzz…[truncated 6 bytes]")
  })
})

describe("Tool: the handler context through the pipeline (one run-context channel)", () => {
  const seenBy = () => {
    const seen: Array<
      {
        readonly callId: string | undefined
        readonly runId: string | undefined
        readonly depth: number
        readonly fromEnv?: number
      }
    > = []
    const promised = Tool.make("promised", {
      description: DESCRIPTION,
      parameters: {},
      sideEffecting: false,
      handler: async (_args, { callId, runId, context }) => {
        seen.push({ callId, runId, depth: context.depth })
        return "ok"
      }
    })
    const effectful = Tool.make("effectful", {
      description: DESCRIPTION,
      parameters: {},
      sideEffecting: false,
      handler: (_args, { callId, runId, context }) =>
        Effect.map(RunContext, (fromEnv) => {
          seen.push({ callId, runId, depth: context.depth, fromEnv: fromEnv.depth })
          return "ok"
        })
    })
    return { seen, promised, effectful }
  }
  const layer = Layer.provideMerge(
    Invoker.layer(),
    Layer.merge(ChatModel.layer({ chat: () => Effect.die("no model") }), runLayer)
  )

  it.effect("through the Invoker the handler gets the call id and the run id; a direct run gets neither", () => {
    const { seen, promised, effectful } = seenBy()
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      yield* invoker.tool({ id: "call-7", name: "promised", arguments: {} }, promised)
      yield* invoker.tool({ id: "call-8", name: "effectful", arguments: {} }, effectful)
      yield* promised.run({})
      expect(seen).toEqual([
        { callId: "call-7", runId: "run-9", depth: 0 },
        { callId: "call-8", runId: "run-9", depth: 0, fromEnv: 0 },
        { callId: undefined, runId: undefined, depth: 0 }
      ])
    }).pipe(Effect.provide(layer))
  })

  it.effect("the call record's context is the one the handler is handed; the environment is what the middleware provided", () => {
    const { seen, promised, effectful } = seenBy()
    // the record carries the context the tool is handed; Effect code reads the environment, so a
    // middleware that changes the context provides it too
    const nest: ToolMiddleware = (next) => (request) =>
      Effect.flatMap(
        Effect.orDie(request.context.child()),
        (child) => Effect.provideService(next({ ...request, context: child }), RunContext, child)
      )
    const nested = Layer.provideMerge(
      Invoker.layer({ toolMiddleware: [nest] }),
      Layer.merge(ChatModel.layer({ chat: () => Effect.die("no model") }), runLayer)
    )
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      yield* invoker.tool({ id: "c1", name: "promised", arguments: {} }, promised)
      yield* invoker.tool({ id: "c2", name: "effectful", arguments: {} }, effectful)
      // the handler is told the run id of the context it runs in: the child's, path-derived
      expect(seen).toEqual([
        { callId: "c1", runId: "run-9/sub", depth: 1 },
        { callId: "c2", runId: "run-9/sub", depth: 1, fromEnv: 1 }
      ])
    }).pipe(Effect.provide(nested))
  })
})
