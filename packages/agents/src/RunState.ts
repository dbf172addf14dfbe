/**
 * The run state: what a checkpoint store holds of a run between two steps, as a versioned Effect
 * Schema. It is encoded (canonical JSON text) only when a store is provided; without one nothing
 * is encoded.
 *
 * Every released version stays readable: `decode` reads any of `versions` and brings it to the
 * newest; a state of a version this release does not know (a newer release wrote it) is
 * `RunStateVersionUnsupported`, one that does not decode is `RunStateCorrupt`, and either leaves
 * the record untouched. Golden fixtures of every phase (`packages/agents/test/fixtures/run-state/`)
 * are decoded and resumed by the tests of every release.
 *
 * Phases: `model` (the next step is the model call of `iteration`), `tools` (that call is done:
 * its assistant turn is the last message of the transcript, and `turn.completed` holds the
 * results of the calls that already ran), `suspended` (the turn waits on `pending` entries).
 *
 * @since 0.1.0
 */
import { CanonicalJson, Message } from "@agentkit/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { PendingEntry } from "./Approval.js"
import { RunStateCorrupt, RunStateVersionUnsupported } from "./Errors.js"
import { lazy } from "./internal/lazy.js"

const Count = Schema.NonNegativeInt

/**
 * Token and cost accounting as stored: money in integer nano-USD.
 *
 * @example
 * ```ts
 * import { RunState } from "@agentkit/agents"
 * import { Schema } from "effect"
 *
 * Schema.decodeUnknownSync(RunState.UsageState)({ inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0, costNanos: 100_000 })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const UsageState = Schema.Struct({
  inputTokens: Count,
  outputTokens: Count,
  cacheReadTokens: Count,
  cacheWriteTokens: Count,
  costNanos: Count
})

/**
 * The result of one call of the current turn that already ran: what the model will see.
 *
 * @example
 * ```ts
 * import { RunState } from "@agentkit/agents"
 * import { Schema } from "effect"
 *
 * Schema.is(RunState.CallResult)({ callId: "c1", name: "lookup_order", content: "shipped", isError: false }) // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const CallResult = Schema.Struct({
  callId: Schema.String,
  name: Schema.String,
  content: Schema.String,
  isError: Schema.Boolean,
  /** The trifecta caps this result counted for (when it counted for any). */
  legs: Schema.optional(Schema.Array(Schema.Literal("private_data", "untrusted_content", "egress")))
})

/**
 * The result of one call of the current turn.
 *
 * @example
 * ```ts
 * import type { RunState } from "@agentkit/agents"
 *
 * const failed = (results: ReadonlyArray<RunState.CallResult>) => results.filter((r) => r.isError).map((r) => r.callId)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface CallResult extends Schema.Schema.Type<typeof CallResult> {}

/**
 * The shared budget's counters as version 1 kept them: calls in flight, no reserved amounts.
 *
 * @example
 * ```ts
 * import { RunState } from "@agentkit/agents"
 * import { Schema } from "effect"
 *
 * Schema.is(RunState.BudgetStateV1)({ modelCalls: 1, toolCalls: 0, tokens: 15, costNanos: 100_000, inFlightModelCalls: 0, inFlightToolCalls: 0 }) // true
 * ```
 *
 * @since 0.2.0
 * @category schemas
 */
export const BudgetStateV1 = Schema.Struct({
  modelCalls: Count,
  toolCalls: Count,
  tokens: Count,
  costNanos: Count,
  inFlightModelCalls: Count,
  inFlightToolCalls: Count
})

/**
 * The shared budget's counters at save time (tree totals): settled usage, and the open
 * reservations (calls in flight, the nano-USD and tokens they hold), which a run taken over after
 * its process stopped counts as spent in full.
 *
 * @example
 * ```ts
 * import { RunState } from "@agentkit/agents"
 * import { Schema } from "effect"
 *
 * Schema.is(RunState.BudgetState)({
 *   modelCalls: 1, toolCalls: 0, tokens: 15, costNanos: 100_000,
 *   inFlightModelCalls: 1, inFlightToolCalls: 0, reservedNanos: 2_500_000, reservedTokens: 900
 * }) // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const BudgetState = Schema.Struct({
  ...BudgetStateV1.fields,
  reservedNanos: Count,
  reservedTokens: Count
})

/**
 * What the run context was: enough to rebuild it in another process (the recovery worker does).
 *
 * @example
 * ```ts
 * import { RunState } from "@agentkit/agents"
 * import { Schema } from "effect"
 *
 * Schema.is(RunState.ContextState)({ scope: { orgId: 7 }, autonomy: "gated", limits: { maxModelCalls: 5 }, correlationId: "run-1" }) // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ContextState = Schema.Struct({
  scope: Schema.Struct({
    orgId: Schema.optional(Schema.Union(Schema.Number, Schema.String)),
    domainId: Schema.optional(Schema.Union(Schema.Number, Schema.String)),
    userId: Schema.optional(Schema.String),
    sessionId: Schema.optional(Schema.String)
  }),
  autonomy: Schema.Literal("auto", "gated", "manual"),
  limits: Schema.Struct({
    maxCostUsd: Schema.optional(Schema.Number),
    maxModelCalls: Schema.optional(Count),
    maxTokens: Schema.optional(Count),
    maxToolCalls: Schema.optional(Count),
    maxDepth: Schema.optional(Count),
    maxConcurrency: Schema.optional(Count)
  }),
  correlationId: Schema.String,
  threadId: Schema.optional(Schema.String)
})

/**
 * The cognitions a state can belong to.
 *
 * @example
 * ```ts
 * import { RunState } from "@agentkit/agents"
 * import { Schema } from "effect"
 *
 * Schema.is(RunState.CognitionName)("react") // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const CognitionName = Schema.Literal("react", "single_call", "coordinator", "graph")

/**
 * Version 1 of the run state.
 *
 * @example
 * ```ts
 * import { RunState } from "@agentkit/agents"
 * import { Schema } from "effect"
 *
 * const isV1 = Schema.is(RunState.RunStateV1)
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const RunStateV1 = Schema.Struct({
  version: Schema.Literal(1),
  runId: Schema.String,
  agent: Schema.String,
  cognition: CognitionName,
  phase: Schema.Literal("model", "tools", "suspended"),
  iteration: Count,
  transcript: Schema.Array(Message.Message),
  /** The run's own usage. */
  usage: UsageState,
  /** The run's tally: its own usage and its sub-runs' (what the budget spent on it). */
  treeUsage: UsageState,
  turn: Schema.Struct({ completed: Schema.Array(CallResult) }),
  pending: Schema.Array(PendingEntry),
  /** The trifecta legs the run tree had touched when the state was saved (restored on resume). */
  legs: Schema.Struct({ privateData: Schema.Boolean, untrustedContent: Schema.Boolean, egress: Schema.Boolean }),
  budget: BudgetStateV1,
  /** How many times the run was taken over after its process stopped. */
  recoveries: Count,
  context: ContextState,
  /**
   * Per cognition: coordinators, graphs and termination conditions keep their versioned parts
   * here. ReAct's is an object of named parts: `termination` (`Termination.State`: the
   * condition's counters) and `output` (`{ version: 1, repairs }`); unknown parts are kept.
   */
  cognitionState: Schema.optional(Schema.Unknown)
})

/**
 * Version 2 of the run state: version 1 with the budget's open reservations (`BudgetState`), which
 * the lifecycle records before each model request and tool execution is sent.
 *
 * @example
 * ```ts
 * import { RunState } from "@agentkit/agents"
 * import { Schema } from "effect"
 *
 * const isV2 = Schema.is(RunState.RunStateV2)
 * ```
 *
 * @since 0.2.0
 * @category schemas
 */
export const RunStateV2 = Schema.Struct({
  ...RunStateV1.fields,
  version: Schema.Literal(2),
  budget: BudgetState
})

/**
 * A run state of the newest version.
 *
 * @example
 * ```ts
 * import type { RunState } from "@agentkit/agents"
 *
 * const where = (state: RunState.RunState) => `${state.runId}: ${state.phase} of turn ${state.iteration}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface RunState extends Schema.Schema.Type<typeof RunStateV2> {}

/**
 * The newest version, what `encode` writes.
 *
 * @example
 * ```ts
 * import { RunState } from "@agentkit/agents"
 *
 * RunState.currentVersion // 2
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const currentVersion = 2

/**
 * A version 1 state as version 2. Version 1 recorded no reservation before a request was sent, so
 * what may have been in flight when it was saved is read from its phase (fail closed): phase
 * `model`, its model call; phase `tools`, the turn's calls without a result. No amounts were held.
 */
const fromV1 = (state: Schema.Schema.Type<typeof RunStateV1>): RunState => {
  const turn = state.transcript.at(-1)
  const open = state.phase === "tools" && turn?.role === "assistant"
    ? Math.max(0, turn.toolCalls.length - state.turn.completed.length)
    : 0
  return {
    ...state,
    version: 2,
    budget: {
      ...state.budget,
      inFlightModelCalls: Math.max(state.budget.inFlightModelCalls, state.phase === "model" ? 1 : 0),
      inFlightToolCalls: Math.max(state.budget.inFlightToolCalls, open),
      reservedNanos: 0,
      reservedTokens: 0
    }
  }
}

/** Each released version's decoder, bringing it to the newest. */
const decoders: Record<number, (u: unknown) => Either.Either<RunState, ParseResult.ParseError>> = {
  1: lazy(() => {
    const decode = Schema.decodeUnknownEither(RunStateV1)
    return (u: unknown) => Either.map(decode(u), fromV1)
  }),
  2: lazy(() => Schema.decodeUnknownEither(RunStateV2))
}

/**
 * The versions this release reads.
 *
 * @example
 * ```ts
 * import { RunState } from "@agentkit/agents"
 *
 * RunState.versions // [1, 2]
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const versions: ReadonlyArray<number> = Object.keys(decoders).map(Number)

const encodeV2 = lazy(() => Schema.encodeSync(RunStateV2))

/**
 * Encodes a state as canonical JSON text (keys sorted, so equal states are equal bytes).
 *
 * @example
 * ```ts
 * import { RunState } from "@agentkit/agents"
 *
 * const text = (state: RunState.RunState) => RunState.encode(state)
 * ```
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = (state: RunState): string => CanonicalJson.stringify(encodeV2(state))

const describe = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "an array" : typeof value === "string" ? "a string" : typeof value

/**
 * Decodes a stored state of any released version into the newest. A version this release does
 * not know is `RunStateVersionUnsupported`; text that is not a state is `RunStateCorrupt`, with
 * what was expected.
 *
 * @example
 * ```ts
 * import { RunState } from "@agentkit/agents"
 * import { Effect } from "effect"
 *
 * Effect.runSyncExit(RunState.decode("run-1", '{"version":9}')) // fails: RunStateVersionUnsupported
 * ```
 *
 * @since 0.1.0
 * @category encoding
 */
export const decode = (
  runId: string,
  text: string
): Effect.Effect<RunState, RunStateVersionUnsupported | RunStateCorrupt> =>
  Effect.suspend((): Effect.Effect<RunState, RunStateVersionUnsupported | RunStateCorrupt> => {
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      return Effect.fail(new RunStateCorrupt({ runId, detail: "it is not JSON; expected a run state object" }))
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      return Effect.fail(
        new RunStateCorrupt({ runId, detail: `it is ${describe(parsed)}; expected a run state object` })
      )
    }
    const version = (parsed as { readonly version?: unknown }).version
    if (typeof version !== "number" || !Number.isInteger(version)) {
      return Effect.fail(
        new RunStateCorrupt({ runId, detail: `its version is ${describe(version)}; expected an integer version` })
      )
    }
    const decoder = decoders[version]
    if (decoder === undefined) {
      return Effect.fail(new RunStateVersionUnsupported({ runId, version, supported: versions }))
    }
    const decoded = decoder(parsed)
    if (Either.isLeft(decoded)) {
      return Effect.fail(
        new RunStateCorrupt({
          runId,
          detail: `expected a run state of version ${version}: ${
            ParseResult.TreeFormatter.formatErrorSync(decoded.left)
          }`
        })
      )
    }
    if (decoded.right.runId !== runId) {
      return Effect.fail(new RunStateCorrupt({ runId, detail: `it is the state of run '${decoded.right.runId}'` }))
    }
    return Effect.succeed(decoded.right)
  })

/**
 * A finished run's recorded result (what `agent.run` returns for a run that is done). With
 * structured output, `parsed` holds the decoded answer in its encoded (JSON) form, decoded again
 * with the agent's output schema when it is read, and `error` the decode error of an
 * `invalid_output` run.
 *
 * @example
 * ```ts
 * import { RunState } from "@agentkit/agents"
 * import { Schema } from "effect"
 *
 * const decode = Schema.decodeUnknownSync(RunState.RecordedResult)
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const RecordedResult = Schema.Struct({
  output: Schema.String,
  /** The whole tree's usage. */
  usage: UsageState,
  /** The run's own usage (absent in a record written before it was kept: then the same as `usage`). */
  ownUsage: Schema.optional(UsageState),
  partial: Schema.Boolean,
  stopReason: Schema.String,
  transcript: Schema.Array(Message.Message),
  parsed: Schema.optional(Schema.Unknown),
  error: Schema.optional(Schema.String),
  /** A graph's: every node's output, by node id. */
  outputs: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String }))
})

/**
 * The reason a run failed or was cancelled, as recorded.
 *
 * @example
 * ```ts
 * import { RunState } from "@agentkit/agents"
 * import { Schema } from "effect"
 *
 * Schema.decodeUnknownSync(RunState.RecordedReason)({ reason: "BudgetExceeded: calls 3 > 2" })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const RecordedReason = Schema.Struct({ reason: Schema.String })
