import { Tracing } from "@agentkit/core"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, FiberRef, Layer, Option, Tracer } from "effect"

/** A tracer whose spans throw from `event` and `attribute`, like a broken exporter. */
const brokenTracer = () => {
  let eventCalls = 0
  let attributeCalls = 0
  const tracer = Tracer.make({
    span(name, parent, context, links, startTime, kind) {
      const span: Tracer.Span = {
        _tag: "Span",
        name,
        spanId: "0000000000000001",
        traceId: "00000000000000000000000000000001",
        parent,
        context,
        status: { _tag: "Started", startTime },
        attributes: new Map(),
        links,
        sampled: true,
        kind,
        end() {},
        attribute() {
          attributeCalls += 1
          throw new Error("exporter down")
        },
        event() {
          eventCalls += 1
          throw new Error("exporter down")
        },
        addLinks() {}
      }
      return span
    },
    context: (f) => f()
  })
  return {
    layer: Layer.setTracer(tracer),
    get eventCalls() {
      return eventCalls
    },
    get attributeCalls() {
      return attributeCalls
    }
  }
}

describe("Tracing", () => {
  it("names follow the OpenTelemetry GenAI conventions", () => {
    expect(Tracing.SpanName.chat("claude-sonnet-4-6")).toBe("chat claude-sonnet-4-6")
    expect(Tracing.SpanName.executeTool("lookup_order")).toBe("execute_tool lookup_order")
    expect(Tracing.SpanName.invokeAgent("support")).toBe("invoke_agent support")
    expect(Tracing.Attribute.requestModel).toBe("gen_ai.request.model")
    expect(Tracing.Attribute.usageInputTokens).toBe("gen_ai.usage.input_tokens")
    expect(Tracing.Attribute.usageOutputTokens).toBe("gen_ai.usage.output_tokens")
    expect(Tracing.Attribute.toolName).toBe("gen_ai.tool.name")
    expect(Tracing.Attribute.toolCallId).toBe("gen_ai.tool.call.id")
    expect(Tracing.Attribute.errorType).toBe("error.type")
    expect(Tracing.Attribute.mcpMethodName).toBe("mcp.method.name")
    expect(Tracing.Attribute.mcpProtocolVersion).toBe("mcp.protocol.version")
    expect(Tracing.Operation).toEqual({
      invokeAgent: "invoke_agent",
      invokeWorkflow: "invoke_workflow",
      chat: "chat",
      executeTool: "execute_tool"
    })
    expect(Tracing.SpanName.invokeWorkflow("refunds")).toBe("invoke_workflow refunds")
    expect(Tracing.EventName.policyDispatch).toBe("policy.dispatch")
    expect(Tracing.EventName.toolShapeMismatch).toBe("tool.shape_mismatch")
    expect(Tracing.EventName.retryAttempt).toBe("retry.attempt")
    expect(Tracing.EventName.budgetCheckpoint).toBe("budget.checkpoint")
  })

  describe("addEvent", () => {
    it.effect("adds the event to the current span", () => {
      const tracer = Tracing.recording()
      return Effect.gen(function*() {
        yield* Tracing.addEvent("tool.shape_mismatch", { tool_name: "quote", expected_shape: "Quote" }).pipe(
          Effect.withSpan("execute_tool quote")
        )
        const span = tracer.one("execute_tool quote")
        expect(span.events).toEqual([
          { name: "tool.shape_mismatch", attributes: { tool_name: "quote", expected_shape: "Quote" } }
        ])
      }).pipe(Effect.provide(tracer.layer))
    })

    it.effect("lands on the innermost open span only", () => {
      const tracer = Tracing.recording()
      return Effect.gen(function*() {
        yield* Tracing.addEvent("inner.event").pipe(
          Effect.withSpan("inner"),
          Effect.zipRight(Tracing.addEvent("outer.event", { n: 1 })),
          Effect.withSpan("outer")
        )
        expect(tracer.one("inner").events).toEqual([{ name: "inner.event", attributes: {} }])
        expect(tracer.one("outer").events).toEqual([{ name: "outer.event", attributes: { n: 1 } }])
      }).pipe(Effect.provide(tracer.layer))
    })

    it.effect("without a span it is a no-op", () => {
      const tracer = Tracing.recording()
      return Effect.gen(function*() {
        yield* Tracing.addEvent("nobody.listens", { a: 1 })
        yield* Tracing.annotate({ a: 1 })
        expect(tracer.spans).toHaveLength(0)
      }).pipe(Effect.provide(tracer.layer))
    })

    it.effect("a tracer whose span.event and span.attribute throw does not break the effect", () => {
      const broken = brokenTracer()
      return Effect.gen(function*() {
        const result = yield* Tracing.addEvent("budget.checkpoint", { spent_usd: 0.5 }).pipe(
          Effect.zipRight(Tracing.annotate({ "gen_ai.usage.input_tokens": 10 })),
          Effect.as("still here"),
          Effect.withSpan("chat m", { captureStackTrace: false })
        )
        expect(result).toBe("still here")
        expect(broken.eventCalls).toBe(1)
        expect(broken.attributeCalls).toBe(1)
      }).pipe(Effect.provide(broken.layer))
    })
  })

  describe("setAttributes", () => {
    it.effect("sets every attribute on the current span", () => {
      const tracer = Tracing.recording()
      return Effect.gen(function*() {
        yield* Tracing.annotate({ "gen_ai.usage.input_tokens": 10, "gen_ai.response.model": "m" }).pipe(
          Effect.withSpan("chat m")
        )
        const span = tracer.one("chat m")
        expect(span.attributes.get("gen_ai.usage.input_tokens")).toBe(10)
        expect(span.attributes.get("gen_ai.response.model")).toBe("m")
      }).pipe(Effect.provide(tracer.layer))
    })
  })

  describe("recording()", () => {
    it.effect("records spans in start order, with parents, kinds, ends and exits", () => {
      const tracer = Tracing.recording()
      return Effect.gen(function*() {
        yield* Effect.fail("boom").pipe(
          Effect.withSpan("child-b", { kind: "client" }),
          Effect.ignore,
          Effect.zipRight(Effect.void.pipe(Effect.withSpan("child-a"))),
          Effect.withSpan("root")
        )
        expect(tracer.spans.map((s) => s.name)).toEqual(["root", "child-b", "child-a"])
        const root = tracer.one("root")
        expect(root.parentSpanId).toBeUndefined()
        expect(root.ended).toBe(true)
        expect(tracer.childrenOf(root).map((s) => s.name)).toEqual(["child-b", "child-a"])
        const failed = tracer.one("child-b")
        expect(failed.kind).toBe("client")
        expect(failed.traceId).toBe(root.traceId)
        expect(Exit.isFailure(failed.exit!)).toBe(true)
        expect(Exit.isSuccess(tracer.one("child-a").exit!)).toBe(true)
        expect(root.spanId).toMatch(/^[0-9a-f]{16}$/)
        expect(root.traceId).toMatch(/^[0-9a-f]{32}$/)
      }).pipe(Effect.provide(tracer.layer))
    })

    it.effect("an open span is not ended; Effect.currentSpan sees the recorded span", () => {
      const tracer = Tracing.recording()
      return Effect.gen(function*() {
        const current = yield* Effect.currentSpan.pipe(
          Effect.tap(() => Effect.sync(() => expect(tracer.one("open").ended).toBe(false))),
          Effect.withSpan("open")
        )
        expect(current).toBe(tracer.one("open"))
        expect(Option.isNone(current.parent)).toBe(true)
      }).pipe(Effect.provide(tracer.layer))
    })

    it.effect("named, one (throws on none or many) and clear", () => {
      const tracer = Tracing.recording()
      return Effect.gen(function*() {
        yield* Effect.void.pipe(Effect.withSpan("twice"))
        yield* Effect.void.pipe(Effect.withSpan("twice"))
        expect(tracer.named("twice")).toHaveLength(2)
        expect(() => tracer.one("twice")).toThrow("expected one span 'twice', found 2: [twice, twice]")
        expect(() => tracer.one("missing")).toThrow("expected one span 'missing', found 0")
        tracer.clear()
        expect(tracer.spans).toHaveLength(0)
      }).pipe(Effect.provide(tracer.layer))
    })
  })
})

describe("Tracing.contain", () => {
  const throwingSpan = Tracer.make({
    span: () => {
      throw new Error("span() down")
    },
    context: (f) => f()
  })

  it.effect("a tracer whose span() throws: the effect runs, spans below it still nest", () =>
    Effect.gen(function*() {
      const program = Effect.gen(function*() {
        const outer = yield* Effect.currentSpan
        const inner = yield* Effect.currentSpan.pipe(Effect.withSpan("inner"))
        return { outer, inner }
      }).pipe(Effect.withSpan("outer"))
      const { inner, outer } = yield* program.pipe(Tracing.contain, Effect.withTracer(throwingSpan))
      expect(inner.traceId).toBe(outer.traceId)
      expect(Option.getOrUndefined(inner.parent)?.spanId).toBe(outer.spanId)
      // without contain it is a defect
      const exit = yield* Effect.exit(program.pipe(Effect.withTracer(throwingSpan)))
      expect(Exit.isFailure(exit)).toBe(true)
    }))

  it.effect("failures and interruptions still end every span of a working tracer, through the wrapper", () =>
    Effect.gen(function*() {
      const tracer = Tracing.recording()
      const exit = yield* Effect.exit(
        Effect.fail("no").pipe(
          Effect.withSpan("inner"),
          Effect.withSpan("outer"),
          Tracing.contain,
          Effect.provide(tracer.layer)
        )
      )
      expect(Exit.isFailure(exit)).toBe(true)
      expect(tracer.spans.map((s) => [s.name, s.ended])).toEqual([["outer", true], ["inner", true]])
      expect(tracer.childrenOf(tracer.one("outer")).map((s) => s.name)).toEqual(["inner"])
    }))

  it.effect("is applied once: a nested contain reuses the wrapper, and one wrapper is made per tracer", () =>
    Effect.gen(function*() {
      const tracer = Tracing.recording()
      const read = Effect.tracer.pipe(Tracing.contain)
      const [a, b, c] = yield* Effect.all([read, read.pipe(Tracing.contain), read]).pipe(Effect.provide(tracer.layer))
      expect(a).toBe(b)
      expect(a).toBe(c)
    }))

  it.effect("leaves Effect's own default tracer as it is (its spans never throw); any other tracer is wrapped", () =>
    Effect.gen(function*() {
      const native = yield* Effect.tracer
      expect(yield* Effect.tracer.pipe(Tracing.contain)).toBe(native)
      const bare = yield* Effect.currentSpan.pipe(Effect.withSpan("bare"))
      const inside = yield* Effect.currentSpan.pipe(Effect.withSpan("inside"), Tracing.contain)
      expect(Object.getPrototypeOf(inside)).toBe(Object.getPrototypeOf(bare))
      // the same span maker behind another tracer object is not Effect's tracer: it is wrapped
      const other = Tracer.make({ span: native.span.bind(native), context: native.context.bind(native) })
      const wrapped = yield* Effect.tracer.pipe(Tracing.contain, Effect.withTracer(other))
      expect(wrapped).not.toBe(other)
      const span = yield* Effect.currentSpan.pipe(Effect.withSpan("wrapped"), Tracing.contain, Effect.withTracer(other))
      expect(Object.getPrototypeOf(span)).not.toBe(Object.getPrototypeOf(bare))
    }))

  it.live("the tracer's context hook sees its own span as the fiber's current one, the innermost as spans open and end", () =>
    Effect.gen(function*() {
      const native = yield* Effect.tracer
      const own = new Set<Tracer.AnySpan>()
      // what the hook saw as the fiber's current span, step by step: the name of one of the
      // tracer's own spans, "none", or "another" (the wrapper the run holds, say)
      const seen: Array<string> = []
      const tracer = Tracer.make({
        span: (...args) => {
          const span = native.span(...args)
          own.add(span)
          return span
        },
        context: (execution, fiber) => {
          const current = fiber.currentSpan
          seen.push(current === undefined ? "none" : own.has(current) ? (current as Tracer.Span).name : "another")
          return execution()
        }
      })
      const spans = yield* Effect.gen(function*() {
        const outer = yield* Effect.currentSpan
        const from = seen.length
        // steps inside a span opened after this one started, across an asynchronous boundary
        const inner = yield* Effect.currentSpan.pipe(Effect.delay("1 millis"), Tracing.span("inner"))
        expect(seen.slice(from)).toContain("inner")
        const after = seen.length
        yield* Effect.yieldNow()
        // once it ended, the outer one again
        expect(seen.slice(after)).toEqual(expect.arrayContaining(["outer"]))
        expect(seen.slice(after)).not.toContain("inner")
        return [outer, inner]
      }).pipe(Tracing.span("outer"), Tracing.contain, Effect.withTracer(tracer))
      expect(seen).toContain("outer")
      expect(seen).not.toContain("another")
      // the run itself still holds the contained spans
      expect(spans.some((span) => own.has(span))).toBe(false)
    }))

  it.effect("an array attribute reaches an OpenTelemetry-backed span as an array, on both its spans, never as its JSON text", () =>
    Effect.gen(function*() {
      const set: Array<[string, unknown]> = []
      const spans: Array<Tracer.Span> = []
      const otelTracer = Tracer.make({
        span(name, parent, context, links, startTime, kind) {
          const attributes = new Map<string, unknown>()
          const span = {
            [Symbol.for("@effect/opentelemetry/Tracer/OtelSpan")]: true,
            span: { setAttribute: (key: string, value: unknown) => set.push([key, value]) },
            _tag: "Span",
            name,
            spanId: "1".padStart(16, "0"),
            traceId: "1".padStart(32, "0"),
            parent,
            context,
            status: { _tag: "Started", startTime },
            attributes,
            links,
            sampled: true,
            kind,
            end() {},
            // as @effect/opentelemetry's: the OpenTelemetry span gets the value's text
            attribute(key: string, value: unknown) {
              set.push([key, typeof value === "object" ? JSON.stringify(value) : value])
              attributes.set(key, value)
            },
            event() {},
            addLinks() {}
          } as Tracer.Span
          spans.push(span)
          return span
        },
        context: (f) => f()
      })
      yield* Tracing.annotate({ reasons: ["end_turn"], model: "m" }).pipe(
        Effect.withSpan("chat"),
        Tracing.contain,
        Effect.withTracer(otelTracer)
      )
      expect(set).toEqual([["reasons", ["end_turn"]], ["model", "m"]])
      expect([...spans[0]!.attributes]).toEqual([["reasons", ["end_turn"]], ["model", "m"]])
    }))
})

describe("Tracing.span", () => {
  it.effect("is Effect.withSpan's span: the parent of the spans inside, attributes at the start and from the outcome, ended with the exit", () => {
    const tracer = Tracing.recording()
    return Effect.gen(function*() {
      const value = yield* Effect.succeed(7).pipe(
        Effect.withSpan("inner"),
        Tracing.span("outer", {
          kind: "client",
          attributes: { start: "s" },
          onEnd: (exit) => (Exit.isSuccess(exit) ? { result: exit.value } : undefined)
        }),
        Effect.withSpan("root")
      )
      expect(value).toBe(7)
      const outer = tracer.one("outer")
      expect(outer.kind).toBe("client")
      expect(outer.parentSpanId).toBe(tracer.one("root").spanId)
      expect(tracer.one("inner").parentSpanId).toBe(outer.spanId)
      expect(outer.attributes.get("start")).toBe("s")
      expect(outer.attributes.get("result")).toBe(7)
      expect(outer.ended).toBe(true)
      expect(Exit.isSuccess(outer.exit!)).toBe(true)
      // the caller's parent is back once the span ended
      expect((yield* Effect.currentSpan.pipe(Effect.withSpan("after"))).parent).toEqual(Option.none())
    }).pipe(Effect.provide(tracer.layer))
  })

  it.effect("a failure and an interruption end the span with their exit; onEnd sees the failure; the current span is restored", () => {
    const tracer = Tracing.recording()
    return Effect.gen(function*() {
      const failed = yield* Effect.exit(
        Effect.fail("boom").pipe(
          Tracing.span("fails", { onEnd: (exit) => (Exit.isFailure(exit) ? { failed: true } : undefined) })
        )
      )
      expect(Exit.isFailure(failed)).toBe(true)
      expect(tracer.one("fails").attributes.get("failed")).toBe(true)
      expect(Exit.isFailure(tracer.one("fails").exit!)).toBe(true)

      const fiber = yield* Effect.fork(Effect.never.pipe(Tracing.span("waits")))
      yield* Effect.yieldNow()
      expect(tracer.one("waits").ended).toBe(false)
      yield* Fiber.interrupt(fiber)
      const waits = tracer.one("waits")
      expect(waits.ended).toBe(true)
      expect(Exit.isInterrupted(waits.exit!)).toBe(true)
      expect(Option.isNone(yield* Effect.option(Effect.currentSpan))).toBe(true)
    }).pipe(Effect.provide(tracer.layer))
  })

  it.effect("only the span's parent is put back when it ends: a fiber ref set inside is kept, on success and on failure, nested or not", () => {
    const tracer = Tracing.recording()
    const counter = FiberRef.unsafeMake(0)
    const currentName = Effect.map(Effect.option(Effect.currentSpan), Option.map((span) => span.name))
    return Effect.gen(function*() {
      yield* FiberRef.set(counter, 1).pipe(Tracing.span("sets"))
      expect(yield* FiberRef.get(counter)).toBe(1)
      expect(yield* currentName).toEqual(Option.none())

      const failed = yield* Effect.exit(
        FiberRef.set(counter, 2).pipe(Effect.zipRight(Effect.fail("boom")), Tracing.span("sets then fails"))
      )
      expect(Exit.isFailure(failed)).toBe(true)
      expect(yield* FiberRef.get(counter)).toBe(2)
      expect(yield* currentName).toEqual(Option.none())

      // nested: nothing changes inside the inner span, the outer one sets the ref after it
      const seen = yield* Effect.gen(function*() {
        const inside = yield* currentName.pipe(Tracing.span("inner"))
        const after = yield* currentName
        yield* FiberRef.set(counter, 3)
        return [inside, after]
      }).pipe(Tracing.span("outer"))
      expect(seen).toEqual([Option.some("inner"), Option.some("outer")])
      expect(yield* FiberRef.get(counter)).toBe(3)
      expect(yield* currentName).toEqual(Option.none())
    }).pipe(Effect.provide(tracer.layer))
  })

  // Tracing.span makes the span itself (not through Effect.makeSpan): each case below runs the same
  // program once with Effect.withSpan and once with Tracing.span and compares what was recorded.
  type Open = (
    name: string,
    options?: Tracer.SpanOptions
  ) => <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  const withSpan: Open = (name, options = {}) => (self) => Effect.withSpan(self, name, options)
  const viaTracing: Open = (name, options = {}) => <A, E, R>(self: Effect.Effect<A, E, R>) =>
    Tracing.span<A, E>(name, { ...options, captureStackTrace: false })(self)
  const both = (make: (open: Open) => Effect.Effect<unknown>) =>
    Effect.gen(function*() {
      const shapes = []
      for (const open of [withSpan, viaTracing]) {
        const tracer = Tracing.recording()
        yield* make(open).pipe(Effect.provide(tracer.layer))
        shapes.push(
          tracer.spans.map((span) => ({
            name: span.name,
            id: span.spanId,
            parent: Option.isSome(span.parent) ? span.parent.value.spanId : undefined,
            kind: span.kind,
            attributes: Object.fromEntries(span.attributes),
            links: span.links.map((link) => link.span.spanId),
            timed: span.status.startTime > BigInt(0),
            ended: span.ended
          }))
        )
      }
      return shapes as [unknown, unknown]
    })

  it.live("sees the fiber's span annotations and links, then its own attributes, as Effect.withSpan does", () =>
    Effect.gen(function*() {
      const external = Tracer.externalSpan({ spanId: "00000000000000aa", traceId: "000000000000000000000000000000bb" })
      const [withSpan, span] = yield* both((open) =>
        Effect.succeed(1).pipe(
          open("target", {
            kind: "server",
            attributes: { own: "yes", shared: "own" },
            links: [{ _tag: "SpanLink", span: external, attributes: {} }]
          }),
          Effect.annotateSpans({ annotated: "from the fiber", shared: "annotation" }),
          Effect.linkSpans(
            Tracer.externalSpan({ spanId: "00000000000000cc", traceId: "000000000000000000000000000000dd" })
          ),
          open("root")
        )
      )
      expect(span).toEqual(withSpan)
      expect(span).toContainEqual(expect.objectContaining({
        name: "target",
        kind: "server",
        attributes: { annotated: "from the fiber", own: "yes", shared: "own" },
        links: ["00000000000000cc", "00000000000000aa"],
        timed: true
      }))
    }))

  it.live("skips a parent whose context disables propagation; root and an explicit parent as Effect.withSpan", () =>
    Effect.gen(function*() {
      const external = Tracer.externalSpan({ spanId: "00000000000000ee", traceId: "000000000000000000000000000000ff" })
      const [withSpan, span] = yield* both((open) =>
        Effect.all([
          Effect.void.pipe(open("under the hidden one")),
          Effect.void.pipe(open("a root", { root: true })),
          Effect.void.pipe(open("explicit", { parent: external })),
          Effect.void.pipe(open("hidden too", { context: Context.make(Tracer.DisablePropagation, true) }))
        ]).pipe(
          open("hidden", { context: Context.make(Tracer.DisablePropagation, true) }),
          open("root")
        )
      )
      expect(span).toEqual(withSpan)
      const byName = new Map(
        (span as ReadonlyArray<{ name: string; id: string; parent: string | undefined }>).map((s) => [s.name, s])
      )
      expect([...byName.keys()]).toEqual(["root", "under the hidden one", "a root", "explicit"])
      expect(byName.get("under the hidden one")!.parent).toBe(byName.get("root")!.id)
      expect(byName.get("a root")!.parent).toBeUndefined()
      expect(byName.get("explicit")!.parent).toBe("00000000000000ee")
    }))

  it.live("with the tracer disabled or timing off, as Effect.withSpan: no span recorded, or a span without a start time", () =>
    Effect.gen(function*() {
      const [withSpan, span] = yield* both((open) =>
        Effect.all([
          Effect.void.pipe(open("not recorded"), Effect.withTracerEnabled(false)),
          Effect.void.pipe(open("untimed"), Effect.withTracerTiming(false))
        ])
      )
      expect(span).toEqual(withSpan)
      expect(span).toEqual([expect.objectContaining({ name: "untimed", timed: false, ended: true })])
    }))

  it.effect("an onEnd that throws, or a tracer that throws on attributes, never breaks the effect", () => {
    const broken = brokenTracer()
    return Effect.gen(function*() {
      const a = yield* Effect.succeed("ok").pipe(Tracing.span("a", {
        onEnd: () => {
          throw new Error("no attributes")
        }
      }))
      const b = yield* Effect.succeed("ok").pipe(Tracing.span("b", { onEnd: () => ({ key: "value" }) }))
      expect([a, b]).toEqual(["ok", "ok"])
      expect(broken.attributeCalls).toBeGreaterThan(0)
    }).pipe(Effect.provide(broken.layer))
  })
})

describe("Tracing.span with Effect's own tracer", () => {
  type Open = (
    name: string,
    options: Tracer.SpanOptions
  ) => <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  const withSpanOf: Open = (name, options) => (self) => Effect.withSpan(self, name, options)
  const tracingSpanOf: Open = (name, options) => <A, E, R>(self: Effect.Effect<A, E, R>) =>
    Tracing.span<A, E>(name, { ...options, captureStackTrace: false })(self)

  // What a span of Effect's default tracer shows whoever reads it (Effect.currentSpan, a child
  // span, a test): Tracing.span's must show the same as Effect.withSpan's, though it makes its ids
  // and its attribute map only when they are read.
  const shapeOf = (span: Tracer.Span, root: Tracer.Span, child: Tracer.Span) => ({
    name: span.name,
    kind: span.kind,
    parent: Option.isSome(span.parent) && span.parent.value === root,
    sameTrace: span.traceId === root.traceId && child.traceId === span.traceId,
    childOf: Option.isSome(child.parent) && child.parent.value === span,
    ids: [
      /^[0-9a-f]{16}$/.test(span.spanId),
      span.spanId === span.spanId,
      span.spanId !== root.spanId && span.spanId !== child.spanId
    ],
    attributes: [...span.attributes],
    links: span.links.map((link) => link.span.spanId),
    events: (span as unknown as { events: ReadonlyArray<readonly [string, bigint, unknown]> }).events,
    status: span.status._tag,
    succeeded: span.status._tag === "Ended" && Exit.isSuccess(span.status.exit),
    sampled: span.sampled
  })

  it.effect("shows what Effect.withSpan's shows: parent, trace, ids, kind, links, events, annotations then attributes in order, status", () =>
    Effect.gen(function*() {
      const linked = Tracer.externalSpan({ spanId: "00000000000000aa", traceId: "000000000000000000000000000000bb" })
      const shapes = []
      for (const open of [withSpanOf, tracingSpanOf]) {
        const seen = yield* Effect.gen(function*() {
          const root = yield* Effect.currentSpan
          const [span, child] = yield* Effect.gen(function*() {
            yield* Effect.annotateCurrentSpan("during", 1)
            const span = yield* Effect.currentSpan
            const child = yield* Effect.currentSpan.pipe(Effect.withSpan("child"))
            span.event("happened", BigInt(5), { a: 1 })
            return [span, child] as const
          }).pipe(
            open("outer", {
              kind: "client",
              attributes: { start: "s", nothing: undefined },
              links: [{ _tag: "SpanLink", span: linked, attributes: {} }]
            }),
            Effect.annotateSpans("annotation", "x")
          )
          return { root, span, child }
        }).pipe(Effect.withSpan("root"))
        shapes.push(shapeOf(seen.span, seen.root, seen.child))
      }
      expect(shapes[1]).toEqual(shapes[0])
      expect(shapes[0]!.attributes).toEqual([["annotation", "x"], ["start", "s"], ["nothing", undefined], [
        "during",
        1
      ]])
      expect(shapes[0]!.links).toEqual(["00000000000000aa"])
    }))

  it.effect("a root span has its own trace id; the ids are made once", () =>
    Effect.gen(function*() {
      const span = yield* Effect.currentSpan.pipe(Tracing.span("root"))
      expect(span.traceId).toMatch(/^[0-9a-f]{32}$/)
      expect(span.traceId).toBe(span.traceId)
      expect(span.spanId).toBe(span.spanId)
      const other = yield* Effect.currentSpan.pipe(Tracing.span("other"))
      expect(other.traceId).not.toBe(span.traceId)
    }))

  it.effect("onEnd's attributes come last, without those it sets to undefined, whether or not the map was read before the end", () =>
    Effect.gen(function*() {
      for (const readEarly of [false, true]) {
        const span = yield* Effect.gen(function*() {
          const span = yield* Effect.currentSpan
          if (readEarly) expect([...span.attributes]).toEqual([["start", 1]])
          span.attribute("middle", 2)
          return span
        }).pipe(
          Tracing.span("ends", { attributes: { start: 1 }, onEnd: () => ({ end: 3, start: 4, skipped: undefined }) })
        )
        expect([readEarly, [...span.attributes]]).toEqual([readEarly, [["start", 4], ["middle", 2], ["end", 3]]])
        expect(span.status._tag).toBe("Ended")
      }
    }))
})
