/**
 * Tenant quotas and extra meters around model (and tool) calls.
 *
 * @since 0.1.0
 */
import { Middleware, Tracing } from "@agentkit/core"
import type {
  BudgetExceeded,
  Chat,
  ChatError,
  ChatHandler,
  ChatMiddleware,
  Quota,
  RunContext,
  ToolCallRequest,
  ToolHandler,
  ToolMiddleware,
  ToolOutcome,
  ToolPipelineError,
  Usage
} from "@agentkit/core"
import * as Effect from "effect/Effect"

/**
 * The call a meter is asked about.
 *
 * @example
 * ```ts
 * import type { Meter } from "@agentkit/middleware"
 * import { Effect } from "effect"
 *
 * const logGuard = (call: Meter.Metered) => Effect.log(`${call.operation} ${call.name} ~${call.estimatedTokens} tokens`)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Metered {
  /** `chat` for a model call, `execute_tool` for a tool call. */
  readonly operation: "chat" | "execute_tool"
  /** The model or the tool. */
  readonly name: string
  readonly context: RunContext.Service
  /** floor(sum of the message contents' lengths / 4) for a model call; 0 for a tool call. */
  readonly estimatedTokens: number
}

/**
 * A meter: refuses a call before it runs (`guard`), accounts for it after (`charge`; a model
 * call's usage, never called for a tool call). Fail with `BudgetExceeded` to refuse.
 *
 * @example
 * ```ts
 * import { BudgetExceeded } from "@agentkit/core"
 * import type { Meter } from "@agentkit/middleware"
 * import { Effect } from "effect"
 *
 * let tokens = 0
 * const dailyTokens: Meter.Meter = {
 *   guard: () => tokens > 1_000_000 ? Effect.fail(new BudgetExceeded({ limit: "tokens", message: `daily tokens ${tokens} > 1000000` })) : Effect.void,
 *   charge: (_call, usage) => Effect.sync(() => { tokens += usage.inputTokens + usage.outputTokens })
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Meter {
  readonly guard: (call: Metered) => Effect.Effect<void, BudgetExceeded>
  readonly charge: (call: Metered, usage: Usage.Usage) => Effect.Effect<void, BudgetExceeded>
}

/**
 * A core `Quota` as a meter, partitioned by the run's tenant scope (its collision-free
 * `storeKey`): `guard(scope, estimatedTokens)` before, `charge(scope, usage)` after. Its texts
 * name the tenant by its display key (`org1:dom1: 2 req ≥ 1 rpm`).
 *
 * @example
 * ```ts
 * import { Quota } from "@agentkit/core"
 * import { Meter } from "@agentkit/middleware"
 *
 * const perTenant = Meter.fromQuota(Quota.unsafeMake({ maxRpm: 60, maxUsd: 5 }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromQuota = (quota: Quota.Quota): Meter => ({
  guard: (call) => quota.guard(call.context.scope, call.estimatedTokens),
  charge: (call, usage) => quota.charge(call.context.scope, usage)
})

/**
 * The options of `meter`.
 *
 * @example
 * ```ts
 * import { Quota } from "@agentkit/core"
 * import { Meter } from "@agentkit/middleware"
 *
 * const options: Meter.Options = { quotas: [Quota.unsafeMake({ maxRpm: 60 })] }
 * const meter = Meter.meter(options)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Tenant quotas (core's `Quota`), guarded and charged first, in order. */
  readonly quotas?: ReadonlyArray<Quota.Quota> | undefined
  /** Extra meters, after the quotas, in order. */
  readonly meters?: ReadonlyArray<Meter> | undefined
}

/**
 * floor(sum of the messages' content lengths / 4): the token estimate a quota's TPM check uses.
 *
 * @example
 * ```ts
 * import { Message } from "@agentkit/core"
 * import { Meter } from "@agentkit/middleware"
 *
 * Meter.estimateTokens({ model: "m", messages: [Message.user("12345678")], tools: [] }) // 2
 * ```
 *
 * @since 0.1.0
 * @category metering
 */
export const estimateTokens = (request: Chat.ChatRequest): number => {
  let chars = 0
  for (const message of request.messages) chars += message.content.length
  return Math.floor(chars / 4)
}

const guardAll = (meters: ReadonlyArray<Meter>, call: Metered): Effect.Effect<void, BudgetExceeded> =>
  meters.length === 1 ? meters[0]!.guard(call) : Effect.forEach(meters, (m) => m.guard(call), { discard: true })

const chargeAll = (
  meters: ReadonlyArray<Meter>,
  call: Metered,
  usage: Usage.Usage
): Effect.Effect<void, BudgetExceeded> =>
  meters.length === 1
    ? meters[0]!.charge(call, usage)
    : Effect.forEach(meters, (m) => m.charge(call, usage), { discard: true })

const checkpoint = (context: RunContext.Service): Effect.Effect<void> => {
  const budget = context.budget
  if (!context.tracing || budget.maxCostUsd === undefined) return Effect.void
  return Tracing.addEvent(Tracing.EventName.budgetCheckpoint, {
    [Tracing.EventAttribute.spentUsd]: budget.spentUsd,
    [Tracing.EventAttribute.remainingUsd]: budget.remainingUsd,
    [Tracing.EventAttribute.calls]: budget.modelCalls
  })
}

/**
 * Guards every quota and meter before a call and charges them after it, in order (quotas first):
 * the first refusal stops the call with its `BudgetExceeded` (a quota's text names the tenant);
 * a charge that fails stops the charging (later meters are not charged for that call). A call
 * served from a cache (`meta.cacheHit`) is not charged. On the chat pipeline, when the run's
 * Budget has a cost ceiling, a `budget.checkpoint` span event records its `spent_usd`,
 * `remaining_usd` and `calls` after the call. On the tool pipeline the meters are guarded (a
 * quota counts the call toward its requests per minute) and never charged.
 *
 * The run's own Budget is enforced by the Invoker, which guards it before the pipeline and
 * charges it where the model answers (innermost): a call that crosses the run's ceiling fails
 * there, so the quotas are not charged for it (as in the Python agentkit, where the Budget is
 * the first meter).
 *
 * Place: chat pipeline, inside `memoize` (a cache hit costs no quota) and outside `fallback` and
 * `retry` (one logical call is metered once): `[telemetry, memoize, meter, fallback, retry]`;
 * optionally near the top of the tool pipeline.
 *
 * @example
 * ```ts
 * import { Invoker, Quota } from "@agentkit/core"
 * import { Meter } from "@agentkit/middleware"
 *
 * const perTenant = Quota.unsafeMake({ maxRpm: 60, maxUsd: 5 })
 * const InvokerLive = Invoker.layer({ chatMiddleware: [Meter.meter({ quotas: [perTenant] })] })
 * ```
 *
 * @since 0.1.0
 * @category middleware
 */
export const meter = (options: Options = {}): ChatMiddleware & ToolMiddleware => {
  const meters: ReadonlyArray<Meter> = [...(options.quotas ?? []).map(fromQuota), ...(options.meters ?? [])]

  const chat: ChatMiddleware = (next: ChatHandler): ChatHandler => (call) => {
    const metered: Metered = {
      operation: "chat",
      name: call.request.model,
      context: call.context,
      estimatedTokens: meters.length === 0 ? 0 : estimateTokens(call.request)
    }
    const run: Effect.Effect<Chat.ChatResponse, ChatError> = Effect.tap(next(call), (response) => {
      const cacheHit = call.meta.cacheHit === true
      const charged = cacheHit || meters.length === 0 ? Effect.void : chargeAll(meters, metered, response.usage)
      return Effect.zipRight(charged, checkpoint(call.context))
    })
    return meters.length === 0 ? run : Effect.zipRight(guardAll(meters, metered), run)
  }

  const tool: ToolMiddleware =
    (next: ToolHandler): ToolHandler =>
    <E, R>(invocation: ToolCallRequest<E, R>): Effect.Effect<ToolOutcome, E | ToolPipelineError, R> =>
      meters.length === 0
        ? next(invocation)
        : Effect.zipRight(
          guardAll(meters, {
            operation: "execute_tool",
            name: invocation.tool.name,
            context: invocation.context,
            estimatedTokens: 0
          }),
          next(invocation)
        )

  return Middleware.both(chat, tool)
}
