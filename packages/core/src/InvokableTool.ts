/**
 * The tool port: what the Invoker needs of a tool. `Tool.make` (in `@agentkit/tools`) builds
 * these; the Invoker's tool pipeline runs them.
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import type { ToolSchema } from "./Chat.js"
import type { RunContext } from "./RunContext.js"

/**
 * What a tool declares about itself: the flags the pipelines read.
 *
 * @example
 * ```ts
 * import type { Capability } from "@agentkit/core"
 *
 * const caps: ReadonlyArray<Capability> = ["private_data", "egress"]
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Capability = "private_data" | "untrusted_content" | "egress"

/**
 * The accepted tool capabilities.
 *
 * @example
 * ```ts
 * import { capabilities } from "@agentkit/core"
 *
 * capabilities.includes("egress") // true
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export const capabilities: ReadonlyArray<Capability> = ["private_data", "untrusted_content", "egress"]

/**
 * What the pipeline hands a tool with its arguments: the run context the Invoker read for this
 * call (the call record's, so the tool never looks it up again), the model's tool call id and
 * the run id. A direct `tool.run(args)` has neither id.
 *
 * @example
 * ```ts
 * import type { ExecuteOptions, InvokableTool } from "@agentkit/core"
 *
 * const runFor = (tool: InvokableTool, options: ExecuteOptions) => tool.execute({ order_id: "A-771" }, options)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ExecuteOptions {
  readonly context: RunContext.Service
  readonly callId?: string | undefined
  readonly runId?: string | undefined
}

/**
 * A conditional approval: whether one call (its validated arguments, the run context) waits for
 * a person. A condition that fails or throws counts as `true` (fail closed).
 *
 * @example
 * ```ts
 * import type { ApprovalCondition } from "@agentkit/core"
 *
 * const large: ApprovalCondition = (args) => Number((args as { readonly amount: number }).amount) > 1000
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type ApprovalCondition = (
  args: unknown,
  context: RunContext.Service
) => boolean | Effect.Effect<boolean, unknown>

/**
 * What the Invoker needs of a tool. `Tool.make` (in `@agentkit/tools`) builds these.
 *
 * @example
 * ```ts
 * import type { InvokableTool } from "@agentkit/core"
 *
 * const describe = (tool: InvokableTool) =>
 *   `${tool.name}${tool.sideEffecting ? " (side-effecting)" : ""}: [${tool.caps.join(", ")}]`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface InvokableTool<E = unknown, R = never> {
  readonly name: string
  readonly schema: ToolSchema
  readonly sideEffecting: boolean
  readonly idempotent: boolean
  /**
   * Whether a call waits for a person whatever the autonomy tier: always (`true`), never
   * (`false`), or when the condition holds for the call's validated arguments and run context.
   */
  readonly requiresApproval: boolean | ApprovalCondition
  readonly caps: ReadonlyArray<Capability>
  readonly urlArg: string | undefined
  /**
   * A delegating tool (a sub-agent made by `asTool`) takes no concurrency permit: the tools of the
   * sub-run take their own, so a sub-run never waits on a permit its parent holds.
   */
  readonly delegating: boolean
  /**
   * The tool's description is untrusted text (an MCP server's that is not declared trusted):
   * advertising it to the model counts as the untrusted leg of the lethal trifecta from the first
   * turn, whether or not the tool is called. Absent: false.
   */
  readonly untrustedDescription?: boolean | undefined
  /**
   * Validates the arguments, runs the handler, checks the output, with the run context read from
   * the environment. The public form, outside any pipeline.
   */
  readonly run: (args: unknown) => Effect.Effect<unknown, E, RunContext | R>
  /**
   * The pipeline's entry point: `run` with the context and call identity given, so nothing is
   * looked up again: the handler receives this context in its second argument. (An Effect handler
   * that reads `yield* RunContext` reads the environment, the one the Invoker took this context
   * from; a middleware that gives the call another context provides it too.)
   */
  readonly execute: (args: unknown, options: ExecuteOptions) => Effect.Effect<unknown, E, RunContext | R>
  /** The text the model sees for a result. */
  readonly render: (value: unknown) => string
}
