/**
 * A cognition owns an agent's loop: how it talks to the model and when it stops. It holds no
 * per-run state, so one cognition value is shared safely by concurrent runs.
 *
 * @since 0.1.0
 */
import type {
  AlreadyDecided,
  BudgetExceeded,
  Cancelled,
  Capability,
  ChatError,
  CorruptEntry,
  DepthExceeded,
  Invoker,
  Message,
  ModelCatalog,
  RunContext,
  StaleLease,
  StoreError,
  ToolArgumentError
} from "@agentkit/core"
import type { ToolRegistry } from "@agentkit/tools"
import type * as Effect from "effect/Effect"
import type { AgentEvent } from "./AgentEvent.js"
import type { AgentResult } from "./AgentResult.js"
import type { Decisions } from "./Approval.js"
import type {
  DigestMismatch,
  InvalidDecision,
  InvalidDecisions,
  PolicyDenied,
  RunInProgress,
  RunNotResumable,
  RunStateCorrupt,
  RunStateVersionUnsupported,
  RunSuspended,
  UnknownPending
} from "./Errors.js"
import type { GuardrailTripped } from "./Guardrail.js"
import type { RunPolicy } from "./RunPolicy.js"
import type { StructuredOutput } from "./StructuredOutput.js"

/**
 * What a run under a checkpoint store can meet before or instead of running: a suspended run, a
 * run another owner drives, a finished run that is not resumable (failed or cancelled), a state
 * this release cannot read, a lost lease (another process took the run over), a broken store.
 *
 * @example
 * ```ts
 * import type { LifecycleError } from "@agentkit/agents"
 *
 * const retryLater = (error: LifecycleError) => error._tag === "RunInProgress" || (error._tag === "StoreError" && error.retryable)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type LifecycleError =
  | RunSuspended
  | RunInProgress
  | RunNotResumable
  | RunStateCorrupt
  | RunStateVersionUnsupported
  | StaleLease
  | StoreError
  | CorruptEntry

/**
 * The errors that end a run: a model failure, a budget or quota ceiling, cancellation, a static
 * policy denial, a coordinator's or graph's child past `maxDepth`, and under a checkpoint store
 * the lifecycle's outcomes.
 *
 * @example
 * ```ts
 * import type { AgentError } from "@agentkit/agents"
 *
 * const describe = (error: AgentError) => (error._tag === "PolicyDenied" ? "refused by the run policy" : `${error._tag}: ${error.message}`)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type AgentError =
  | ChatError
  | ModelCatalog.CapabilityMismatch
  | BudgetExceeded
  | Cancelled
  | PolicyDenied
  | DepthExceeded
  | StoreError
  | LifecycleError
  | GuardrailTripped

/**
 * The errors of `agent.resume`: those of a run, plus the refusals of its decisions (not a
 * record, an unknown pending id, a digest mismatch, a verdict the entry does not accept, an
 * invalid edit, a conflict with a decision recorded first). On a refusal nothing ran and the run
 * is as it was.
 *
 * @example
 * ```ts
 * import type { ResumeError } from "@agentkit/agents"
 *
 * const badEdit = (error: ResumeError) => error._tag === "ToolArgumentError" // nothing ran; send corrected decisions
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type ResumeError =
  | AgentError
  | RunNotResumable
  | ToolArgumentError
  | InvalidDecisions
  | UnknownPending
  | DigestMismatch
  | InvalidDecision
  | AlreadyDecided

/**
 * The model settings of the agent a cognition drives.
 *
 * @example
 * ```ts
 * import type { AgentSettings } from "@agentkit/agents"
 *
 * const label = (settings: AgentSettings) => `${settings.name} (${settings.model})`
 * label(agent) // an Agent is AgentSettings too
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface AgentSettings {
  readonly name: string
  readonly model: string
  readonly prompt: string
  readonly maxTokens: number | undefined
  readonly temperature: number | undefined
}

/**
 * One drive of a cognition: the agent, the conversation so far (system prompt first) and the sink
 * that receives the run's events as they happen.
 *
 * @example
 * ```ts
 * import type { Drive } from "@agentkit/agents"
 *
 * const task = (drive: Drive) => drive.messages.filter((message) => message.role === "user").at(-1)?.content
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Drive {
  readonly agent: AgentSettings
  readonly messages: ReadonlyArray<Message.Message>
  readonly emit: ((event: AgentEvent<unknown>) => void) | undefined
  readonly policy: RunPolicy
  /** The agent's structured output, when it has one: tell the model the shape, decode and repair its answer. */
  readonly output?: StructuredOutput<unknown> | undefined
}

/**
 * One resume of a suspended run: the decisions by pending id (checked by the cognition).
 *
 * @example
 * ```ts
 * import type { Resume } from "@agentkit/agents"
 *
 * const describe = (resume: Resume) => `${resume.agent.name} resumes ${resume.runId} with ${Object.keys(resume.decisions).length} decision(s)`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Resume {
  readonly agent: AgentSettings
  readonly runId: string
  readonly decisions: Decisions
  readonly emit: ((event: AgentEvent<unknown>) => void) | undefined
  readonly policy: RunPolicy
  /** The agent's structured output, when it has one. */
  readonly output?: StructuredOutput<unknown> | undefined
}

/**
 * A cognition: `R` is what its tools need.
 *
 * @example
 * ```ts
 * import type { Cognition } from "@agentkit/agents"
 * import { Effect } from "effect"
 *
 * const logged = <R>(cognition: Cognition<R>): Cognition<R> => ({
 *   ...cognition,
 *   drive: (drive) => Effect.zipRight(Effect.log(`${drive.agent.name}: ${drive.messages.length} message(s)`), cognition.drive(drive))
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Cognition<out R = never> {
  readonly name: string
  /** The tools it advertises (empty for a single call). */
  readonly tools: ToolRegistry.ToolRegistry
  /**
   * The trifecta capabilities of everything it can reach, when that is more than its tools (a
   * coordinator's children, a graph's nodes). Default: the union of its tools' caps.
   */
  readonly caps?: ReadonlyArray<Capability> | undefined
  /** Drives a run; with `drive.output`, a run that ends with an answer that decodes has `parsed`. */
  readonly drive: (drive: Drive) => Effect.Effect<AgentResult<unknown>, AgentError, RunContext | Invoker | R>
  /** Continues a suspended run; absent when the cognition cannot suspend. */
  readonly resume?:
    | ((resume: Resume) => Effect.Effect<AgentResult<unknown>, ResumeError, RunContext | Invoker | R>)
    | undefined
}
