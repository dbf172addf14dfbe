/**
 * Tools: plain, immutable values built from an Effect Schema definition. The description and the
 * JSON Schema the model is shown, the argument validation and the flags the framework reads all
 * come from one definition.
 *
 * A handler returns an `Effect`, a `Promise` or a plain value. A blocking (synchronous, CPU-bound)
 * handler blocks the event loop: Node cannot move a closure to a worker thread the way the Python
 * agentkit runs a sync function with `asyncio.to_thread`, so put I/O in a Promise or an Effect.
 *
 * @since 0.1.0
 */
import type {
  Capability,
  Chat,
  ExecuteOptions,
  InvokableTool,
  RunContext,
  ToolArgumentError,
  ToolExecutionError,
  ToolShapeError,
  ToolTimeoutError
} from "@agentkit/core"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type { Pipeable } from "effect/Pipeable"
import type * as Schema from "effect/Schema"
import type { Frozen } from "./internal/arguments.js"
import { renderValue } from "./internal/render.js"
import { build, TypeId } from "./internal/tool.js"

/**
 * The parameters of a tool: struct fields, or a whole `Schema.Struct` (use the latter for a rest
 * record, the seed's `**kwargs`).
 *
 * @example
 * ```ts
 * import type { Tool } from "@agentkit/tools"
 * import { Schema } from "effect"
 *
 * const fields: Tool.Parameters = { order_id: Schema.String }
 * const withRest: Tool.Parameters = Schema.Struct({ q: Schema.String }, Schema.Record({ key: Schema.String, value: Schema.Unknown }))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Parameters = Schema.Struct.Fields | Schema.Schema.AnyNoContext

/**
 * The schema of the parameters.
 *
 * @example
 * ```ts
 * import type { Tool } from "@agentkit/tools"
 * import { Schema } from "effect"
 *
 * const fields = { order_id: Schema.String }
 * type LookupParameters = Tool.ParametersSchema<typeof fields> // Schema.Struct<{ order_id: typeof Schema.String }>
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type ParametersSchema<P extends Parameters> = P extends Schema.Schema.AnyNoContext ? P
  : P extends Schema.Struct.Fields ? Schema.Struct<P>
  : never

/**
 * The decoded, deep-frozen arguments a handler receives.
 *
 * @example
 * ```ts
 * import type { Tool } from "@agentkit/tools"
 * import { Schema } from "effect"
 *
 * const fields = { order_id: Schema.String, limit: Schema.optional(Schema.Number) }
 * type LookupArgs = Tool.Args<typeof fields> // { readonly order_id: string; readonly limit?: number }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Args<P extends Parameters> = 0 extends 1 & P ? unknown // P is `any`: a tool of any parameters (ToolRegistry.AnyTool)
  : Schema.Struct.Fields extends P ? ParametersNotInferred
  : Frozen<Schema.Schema.Type<ParametersSchema<P>>>

/**
 * What a handler's arguments are typed as when TypeScript could not infer the parameters (an
 * inline generic call such as `Schema.optionalWith(...)` among the fields can defeat inference,
 * microsoft/TypeScript#54184): every use of the arguments is then a compile error instead of a
 * silent `any`. Declare the fields with `Schema.Struct({ ... })`, or write the optional field as
 * `Schema.String.pipe(Schema.optionalWith({ default: () => "..." }))`.
 *
 * @example
 * ```ts
 * import { Tool } from "@agentkit/tools"
 * import { Schema } from "effect"
 *
 * const search = Tool.make("search", {
 *   description: "Search the order archive by free text and return the matching ids.",
 *   parameters: Schema.Struct({ q: Schema.String, limit: Schema.optionalWith(Schema.Number, { default: () => 10 }) }),
 *   sideEffecting: false, handler: ({ q, limit }) => `top ${limit} orders matching ${q}` // inferred, not ParametersNotInferred
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ParametersNotInferred {
  readonly "Tool.make could not infer the parameters: use Schema.Struct({ ... }) or Schema.X.pipe(Schema.optionalWith(...))":
    never
}

/**
 * What a handler receives beside its arguments: an `AbortSignal` that fires when the run is
 * interrupted or the timeout passes, the run context, and, when the call came through the
 * Invoker's tool pipeline, the model's tool call id and the run id (`undefined` for a direct
 * `tool.run`).
 *
 * @example
 * ```ts
 * import { Tool } from "@agentkit/tools"
 * import { Schema } from "effect"
 *
 * const trackShipment = Tool.make("track_shipment", {
 *   description: "Fetch the carrier's tracking page for a shipment id.", parameters: { shipment_id: Schema.String },
 *   sideEffecting: false, handler: ({ shipment_id }, { signal, context }: Tool.HandlerContext) =>
 *     fetch(`https://carrier.example/track/${shipment_id}?run=${context.correlationId}`, { signal }).then((r) => r.text())
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface HandlerContext {
  readonly signal: AbortSignal
  readonly context: RunContext.Service
  /** The model's id for this tool call; `undefined` for a direct `tool.run`. */
  readonly callId: string | undefined
  /** The run's id (for now its `correlationId`); `undefined` for a direct `tool.run`. */
  readonly runId: string | undefined
}

/**
 * The errors `tool.run` adds to the handler's own.
 *
 * @example
 * ```ts
 * import type { Tool } from "@agentkit/tools"
 *
 * const forModel = (error: Tool.ToolError) =>
 *   error._tag === "ToolArgumentError" ? `fix the arguments: ${error.message}` : `tool failed: ${error.message}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type ToolError = ToolArgumentError | ToolShapeError | ToolExecutionError | ToolTimeoutError

/**
 * A tool value. It is immutable and pipeable; `Tool.make` builds it.
 *
 * @example
 * ```ts
 * import { Tool } from "@agentkit/tools"
 * import { Schema } from "effect"
 *
 * const fields = { order_id: Schema.String }
 * const lookupOrder: Tool.Tool<"lookup_order", typeof fields, string> = Tool.make("lookup_order", {
 *   description: "Look up an order by its id and return its status line.", parameters: fields,
 *   sideEffecting: false, handler: ({ order_id }) => `order ${order_id}: shipped`
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Tool<
  Name extends string = string,
  P extends Parameters = Parameters,
  Success = unknown,
  E = never,
  R = never
> extends InvokableTool<ToolError | E, R>, Pipeable {
  readonly [TypeId]: typeof TypeId
  readonly name: Name
  /** The trimmed description the model is shown. */
  readonly description: string
  /** The parameters schema. */
  readonly parameters: ParametersSchema<P>
  /** The output schema, when the tool declares one. */
  readonly success: Schema.Schema.AnyNoContext | undefined
  /** What the model is shown: `{ name, description, parameters }` (JSON Schema). */
  readonly schema: Chat.ToolSchema
  /** The handler's time limit. */
  readonly timeout: Duration.Duration | undefined
  /** The argument names the tool accepts, sorted. */
  readonly accepted: ReadonlyArray<string>
  /** Validates arguments without running anything (an approver's edit is checked with it). */
  readonly validate: (args: unknown) => Effect.Effect<Args<P>, ToolArgumentError>
  /** Validates the arguments, runs the handler, checks the output. Does not go through the pipeline. */
  readonly run: (args: unknown) => Effect.Effect<Success, ToolError | E, RunContext | R>
  /** `run` with the run context and call identity given: the tool pipeline's entry point. */
  readonly execute: (args: unknown, options: ExecuteOptions) => Effect.Effect<Success, ToolError | E, RunContext | R>
  /** The text the model sees for a result: the encoded form, capped in size. */
  readonly render: (value: unknown) => string
}

/**
 * What a handler may return: an Effect, a Promise or a plain value.
 *
 * @example
 * ```ts
 * import type { Tool } from "@agentkit/tools"
 * import { Effect } from "effect"
 *
 * const plain: Tool.HandlerResult = "order A-771: shipped"
 * const promised: Tool.HandlerResult = Promise.resolve("order A-771: shipped")
 * const effectful: Tool.HandlerResult = Effect.succeed("order A-771: shipped")
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type HandlerResult = Effect.Effect<unknown, unknown, unknown> | PromiseLike<unknown> | unknown

type SuccessOf<S, Out> = [S] extends [Schema.Schema.AnyNoContext] ? Schema.Schema.Type<S>
  : Out extends Effect.Effect<infer A, infer _E, infer _R> ? A
  : Out extends PromiseLike<infer A> ? A
  : Out
declare const UncheckedTypeId: unique symbol

/**
 * A value whose type is not known (an upstream API's JSON, say), handed to a tool with a
 * `success` schema to be checked when the tool runs (`unchecked`): a handler may return it where
 * the schema's type is expected, and a value that does not match fails the call with
 * `ToolShapeError`, as any result of the wrong shape does.
 *
 * @example
 * ```ts
 * import type { Tool } from "@agentkit/tools"
 *
 * const fromUpstream = (value: Tool.Unchecked) => value
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface Unchecked {
  readonly [UncheckedTypeId]: "Unchecked"
}

/**
 * Marks an untyped value (an upstream API's answer) for the tool's `success` check, without a
 * cast: the handler's result compiles, and the value is checked against `success` when the tool
 * runs (the seed's "force a shape"); a mismatch fails the call with `ToolShapeError`. The value
 * itself is returned as it is.
 *
 * @example
 * ```ts
 * import { Tool } from "@agentkit/tools"
 * import { Effect, Schema } from "effect"
 *
 * const upstream: Effect.Effect<unknown> = Effect.succeed({ symbol: "ACME", price: 12 })
 * const quote = Tool.make("quote", {
 *   description: "Look up the latest price of a stock by its ticker symbol.",
 *   parameters: { symbol: Schema.String },
 *   success: Schema.Struct({ symbol: Schema.String, price: Schema.Number }),
 *   sideEffecting: false,
 *   handler: () => Effect.map(upstream, Tool.unchecked)
 * })
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const unchecked = (value: unknown): Unchecked => value as Unchecked

/**
 * What a handler of a tool with output schema `S` may return: the schema's type, or an Effect or
 * a Promise of it, or a value marked `unchecked` (checked against `S` when the tool runs).
 * Without a schema, anything.
 *
 * @example
 * ```ts
 * import type { Tool } from "@agentkit/tools"
 * import { Schema } from "effect"
 *
 * const Quote = Schema.Struct({ price: Schema.Number })
 * const ok: Tool.HandlerResultFor<typeof Quote> = { price: 12 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type HandlerResultFor<S> = [S] extends [Schema.Schema.AnyNoContext] ?
    | Schema.Schema.Type<S>
    | Effect.Effect<Schema.Schema.Type<S>, unknown, unknown>
    | PromiseLike<Schema.Schema.Type<S>>
    | Unchecked
    | Effect.Effect<Unchecked, unknown, unknown>
    | PromiseLike<Unchecked>
  : unknown

type ErrorOf<Out> = Out extends Effect.Effect<infer _A, infer E, infer _R> ? E : never
// `unknown` requirements only arise from a handler typed away (`as never`): it needs nothing
type ContextOf<Out> = Out extends Effect.Effect<infer _A, infer _E, infer R> ? unknown extends R ? never
  : Exclude<R, RunContext>
  : never

/**
 * The options of `Tool.make`.
 *
 * @example
 * ```ts
 * import { Tool } from "@agentkit/tools"
 * import { Schema } from "effect"
 *
 * const options: Tool.Options<{ order_id: typeof Schema.String }, undefined, string> = {
 *   description: "Look up an order by its id and return its status line.", parameters: { order_id: Schema.String },
 *   sideEffecting: false, idempotent: true, handler: ({ order_id }) => `order ${order_id}: shipped`
 * }
 * const lookupOrder = Tool.make("lookup_order", options)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<P extends Parameters, S extends Schema.Schema.AnyNoContext | undefined, Out> {
  /** What the tool does and when to use it: the model's whole spec of it. At least 30 characters. */
  readonly description: string
  readonly parameters: P
  /** Optional output schema: the result is checked on every call. */
  readonly success?: S
  /** Required: true if the tool mutates the world (no undo), false if it is read-only. */
  readonly sideEffecting: boolean
  /** Safe to call twice with the same arguments (read by retry). Default false. */
  readonly idempotent?: boolean | undefined
  /**
   * Ask a person, whatever the autonomy tier: always (`true`), or when a condition of the call's
   * validated arguments and run context holds (a function returning a boolean or an
   * `Effect<boolean>`; one that fails or throws counts as true). Default false.
   */
  readonly requiresApproval?:
    | boolean
    | ((args: NoInfer<Args<P>>, context: RunContext.Service) => boolean | Effect.Effect<boolean, unknown>)
    | undefined
  /** Security capabilities for the lethal-trifecta policy. */
  readonly caps?: ReadonlyArray<Capability> | undefined
  /** The string parameter holding a URL, checked by the egress middleware. */
  readonly urlArg?: string | undefined
  /** Bounds the handler: past it the call fails with `ToolTimeoutError` and the signal aborts. */
  readonly timeout?: Duration.DurationInput | undefined
  /** The largest result text shown to the model, in UTF-8 bytes (default 65536). */
  readonly maxResultBytes?: number | undefined
  /**
   * The tool runs a sub-run (a sub-agent, as `asTool` builds): it takes no concurrency permit of
   * its own, so the sub-run's tools never wait on a permit the parent holds. Default false.
   */
  readonly delegating?: boolean | undefined
  /**
   * The description is untrusted text (a remote server's): advertising the tool counts as the
   * untrusted leg of the lethal trifecta from a run's first turn. Default false.
   */
  readonly untrustedDescription?: boolean | undefined
  /** The handler; with a `success` schema, its result must be of the schema's type (checked at compile time). */
  readonly handler: (args: NoInfer<Args<P>>, context: HandlerContext) => Out
}

/**
 * Makes a tool. Definition errors (a bad name, a missing `sideEffecting`, a thin description, an
 * unknown capability, a `urlArg` that is not a declared string parameter, an unsupported schema)
 * throw `ToolDefinitionError` here, so a bad tool fails when its module loads. With a `success`
 * schema, a handler whose result is not of the schema's type does not compile.
 *
 * @example
 * ```ts
 * import { Tool } from "@agentkit/tools"
 * import { Effect, Schema } from "effect"
 *
 * const lookupOrder = Tool.make("lookup_order", {
 *   description: "Look up an order by its id and return its status line.\n\nUse this whenever the user mentions an order number.",
 *   parameters: { order_id: Schema.String },
 *   sideEffecting: false,
 *   idempotent: true,
 *   handler: ({ order_id }) => Effect.succeed(`order ${order_id}: shipped 2026-08-14, arriving Tuesday`)
 * })
 *
 * JSON.stringify(lookupOrder.schema.parameters)
 * // {"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"]}
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <
  const Name extends string,
  P extends Parameters,
  Out extends HandlerResultFor<S>,
  S extends Schema.Schema.AnyNoContext | undefined = undefined
>(
  name: Name,
  options: Options<P, S, Out>
): Tool<Name, P, SuccessOf<S, Out>, ErrorOf<Out>, ContextOf<Out>> =>
  build(
    name,
    options as unknown as Options<Parameters, Schema.Schema.AnyNoContext | undefined, unknown>
  ) as unknown as Tool<
    Name,
    P,
    SuccessOf<S, Out>,
    ErrorOf<Out>,
    ContextOf<Out>
  >

/**
 * Whether a value is a tool made by `Tool.make` (or `asTool`).
 *
 * @example
 * ```ts
 * import { Tool } from "@agentkit/tools"
 *
 * Tool.isTool({ name: "x" }) // false
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isTool = (u: unknown): u is Tool<string, Parameters, unknown, unknown, unknown> =>
  typeof u === "object" && u !== null && TypeId in u

/**
 * The text the model sees for a value: a string as is, anything else as JSON (safe for BigInt and
 * cycles), cut at `maxBytes` UTF-8 bytes (default 64 KiB) with a `…[truncated N bytes]` marker.
 *
 * @example
 * ```ts
 * import { Tool } from "@agentkit/tools"
 *
 * Tool.renderResult({ status: 200 }) // '{"status":200}'
 * Tool.renderResult("plain text") // "plain text"
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const renderResult = (value: unknown, options?: { readonly maxBytes?: number | undefined }): string =>
  renderValue(value, options)
