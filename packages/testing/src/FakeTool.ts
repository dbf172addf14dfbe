/**
 * A tool for tests that records its calls and answers from a script.
 *
 * @since 0.1.0
 */
import type { Capability, InvokableTool, RunContext } from "@agentkit/core"
import { Tool } from "@agentkit/tools"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/**
 * A recording tool: a real `Tool` (made with `Tool.make`, so it obeys the same rules) plus the
 * arguments of every call it received.
 *
 * @example
 * ```ts
 * import { FakeTool } from "@agentkit/testing"
 *
 * const search: FakeTool.FakeTool = FakeTool.make("search", { responses: ["first hit"] })
 * // ... run an agent that calls search with { q: "refund policy" } ...
 * search.calls // [{ q: "refund policy" }]
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface FakeTool extends Tool.Tool<string, Schema.Struct<{}>, unknown, unknown, never> {
  /** The arguments of every call, in order. */
  readonly calls: ReadonlyArray<Readonly<Record<string, unknown>>>
}

/**
 * The options of `FakeTool.make`.
 *
 * @example
 * ```ts
 * import { FakeTool } from "@agentkit/testing"
 *
 * const options: FakeTool.FakeToolOptions = {
 *   sideEffecting: true, requiresApproval: true, responses: (args, call) => `email #${call} sent to ${String(args.to)}`
 * }
 * const sendEmail = FakeTool.make("send_email", options)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface FakeToolOptions {
  readonly description?: string | undefined
  readonly sideEffecting?: boolean | undefined
  readonly idempotent?: boolean | undefined
  readonly requiresApproval?: boolean | undefined
  readonly caps?: ReadonlyArray<Capability> | undefined
  /**
   * What each call answers: a list (played in order, the last one repeating), or a function of the
   * arguments and call number (from 1) returning a value, a Promise or an Effect. Default: `"ok"`.
   */
  readonly responses?:
    | ReadonlyArray<unknown>
    | ((args: Readonly<Record<string, unknown>>, call: number) => unknown)
    | undefined
}

/**
 * Makes a fake tool that accepts any arguments (a rest record) and records them.
 *
 * @example
 * ```ts
 * import { FakeTool } from "@agentkit/testing"
 *
 * const search = FakeTool.make("search", { responses: ["first hit", "second hit"] })
 * // ... run an agent ...
 * search.calls.length
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (name: string, options: FakeToolOptions = {}): FakeTool => {
  const calls: Array<Readonly<Record<string, unknown>>> = []
  const responses = options.responses ?? ["ok"]
  const tool = Tool.make(name, {
    description: options.description ?? "A fake tool for unit tests that records every call it receives.",
    parameters: Schema.Struct({}, Schema.Record({ key: Schema.String, value: Schema.Unknown })),
    sideEffecting: options.sideEffecting ?? false,
    idempotent: options.idempotent,
    requiresApproval: options.requiresApproval,
    caps: options.caps,
    handler: (args: Readonly<Record<string, unknown>>) =>
      Effect.suspend(() => {
        calls.push(args)
        if (typeof responses === "function") {
          const out = responses(args, calls.length)
          return Effect.isEffect(out) ? out : Effect.promise(() => Promise.resolve(out))
        }
        return Effect.succeed(responses[Math.min(calls.length, responses.length) - 1])
      })
  })
  return Object.freeze(Object.assign(Object.create(Object.getPrototypeOf(tool)), tool, { calls })) as FakeTool
}

/**
 * The flags of an `invokable` double.
 *
 * @example
 * ```ts
 * import type { FakeTool } from "@agentkit/testing"
 *
 * const flags: FakeTool.InvokableFlags = { sideEffecting: true, idempotent: false }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface InvokableFlags {
  readonly sideEffecting?: boolean | undefined
  readonly idempotent?: boolean | undefined
  readonly requiresApproval?: boolean | undefined
  readonly delegating?: boolean | undefined
}

/**
 * A bare `InvokableTool` (the Invoker's port, no `Tool.make`: no argument checks, no rendering
 * rules) whose `run` is given, for testing the pipelines themselves. Flags default to a read-only,
 * idempotent tool; the result renders as itself (a string) or its JSON. `run` reads its
 * `RunContext` from the environment, through the pipeline (`execute`) as directly.
 *
 * @example
 * ```ts
 * import { FakeTool } from "@agentkit/testing"
 * import { Effect } from "effect"
 *
 * const echo = FakeTool.invokable("echo", (args) => Effect.succeed(args))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const invokable = <E = never, R = never>(
  name: string,
  run: (args: unknown) => Effect.Effect<unknown, E, RunContext | R>,
  flags: InvokableFlags = {}
): InvokableTool<E, R> => ({
  name,
  schema: { name, description: `the ${name} tool, for tests`, parameters: { type: "object", properties: {} } },
  sideEffecting: flags.sideEffecting ?? false,
  idempotent: flags.idempotent ?? true,
  requiresApproval: flags.requiresApproval ?? false,
  caps: [],
  urlArg: undefined,
  delegating: flags.delegating ?? false,
  run,
  execute: (args) => run(args),
  render: (value) => (typeof value === "string" ? value : JSON.stringify(value))
})
