import { Agent, ReActCognition } from "@agentkit/agents"
import {
  BudgetExceeded,
  Cancelled,
  ChatModelError,
  ConfigurationError,
  Invoker,
  RunContext,
  ToolArgumentError,
  ToolDenied,
  ToolExecutionError,
  ToolShapeError,
  ToolTimeoutError,
  Tracing
} from "@agentkit/core"
import type { ChatMiddleware, ToolMiddleware } from "@agentkit/core"
import { CircuitBreaker, CircuitOpen, EgressDenied, Retry } from "@agentkit/middleware"
import { FakeLLM, Fixture, makeTestCtx, runWithClock, Turn } from "@agentkit/testing"
import { HttpClientError, HttpClientRequest, HttpClientResponse } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Fiber, Layer, Schedule, TestClock } from "effect"
import { call, countingTool, setup } from "./fixtures.js"

const { replying: model } = FakeLLM
const { badRequestError: badRequest, request, response, timeoutError: timeout } = Fixture

const flakyModel = (failures: number, error = timeout()) =>
  model((n, req, emit) => {
    if (n <= failures) return Effect.fail(error)
    emit({ text: "ok" })
    return Effect.succeed(response({ model: req.model }))
  })

describe("Retry on the chat pipeline", () => {
  it.effect("a provider blip is retried: 2 model calls, both counted against maxModelCalls, the answer charged once", () => {
    const llm = flakyModel(1)
    const tracer = Tracing.recording()
    const layer = setup({ chatModel: llm.layer, chatMiddleware: [Retry.retry({ maxAttempts: 3 })] })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      const exit = yield* runWithClock(invoker.chat(request("m")))
      const answer = yield* exit
      expect(answer.content).toBe("ok")
      expect(llm.calls).toBe(2)
      const run = yield* RunContext
      expect(run.budget.spentUsd).toBe(0.01)
      expect(run.budget.modelCalls).toBe(2)
      const span = tracer.one("chat m")
      expect(span.attributes.get("gen_ai.request.model")).toBe("m")
      expect(span.attributes.get("gen_ai.usage.input_tokens")).toBe(100)
      const events = span.events.filter((event) => event.name === "retry.attempt")
      expect(events).toHaveLength(1)
      expect(events[0]!.attributes).toMatchObject({
        attempt: 2,
        last_error_type: "ChatModelError",
        last_error_message: "temporary upstream timeout"
      })
      const backoff = events[0]!.attributes["backoff_ms"] as number
      expect(Number.isInteger(backoff)).toBe(true)
      expect(backoff).toBeGreaterThanOrEqual(0)
      expect(backoff).toBeLessThan(500)
    }).pipe(Effect.provide(layer), Effect.provide(tracer.layer))
  })

  it.effect("each attempt sees the iteration metadata Effect.retry gives it; a call that succeeds at once sees the default", () => {
    const seen: Array<number> = []
    const llm = model((n, req, emit) =>
      Effect.flatMap(Schedule.CurrentIterationMetadata, (meta) => {
        seen.push(meta.recurrence)
        if (n <= 2) return Effect.fail(timeout())
        emit({ text: "ok" })
        return Effect.succeed(response({ model: req.model }))
      })
    )
    const layer = setup({ chatModel: llm.layer, chatMiddleware: [Retry.retry({ maxAttempts: 3 })] })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      expect((yield* yield* runWithClock(invoker.chat(request("m")))).content).toBe("ok")
      expect(seen).toEqual([0, 1, 2])
      expect((yield* yield* runWithClock(invoker.chat(request("m")))).content).toBe("ok")
      expect(seen).toEqual([0, 1, 2, 0])
    }).pipe(Effect.provide(layer))
  })

  it.effect("one retry.attempt event per failed attempt; the message is cut to 500 characters", () => {
    const llm = flakyModel(2, timeout("x".repeat(800)))
    const tracer = Tracing.recording()
    const layer = setup({ chatModel: llm.layer, chatMiddleware: [Retry.retry({ maxAttempts: 3 })] })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      yield* Effect.flatten(runWithClock(invoker.chat(request("m"))))
      const events = tracer.one("chat m").events.filter((event) => event.name === "retry.attempt")
      expect(events.map((event) => event.attributes["attempt"])).toEqual([2, 3])
      expect((events[0]!.attributes["last_error_message"] as string).length).toBe(500)
    }).pipe(Effect.provide(layer), Effect.provide(tracer.layer))
  })

  it.effect("backoff is full-jitter exponential: nothing happens until the clock moves", () => {
    const llm = flakyModel(2)
    const layer = setup({
      chatModel: llm.layer,
      chatMiddleware: [Retry.retry({ maxAttempts: 3, baseDelay: "1 second", maxDelay: "1 minute" })]
    })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      const fiber = yield* Effect.fork(invoker.chat(request("m")))
      yield* Effect.yieldNow()
      expect(llm.calls).toBe(1)
      // attempt 2 waits < 1 s, attempt 3 waits < 2 s more
      yield* TestClock.adjust("1 second")
      expect(llm.calls).toBeGreaterThanOrEqual(2)
      yield* TestClock.adjust("2 seconds")
      expect(llm.calls).toBe(3)
      expect((yield* Fiber.join(fiber)).content).toBe("ok")
    }).pipe(Effect.provide(layer))
  })

  it.effect("your own Schedule replaces the backoff: fixed 1 s waits, stopping when the schedule does", () => {
    const llm = flakyModel(10)
    const tracer = Tracing.recording()
    const layer = setup({
      chatModel: llm.layer,
      chatMiddleware: [
        Retry.retry({ schedule: Schedule.spaced("1 second").pipe(Schedule.compose(Schedule.recurs(3))) })
      ]
    })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      const fiber = yield* Effect.fork(invoker.chat(request("m")))
      yield* Effect.yieldNow()
      expect(llm.calls).toBe(1)
      yield* TestClock.adjust("999 millis")
      expect(llm.calls).toBe(1)
      yield* TestClock.adjust("1 millis")
      expect(llm.calls).toBe(2)
      yield* TestClock.adjust("2 seconds")
      expect(llm.calls).toBe(4)
      // the schedule allowed 3 retries: the 4th failure propagates
      expect(yield* Effect.flip(Fiber.join(fiber))).toStrictEqual(timeout())
      const waits = tracer.one("chat m").events.filter((e) => e.name === "retry.attempt").map((e) =>
        e.attributes["backoff_ms"]
      )
      expect(waits).toEqual([1000, 1000, 1000])
    }).pipe(Effect.provide(layer), Effect.provide(tracer.layer))
  })

  it.effect("with your own Schedule, maxAttempts still bounds the attempts and retryAfter is still the least wait", () => {
    const limited = new ChatModelError({
      reason: "rate_limit",
      retryable: true,
      message: "429",
      retryAfter: Duration.seconds(5)
    })
    const llm = flakyModel(10, limited)
    const layer = setup({
      chatModel: llm.layer,
      chatMiddleware: [Retry.retry({ schedule: Schedule.spaced("1 second"), maxAttempts: 2 })]
    })
    return Effect.gen(function*() {
      const fiber = yield* Effect.fork((yield* Invoker).chat(request("m")))
      yield* TestClock.adjust("4 seconds")
      expect(llm.calls).toBe(1)
      yield* TestClock.adjust("1 second")
      expect(llm.calls).toBe(2)
      expect((yield* Effect.flip(Fiber.join(fiber))).message).toBe("429")
      expect(llm.calls).toBe(2)
    }).pipe(Effect.provide(layer))
  })

  it("a schedule that is not a Schedule is a ConfigurationError", () => {
    expect(() => Retry.retry({ schedule: "1 second" as never })).toThrow("retry.schedule must be an Effect Schedule")
  })

  it.effect("the attempts run out: the last error propagates", () => {
    const llm = flakyModel(5)
    const layer = setup({ chatModel: llm.layer, chatMiddleware: [Retry.retry({ maxAttempts: 3 })] })
    return Effect.gen(function*() {
      const exit = yield* runWithClock((yield* Invoker).chat(request("m")))
      expect(exit).toStrictEqual(Exit.fail(timeout()))
      expect(llm.calls).toBe(3)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a non-retryable provider error is not retried", () => {
    const llm = flakyModel(5, badRequest())
    const layer = setup({ chatModel: llm.layer, chatMiddleware: [Retry.retry()] })
    return Effect.gen(function*() {
      const error = yield* Effect.flip((yield* Invoker).chat(request("m")))
      expect(error.message).toBe("400 bad request")
      expect(llm.calls).toBe(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("once a delta reached emit, a failure propagates (text was shown)", () => {
    const llm = model((_n, _req, emit) => {
      emit({ text: "partial" })
      return Effect.fail(timeout())
    })
    const layer = setup({ chatModel: llm.layer, chatMiddleware: [Retry.retry({ maxAttempts: 5 })] })
    return Effect.gen(function*() {
      const shown: Array<string> = []
      const error = yield* Effect.flip((yield* Invoker).chat(request("m"), { emit: (d) => shown.push(d.text) }))
      expect(error._tag).toBe("ChatModelError")
      expect(llm.calls).toBe(1)
      expect(shown).toEqual(["partial"])
    }).pipe(Effect.provide(layer))
  })

  it.effect("retryAfter is honoured: the wait is at least that long", () => {
    const llm = flakyModel(
      1,
      new ChatModelError({ reason: "rate_limit", retryable: true, message: "429", retryAfter: Duration.seconds(10) })
    )
    const layer = setup({ chatModel: llm.layer, chatMiddleware: [Retry.retry({ baseDelay: "1 millis" })] })
    return Effect.gen(function*() {
      const fiber = yield* Effect.fork((yield* Invoker).chat(request("m")))
      yield* TestClock.adjust("9 seconds")
      expect(llm.calls).toBe(1)
      yield* TestClock.adjust("1 second")
      expect(llm.calls).toBe(2)
      expect((yield* Fiber.join(fiber)).content).toBe("ok")
    }).pipe(Effect.provide(layer))
  })

  it.effect("a retryAfter longer than maxDelay is not waited for: the error propagates", () => {
    const llm = flakyModel(
      1,
      new ChatModelError({ reason: "rate_limit", retryable: true, message: "429", retryAfter: Duration.minutes(5) })
    )
    const layer = setup({ chatModel: llm.layer, chatMiddleware: [Retry.retry({ maxDelay: "30 seconds" })] })
    return Effect.gen(function*() {
      const error = yield* Effect.flip((yield* Invoker).chat(request("m")))
      expect(error.message).toBe("429")
      expect(llm.calls).toBe(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("BudgetExceeded and Cancelled from inside the pipeline are never retried", () => {
    let calls = 0
    const failing = (error: BudgetExceeded | Cancelled): ChatMiddleware => () => () =>
      Effect.suspend(() => {
        calls++
        return Effect.fail(error as BudgetExceeded)
      })
    const budget = new BudgetExceeded({ limit: "quota", message: "org1:dom1: 1 req ≥ 1 rpm" })
    return Effect.gen(function*() {
      const a = yield* Effect.flip(
        Effect.flatMap(Invoker, (i) => i.chat(request())).pipe(
          Effect.provide(setup({ chatMiddleware: [Retry.retry(), failing(budget)] }))
        )
      )
      expect(a._tag).toBe("BudgetExceeded")
      expect(a.message).toBe(budget.message)
      expect(calls).toBe(1)
      const b = yield* Effect.flip(
        Effect.flatMap(Invoker, (i) => i.chat(request())).pipe(
          Effect.provide(setup({ chatMiddleware: [Retry.retry(), failing(new Cancelled())] }))
        )
      )
      expect(b._tag).toBe("Cancelled")
      expect(calls).toBe(2)
    })
  })

  it.effect("an interrupted call is not retried", () => {
    const llm = model(() => Effect.interrupt)
    const layer = setup({ chatModel: llm.layer, chatMiddleware: [Retry.retry()] })
    return Effect.gen(function*() {
      const exit = yield* Effect.exit((yield* Invoker).chat(request("m")))
      expect(Exit.isInterrupted(exit)).toBe(true)
      expect(llm.calls).toBe(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("bad options throw ConfigurationError when the middleware is made", () =>
    Effect.sync(() => {
      expect(() => Retry.retry({ maxAttempts: 0 })).toThrow(ConfigurationError)
      expect(() => Retry.retry({ baseDelay: "soon" as never })).toThrow(
        "retry.baseDelay must be a non-negative duration"
      )
      expect(() => Retry.retry({ breaker: { failureThreshold: 0 } })).toThrow(
        "breaker.failureThreshold must be a positive integer"
      )
    }))
})

describe("Retry with a circuit breaker", () => {
  it.effect("threshold 2, the model always times out: 2 calls, then 'circuit open'", () => {
    const llm = flakyModel(100)
    const breaker = CircuitBreaker.make({ name: "llm", failureThreshold: 2, cooldown: "15 seconds" })
    const layer = setup({ chatModel: llm.layer, chatMiddleware: [Retry.retry({ maxAttempts: 3, breaker })] })
    return Effect.gen(function*() {
      const exit = yield* runWithClock((yield* Invoker).chat(request("m")), "1 second")
      expect(llm.calls).toBe(2)
      expect(breaker.state).toBe("open")
      const error = yield* Effect.flip(exit)
      expect(error).toBeInstanceOf(ChatModelError)
      expect(error.message).toBe("circuit open: llm")
      expect((error as ChatModelError).retryable).toBe(true)
      expect((error as ChatModelError).cause).toBeInstanceOf(CircuitOpen)
      // while open, calls are refused without reaching the model
      yield* Effect.flip((yield* Invoker).chat(request("m")))
      expect(llm.calls).toBe(2)
    }).pipe(Effect.provide(layer))
  })

  it.effect("after the cooldown one probe goes through; its success closes the circuit", () => {
    let healthy = false
    let release: (() => void) | undefined
    const llm = model((_n, req) => {
      if (!healthy) return Effect.fail(timeout())
      // the probe waits until the test lets it finish
      return Effect.as(
        Effect.async<void>((resume) => {
          release = () => resume(Effect.void)
        }),
        response({ model: req.model })
      )
    })
    const breaker = CircuitBreaker.make({ failureThreshold: 1, cooldown: "10 seconds" })
    const layer = setup({ chatModel: llm.layer, chatMiddleware: [Retry.retry({ maxAttempts: 1, breaker })] })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      yield* Effect.flip(invoker.chat(request("m")))
      expect(breaker.state).toBe("open")
      expect((yield* Effect.flip(invoker.chat(request("m")))).message).toBe("circuit open: circuit")
      yield* TestClock.adjust("10 seconds")
      healthy = true
      const probe = yield* Effect.fork(invoker.chat(request("m")))
      yield* Effect.yieldNow()
      expect(breaker.state).toBe("half_open")
      // a single probe: everyone else is refused while it is in flight
      expect((yield* Effect.flip(invoker.chat(request("m")))).message).toBe("circuit open: circuit")
      expect(llm.calls).toBe(2)
      release!()
      expect((yield* Fiber.join(probe)).content).toBe("ok")
      expect(breaker.state).toBe("closed")
    }).pipe(Effect.provide(layer))
  })

  it.effect("a failed probe opens the circuit again for a new cooldown", () =>
    Effect.gen(function*() {
      const breaker = CircuitBreaker.make({ failureThreshold: 1, cooldown: "10 seconds" })
      const fail = breaker.protect(Effect.fail("boom"), () => true)
      yield* Effect.flip(fail)
      expect(breaker.state).toBe("open")
      yield* TestClock.adjust("10 seconds")
      expect(yield* Effect.flip(fail)).toBe("boom") // the probe ran and failed
      expect(breaker.state).toBe("open")
      yield* TestClock.adjust("9 seconds")
      expect(yield* Effect.flip(fail)).toBeInstanceOf(CircuitOpen)
      yield* TestClock.adjust("1 second")
      yield* breaker.protect(Effect.void, () => true)
      expect(breaker.state).toBe("closed")
      expect(breaker.failures).toBe(0)
    }))

  it.effect("uncounted failures and interrupted probes free the probe slot without closing", () =>
    Effect.gen(function*() {
      const breaker = CircuitBreaker.make({ failureThreshold: 1, cooldown: "1 second" })
      yield* Effect.flip(breaker.protect(Effect.fail("down"), () => true))
      yield* TestClock.adjust("1 second")
      // a probe whose failure does not count: still open, and the next call may probe at once
      yield* Effect.flip(breaker.protect(Effect.fail("bad argument"), () => false))
      expect(breaker.state).toBe("open")
      yield* Effect.exit(breaker.protect(Effect.interrupt, () => true))
      expect(breaker.state).toBe("open")
      yield* breaker.protect(Effect.void, () => true)
      expect(breaker.state).toBe("closed")
    }))

  it.effect("breaker options make one breaker per model, named after it", () => {
    const llm = model((
      _n,
      req
    ) => (req.model === "bad" ? Effect.fail(timeout()) : Effect.succeed(response({ model: req.model }))))
    const layer = setup({
      chatModel: llm.layer,
      chatMiddleware: [Retry.retry({ maxAttempts: 1, breaker: { failureThreshold: 1 } })]
    })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      yield* Effect.flip(invoker.chat(request("bad")))
      expect((yield* Effect.flip(invoker.chat(request("bad")))).message).toBe("circuit open: bad")
      expect((yield* invoker.chat(request("good"))).content).toBe("ok")
    }).pipe(Effect.provide(layer))
  })

  it.effect("a refused tool call is a ToolDenied the model can read, with a circuit.open event", () => {
    const flaky = countingTool("lookup", { sideEffecting: false, idempotent: true }, () => {
      throw new Error("ECONNRESET")
    })
    const tracer = Tracing.recording()
    const layer = setup({ toolMiddleware: [Retry.retry({ maxAttempts: 1, breaker: { failureThreshold: 1 } })] })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      yield* Effect.flip(invoker.tool(call("lookup"), flaky.tool))
      const denied = yield* Effect.flip(invoker.tool(call("lookup"), flaky.tool))
      expect(denied).toBeInstanceOf(ToolDenied)
      expect(denied.message).toBe("circuit open: lookup")
      expect(flaky.count).toBe(1)
      expect(tracer.named("execute_tool lookup")[1]!.events.map((e) => e.name)).toContain("circuit.open")
    }).pipe(Effect.provide(layer), Effect.provide(tracer.layer))
  })
})

describe("Retry on the tool pipeline", () => {
  it.effect("a flaky idempotent tool is retried to success", () => {
    const flaky = countingTool("lookup", { sideEffecting: false, idempotent: true }, (n) => {
      if (n === 1) throw new Error("ECONNRESET")
      return "found"
    })
    const layer = setup({ toolMiddleware: [Retry.retry({ maxAttempts: 3 })] })
    return Effect.gen(function*() {
      const exit = yield* runWithClock((yield* Invoker).tool(call("lookup"), flaky.tool))
      expect((yield* exit).text).toBe("found")
      expect(flaky.count).toBe(2)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a flaky side-effecting, non-idempotent tool runs exactly once", () => {
    const charge = countingTool("charge", { sideEffecting: true }, () => {
      throw new Error("gateway timeout")
    })
    const layer = setup({ toolMiddleware: [Retry.retry({ maxAttempts: 5 })] })
    return Effect.gen(function*() {
      const error = yield* Effect.flip((yield* Invoker).tool(call("charge"), charge.tool))
      expect(error).toBeInstanceOf(ToolExecutionError)
      expect(charge.count).toBe(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a failure before the tool started is retried even for a non-idempotent tool", () => {
    let refusals = 0
    // an inner middleware that fails (retryably) twice before letting the call through
    const flakyGate: ToolMiddleware = (next) => (invocation) =>
      Effect.suspend(() =>
        ++refusals <= 2
          ? Effect.fail(
            new ChatModelError({ reason: "network", retryable: true, message: "lock service down" }) as never
          )
          : next(invocation)
      )
    const charge = countingTool("charge", { sideEffecting: true })
    const layer = setup({ toolMiddleware: [Retry.retry({ maxAttempts: 3 }), flakyGate] })
    return Effect.gen(function*() {
      const exit = yield* runWithClock((yield* Invoker).tool(call("charge"), charge.tool))
      expect((yield* exit).text).toBe("ok")
      expect(refusals).toBe(3)
      expect(charge.count).toBe(1)
    }).pipe(Effect.provide(layer))
  })

  it.effect("argument, shape and denial errors are never retried", () => {
    let runs = 0
    const failWith = (error: unknown): ToolMiddleware => () => () =>
      Effect.suspend(() => {
        runs++
        return Effect.fail(error as never)
      })
    const tool = countingTool("lookup", { sideEffecting: false, idempotent: true }).tool
    const errors = [
      new ToolArgumentError({ toolName: "lookup", unexpected: ["x"], missing: [], invalid: [], accepted: [] }),
      new ToolShapeError({ toolName: "lookup", expected: "Out", raw: 1, errors: [] }),
      new ToolDenied({ toolName: "lookup", reason: "egress", message: "blocked" }),
      new ToolDenied({ toolName: "lookup", reason: "policy", message: "blocked" }),
      new BudgetExceeded({ limit: "toolCalls", message: "tool calls 3 > 2" }),
      new Cancelled()
    ]
    return Effect.gen(function*() {
      for (const error of errors) {
        runs = 0
        const layer = setup({ toolMiddleware: [Retry.retry({ maxAttempts: 5 }), failWith(error)] })
        const got = yield* Effect.flip(
          Effect.flatMap(Invoker, (i) => i.tool(call("lookup"), tool)).pipe(Effect.provide(layer))
        )
        expect((got as { readonly _tag: string })._tag).toBe(error._tag)
        expect(runs).toBe(1)
      }
    })
  })

  it.effect("a timed-out idempotent tool is retried", () => {
    const slow = countingTool(
      "lookup",
      { sideEffecting: false, idempotent: true },
      (n) => n === 1 ? Effect.fail(new ToolTimeoutError({ toolName: "lookup", timeout: "1s" })) : Effect.succeed("fast")
    )
    const layer = setup({ toolMiddleware: [Retry.retry()] })
    return Effect.gen(function*() {
      const exit = yield* runWithClock((yield* Invoker).tool(call("lookup"), slow.tool))
      expect((yield* exit).text).toBe("fast")
      expect(slow.count).toBe(2)
    }).pipe(Effect.provide(layer))
  })

  it.effect("through an agent: a flaky non-idempotent tool runs once and its error reaches the model", () => {
    const charge = countingTool("charge_card", { sideEffecting: true }, () => {
      throw new Error("card gateway timed out")
    })
    const llm = FakeLLM.script([
      Turn({ toolCalls: [{ id: "c1", name: "charge_card", arguments: { amount: 10 } }] }),
      Turn({ content: "The charge failed; please try again later." })
    ])
    const agent = Agent.make({
      name: "billing",
      model: "m",
      cognition: ReActCognition.make({ tools: [charge.tool] })
    })
    const retry = Retry.retry({ maxAttempts: 3 })
    return Effect.gen(function*() {
      const result = yield* agent.run("charge 10")
      expect(result.output).toBe("The charge failed; please try again later.")
      expect(charge.count).toBe(1)
      const toolMessage = llm.requests[1]!.messages.at(-1)!
      expect(toolMessage).toMatchObject({ role: "tool", isError: true })
      expect(toolMessage.content).toBe("ERROR: tool 'charge_card' failed: ToolExecutionError: card gateway timed out")
    }).pipe(Effect.provide(makeTestCtx({ llm, chatMiddleware: [retry], toolMiddleware: [retry] })))
  })

  it.effect("through an agent: a flaky idempotent tool is retried and the model sees the result", () => {
    const lookup = countingTool("lookup_order", { sideEffecting: false, idempotent: true }, (n) => {
      if (n < 3) throw new Error("503 upstream")
      return "order A-771: shipped"
    })
    const llm = FakeLLM.script([
      Turn({ toolCalls: [{ id: "c1", name: "lookup_order", arguments: { order_id: "A-771" } }] }),
      Turn({ content: "Shipped." })
    ])
    const agent = Agent.make({ name: "support", model: "m", cognition: ReActCognition.make({ tools: [lookup.tool] }) })
    const layer = makeTestCtx({ llm, toolMiddleware: [Retry.retry({ maxAttempts: 3 })] })
    return Effect.gen(function*() {
      const exit = yield* runWithClock(agent.run("where is A-771?").pipe(Effect.provide(layer)))
      expect((yield* exit).output).toBe("Shipped.")
      expect(lookup.count).toBe(3)
      expect(llm.requests[1]!.messages.at(-1)).toMatchObject({
        role: "tool",
        content: "order A-771: shipped",
        isError: false
      })
    })
  })
})

const requestError = (reason: "Transport" | "InvalidUrl", cause?: unknown) =>
  new HttpClientError.RequestError({ request: HttpClientRequest.get("http://127.0.0.1/"), reason, cause })

const responseError = (status: number) => {
  const request = HttpClientRequest.get("http://127.0.0.1/")
  return new HttpClientError.ResponseError({
    request,
    response: HttpClientResponse.fromWeb(request, new Response(null, { status })),
    reason: "StatusCode"
  })
}

describe("Retry.isRetryable", () => {
  it("classifies by type, never by text", () => {
    expect(Retry.isRetryable(timeout())).toBe(true)
    expect(Retry.isRetryable(badRequest())).toBe(false)
    // the text says "timeout", the type says otherwise
    expect(Retry.isRetryable(new ToolDenied({ toolName: "t", reason: "policy", message: "timeout 503" }))).toBe(false)
    expect(Retry.isRetryable(new ToolExecutionError({ toolName: "t", cause: new Error("invalid 400") }))).toBe(true)
    expect(Retry.isRetryable(new ToolExecutionError({ toolName: "t", cause: badRequest() }))).toBe(false)
    expect(Retry.isRetryable(new ToolExecutionError({ toolName: "t", cause: new Cancelled() }))).toBe(false)
    expect(Retry.isRetryable(new CircuitOpen({ circuit: "x" }))).toBe(false)
    // @effect/platform HTTP errors, known by their own TypeId and read by their fields
    expect(Retry.isRetryable(requestError("Transport"))).toBe(true)
    expect(Retry.isRetryable(requestError("InvalidUrl"))).toBe(false)
    expect(Retry.isRetryable(responseError(503))).toBe(true)
    expect(Retry.isRetryable(responseError(429))).toBe(true)
    expect(Retry.isRetryable(responseError(404))).toBe(false)
    // a look-alike with another package's tag is not read as one
    expect(Retry.isRetryable({ _tag: "ResponseError", reason: "StatusCode", response: { status: 404 } })).toBe(true)
    expect(Retry.isRetryable({ _tag: "MyApiError", retryable: false })).toBe(false)
    expect(Retry.isRetryable("plain failure")).toBe(true)
  })

  it.effect("an egress denial deep in a cause chain is never retried", () =>
    Effect.sync(() => {
      const denial = new EgressDenied({
        url: "https://evil.com/",
        message: "egress to 'evil.com' not allowed (not in egress allowlist)"
      })
      const request = requestError("Transport", denial)
      expect(Retry.isRetryable(new ToolExecutionError({ toolName: "t", cause: request }))).toBe(false)
    }))
})

describe("makeTestCtx keeps no middleware unless given some", () => {
  it.effect("a blip without retry fails the call", () => {
    const llm = FakeLLM.script([Turn({ content: "never reached" })])
    const failing = model(() => Effect.fail(timeout()))
    return Effect.gen(function*() {
      const error = yield* Effect.flip(
        Effect.flatMap(Invoker, (i) => i.chat(request())).pipe(Effect.provide(makeTestCtx({ llm: failing.layer })))
      )
      expect(error._tag).toBe("ChatModelError")
      expect(failing.calls).toBe(1)
      expect(llm.calls).toBe(0)
    }).pipe(Effect.provide(Layer.empty))
  })
})
