/**
 * `asTool` and `renderRunResult` (spec-tools-testing §4 and the seed's "An agent as a tool").
 */
import {
  BudgetExceeded,
  Cancellation,
  Cancelled,
  DepthExceeded,
  Invoker,
  RunContext,
  ToolArgumentError,
  ToolCall,
  ToolDefinitionError,
  ToolExecutionError
} from "@agentkit/core"
import type { ChatModel } from "@agentkit/core"
import { asTool, renderRunResult, Tool } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import { Data, Effect } from "effect"

const DESCRIPTION = "Delegate a research sub-task to the researcher agent."
const noChat: ChatModel.Service = { chat: () => Effect.die("no model call expected in a tool test") }

/** A runnable that records the run context it sees. */
const recorder = () => {
  const seen: Array<{ task: string; context: RunContext.Service }> = []
  const runnable = {
    run: (task: string) =>
      Effect.map(RunContext, (context) => {
        seen.push({ task, context })
        return { output: `did: ${task}`, steps: 1 }
      })
  }
  return { seen, runnable }
}

const pick = (legs: RunContext.Legs) => ({
  privateData: legs.privateData,
  untrustedContent: legs.untrustedContent,
  egress: legs.egress
})

describe("asTool", () => {
  it("advertises exactly one `task` string, with its description", () => {
    const tool = asTool(recorder().runnable, { name: "research", description: DESCRIPTION })
    expect(JSON.stringify(tool.schema.parameters)).toBe(
      "{\"type\":\"object\",\"properties\":{\"task\":{\"type\":\"string\",\"description\":\"the sub-task / goal to run\"}},\"required\":[\"task\"]}"
    )
    expect(tool.schema.name).toBe("research")
    expect(tool.schema.description).toBe(DESCRIPTION)
    expect(tool.accepted).toEqual(["task"])
  })

  it("is a delegating, frozen tool; sideEffecting defaults to false and can be set", () => {
    const tool = asTool(recorder().runnable, { name: "research", description: DESCRIPTION })
    expect(Tool.isTool(tool)).toBe(true)
    expect(Object.isFrozen(tool)).toBe(true)
    expect(tool.delegating).toBe(true)
    expect(tool.sideEffecting).toBe(false)
    expect(tool.idempotent).toBe(false)
    expect(tool.requiresApproval).toBe(false)
    // a runnable that does not say what it can reach counts as all three legs (fail closed)
    expect(tool.caps).toEqual(["private_data", "untrusted_content", "egress"])
    expect(asTool({ ...recorder().runnable, caps: ["private_data"] }, { name: "r", description: DESCRIPTION }).caps)
      .toEqual(["private_data"])
    expect(asTool(recorder().runnable, { name: "act", description: DESCRIPTION, sideEffecting: true }).sideEffecting)
      .toBe(true)
  })

  it.effect("a runnable whose tools cannot be seen touches all three legs of the tree when it runs; one that declares its caps touches none itself", () =>
    Effect.gen(function*() {
      const opaque = asTool(recorder().runnable, { name: "opaque", description: DESCRIPTION })
      const declared = asTool({ ...recorder().runnable, caps: [] }, { name: "declared", description: DESCRIPTION })
      const first = yield* RunContext.make({})
      yield* Effect.provideService(declared.run({ task: "x" }), RunContext, first)
      expect({ ...pick(first.legs) }).toEqual({ privateData: false, untrustedContent: false, egress: false })
      const second = yield* RunContext.make({})
      yield* Effect.provideService(opaque.run({ task: "x" }), RunContext, second)
      expect(pick(second.legs)).toEqual({ privateData: true, untrustedContent: true, egress: true })
    }))

  it("follows the same name and description rules as Tool.make", () => {
    expect(() => asTool(recorder().runnable, { name: "has space", description: DESCRIPTION })).toThrow(
      ToolDefinitionError
    )
    expect(() => asTool(recorder().runnable, { name: "research", description: "Delegate research." })).toThrow(
      "tool 'research' needs a description of at least 30 characters so the model can understand it; got 18 chars: 'Delegate research.'"
    )
    expect(() =>
      asTool(recorder().runnable, { name: "research", description: DESCRIPTION, sideEffecting: "no" as never })
    ).toThrow(ToolDefinitionError)
  })

  it.effect("runs the runnable on a child context: depth 1, same budget, same cancellation, same id and scope", () => {
    const { runnable, seen } = recorder()
    const tool = asTool(runnable, { name: "research", description: DESCRIPTION })
    return Effect.gen(function*() {
      const parent = yield* RunContext
      expect(yield* tool.run({ task: "find it" })).toBe("did: find it")
      expect(seen).toHaveLength(1)
      const child = seen[0]!.context
      expect(seen[0]!.task).toBe("find it")
      expect(child).not.toBe(parent)
      expect(parent.depth).toBe(0)
      expect(child.depth).toBe(1)
      expect(child.budget).toBe(parent.budget)
      expect(child.cancellation).toBe(parent.cancellation)
      expect(child.correlationId).toBe(parent.correlationId)
      expect(child.scope).toBe(parent.scope)
      expect(child.autonomy).toBe(parent.autonomy)
    }).pipe(Effect.provide(RunContext.layer({ correlationId: "run-9", scope: { orgId: 7 }, autonomy: "gated" })))
  })

  it.effect("nested delegation goes one level deeper per tool", () => {
    const { runnable, seen } = recorder()
    const inner = asTool(runnable, { name: "inner", description: DESCRIPTION })
    const outer = asTool({ run: (task: string) => inner.run({ task }) }, { name: "outer", description: DESCRIPTION })
    return Effect.gen(function*() {
      expect(yield* outer.run({ task: "deep" })).toBe("did: deep")
      expect(seen[0]!.context.depth).toBe(2)
    }).pipe(Effect.provide(RunContext.layer()))
  })

  it.effect("a depth overflow at maxDepth fails with DepthExceeded and the runnable never runs", () => {
    const { runnable, seen } = recorder()
    const inner = asTool(runnable, { name: "inner", description: DESCRIPTION })
    const outer = asTool({ run: (task: string) => inner.run({ task }) }, { name: "outer", description: DESCRIPTION })
    return Effect.gen(function*() {
      const error = yield* Effect.flip(outer.run({ task: "deep" }))
      expect(error).toBeInstanceOf(DepthExceeded)
      expect(error).toMatchObject({
        _tag: "DepthExceeded",
        depth: 2,
        maxDepth: 1,
        message: "agent depth 2 > max_depth 1"
      })
      expect(seen).toHaveLength(0)
    }).pipe(Effect.provide(RunContext.layer({ budget: { maxDepth: 1 } })))
  })

  it.effect("the default maxDepth is 4", () => {
    const { runnable, seen } = recorder()
    let tool = asTool(runnable, { name: "level", description: DESCRIPTION })
    for (let i = 0; i < 4; i++) {
      const below = tool
      tool = asTool({ run: (task: string) => below.run({ task }) }, { name: "level", description: DESCRIPTION })
    }
    // Five nested asTool levels: the fifth child would be depth 5.
    return Effect.gen(function*() {
      const error = yield* Effect.flip(tool.run({ task: "x" }))
      expect(error.message).toBe("agent depth 5 > max_depth 4")
      expect(seen).toHaveLength(0)
    }).pipe(Effect.provide(RunContext.layer()))
  })

  it.effect("the default render uses the result's `output` string", () =>
    Effect.gen(function*() {
      const tool = asTool({ run: () => Effect.succeed({ output: "final answer", partial: false }) }, {
        name: "sub",
        description: DESCRIPTION
      })
      expect(yield* tool.run({ task: "x" })).toBe("final answer")
    }).pipe(Effect.provide(RunContext.layer())))

  it.effect("a result without a string `output` is rendered like any tool result", () =>
    Effect.gen(function*() {
      const tool = asTool({ run: () => Effect.succeed({ outputs: { k: "v" } }) }, {
        name: "sub",
        description: DESCRIPTION
      })
      expect(yield* tool.run({ task: "x" })).toBe("{\"outputs\":{\"k\":\"v\"}}")
      const plain = asTool({ run: (task: string) => Effect.succeed(task.toUpperCase()) }, {
        name: "sub",
        description: DESCRIPTION
      })
      expect(yield* plain.run({ task: "x" })).toBe("X")
    }).pipe(Effect.provide(RunContext.layer())))

  it.effect("`render` replaces the default rendering", () =>
    Effect.gen(function*() {
      const tool = asTool(
        { run: () => Effect.succeed({ output: "ignored", outputs: { k: "v", n: 2 } }) },
        {
          name: "workflow",
          description: DESCRIPTION,
          render: (result) => Object.entries(result.outputs).map(([k, v]) => `${k}: ${v}`).join("\n")
        }
      )
      expect(yield* tool.run({ task: "go" })).toBe("k: v\nn: 2")
    }).pipe(Effect.provide(RunContext.layer())))

  it.effect("a failure of the sub-run other than BudgetExceeded or Cancelled becomes a ToolExecutionError", () =>
    Effect.gen(function*() {
      class ResearchFailed extends Data.TaggedError("ResearchFailed")<{ readonly why: string }> {}
      const cause = new ResearchFailed({ why: "no sources" })
      const tool = asTool({ run: () => Effect.fail(cause) }, { name: "research", description: DESCRIPTION })
      const error = yield* Effect.flip(tool.run({ task: "x" }))
      expect(error).toBeInstanceOf(ToolExecutionError)
      expect(error).toMatchObject({ toolName: "research" })
      expect((error as ToolExecutionError).cause).toBe(cause)
    }).pipe(Effect.provide(RunContext.layer())))

  it.effect("a defect of the sub-run becomes a ToolExecutionError, never a defect", () =>
    Effect.gen(function*() {
      const boom = new Error("crashed")
      const tool = asTool({ run: () => Effect.die(boom) }, { name: "research", description: DESCRIPTION })
      const error = yield* Effect.flip(tool.run({ task: "x" }))
      expect(error).toBeInstanceOf(ToolExecutionError)
      expect((error as ToolExecutionError).cause).toBe(boom)
    }).pipe(Effect.provide(RunContext.layer())))

  it.effect("the sub-run's BudgetExceeded and Cancelled pass through unchanged", () =>
    Effect.gen(function*() {
      const exhausted = new BudgetExceeded({ limit: "cost", message: "cost $0.02 > $0.015" })
      const costTool = asTool({ run: () => Effect.fail(exhausted) }, { name: "sub", description: DESCRIPTION })
      expect(yield* Effect.flip(costTool.run({ task: "x" }))).toBe(exhausted)
      const cancelled = new Cancelled()
      const cancelTool = asTool({ run: () => Effect.fail(cancelled) }, { name: "sub", description: DESCRIPTION })
      expect(yield* Effect.flip(cancelTool.run({ task: "x" }))).toBe(cancelled)
    }).pipe(Effect.provide(RunContext.layer())))

  it.effect("the sub-run sees the parent's cancellation token flip", () => {
    const token = Cancellation.make()
    const tool = asTool(
      {
        run: () =>
          Effect.map(RunContext, (context) => {
            token.cancel()
            return context.cancellation.isCancelled ? "saw cancel" : "missed cancel"
          })
      },
      { name: "sub", description: DESCRIPTION }
    )
    return Effect.gen(function*() {
      expect(yield* tool.run({ task: "x" })).toBe("saw cancel")
    }).pipe(Effect.provide(RunContext.layer({ cancellation: token })))
  })

  it.effect("the `task` argument is validated like any tool's", () =>
    Effect.gen(function*() {
      const { runnable, seen } = recorder()
      const tool = asTool(runnable, { name: "research", description: DESCRIPTION })
      const error = yield* Effect.flip(tool.run({ goal: "x" }))
      expect(error).toBeInstanceOf(ToolArgumentError)
      expect(error.message).toBe(
        "tool 'research' call rejected: unexpected argument(s) ['goal']; missing required argument(s) ['task']. Accepted arguments: ['task']"
      )
      expect(seen).toHaveLength(0)
    }).pipe(Effect.provide(RunContext.layer())))

  it.effect("through the Invoker it takes no concurrency permit: a sub-run with a limit of 1 does not deadlock", () =>
    Effect.gen(function*() {
      const invoker = Invoker.make(noChat, {})
      const leaf = Tool.make("leaf", {
        description: "A leaf tool that holds the only concurrency permit.",
        parameters: {},
        sideEffecting: false,
        handler: () => "leaf done"
      })
      const call = (name: string, args: Record<string, unknown>) =>
        ToolCall.make({ id: `c-${name}`, name, arguments: args })
      const sub = asTool(
        { run: () => Effect.map(invoker.tool(call("leaf", {}), leaf), (outcome) => ({ output: outcome.text })) },
        { name: "sub", description: DESCRIPTION }
      )
      const outcome = yield* invoker.tool(call("sub", { task: "x" }), sub)
      expect(outcome).toEqual({ value: "leaf done", text: "leaf done" })
    }).pipe(Effect.provide(RunContext.layer({ budget: { maxConcurrency: 1 } }))))
})

describe("renderRunResult", () => {
  it("a string `output` is returned as is; anything else is rendered as JSON", () => {
    expect(renderRunResult({ output: "hi" })).toBe("hi")
    expect(renderRunResult({ output: 42 })).toBe("{\"output\":42}")
    expect(renderRunResult({ outputs: { k: "v" } })).toBe("{\"outputs\":{\"k\":\"v\"}}")
    expect(renderRunResult("text")).toBe("text")
    expect(renderRunResult(null)).toBe("null")
  })
})
