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
import {
  capabilities as acceptedCapabilities,
  PythonText,
  RunContext,
  ToolArgumentError,
  ToolDefinitionError,
  ToolExecutionError,
  ToolShapeError,
  ToolTimeoutError,
  Tracing
} from "@agentkit/core"
import type { Capability, Chat, InvokableTool } from "@agentkit/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import { type Pipeable, pipeArguments } from "effect/Pipeable"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import { acceptedArguments, type Frozen, makeArgumentDecoder } from "./internal/arguments.js"
import { fromParameters, isStringParameter } from "./internal/jsonSchema.js"
import { DEFAULT_MAX_BYTES, renderValue } from "./internal/render.js"

const TypeId: unique symbol = Symbol.for("@agentkit/tools/Tool")

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
export type ParametersSchema<P extends Parameters> = P extends Schema.Schema.AnyNoContext
  ? P
  : P extends Schema.Struct.Fields
    ? Schema.Struct<P>
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
export type Args<P extends Parameters> = 0 extends 1 & P
  ? unknown // P is `any`: a tool of any parameters (ToolRegistry.AnyTool)
  : Schema.Struct.Fields extends P
    ? ParametersNotInferred
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
  readonly "Tool.make could not infer the parameters: use Schema.Struct({ ... }) or Schema.X.pipe(Schema.optionalWith(...))": never
}

/**
 * What a handler receives beside its arguments: an `AbortSignal` that fires when the run is
 * interrupted or the timeout passes, and the run context.
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
  readonly success: Schema.Schema<Success, unknown> | undefined
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

type SuccessOf<S, Out> = [S] extends [Schema.Schema.AnyNoContext]
  ? Schema.Schema.Type<S>
  : Out extends Effect.Effect<infer A, infer _E, infer _R>
    ? A
    : Out extends PromiseLike<infer A>
      ? A
      : Out
type ErrorOf<Out> = Out extends Effect.Effect<infer _A, infer E, infer _R> ? E : never
type ContextOf<Out> = Out extends Effect.Effect<infer _A, infer _E, infer R> ? Exclude<R, RunContext> : never

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
  /** Always ask a person, whatever the autonomy tier. Default false. */
  readonly requiresApproval?: boolean | undefined
  /** Security capabilities for the lethal-trifecta policy. */
  readonly caps?: ReadonlyArray<Capability> | undefined
  /** The string parameter holding a URL, checked by the egress middleware. */
  readonly urlArg?: string | undefined
  /** Bounds the handler: past it the call fails with `ToolTimeoutError` and the signal aborts. */
  readonly timeout?: Duration.DurationInput | undefined
  /** The largest result text shown to the model, in UTF-8 bytes (default 65536). */
  readonly maxResultBytes?: number | undefined
  readonly handler: (args: NoInfer<Args<P>>, context: HandlerContext) => Out
}

const NAME = /^[a-zA-Z0-9_-]{1,64}$/

const fail = (message: string): never => {
  throw new ToolDefinitionError({ message })
}

const codePoints = (text: string): number => {
  let n = 0
  for (const _ of text) n++
  return n
}

/** Checks a definition's description and returns it trimmed. Shared with `asTool`. @internal */
export const checkDescription = (name: string, description: unknown): string => {
  const text = typeof description === "string" ? description.trim() : ""
  const length = codePoints(text)
  if (length < 30) {
    fail(
      `tool '${name}' needs a description of at least 30 characters so the model can understand it; got ${length} chars: ${PythonText.repr(text)}`
    )
  }
  return text
}

/** Checks a tool name against what providers accept. Shared with `asTool`. @internal */
export const checkName = (name: unknown): string => {
  if (typeof name !== "string" || !NAME.test(name)) {
    fail(`tool name ${JSON.stringify(name)} is invalid: it must match ^[a-zA-Z0-9_-]{1,64}$ (letters, digits, '_' and '-')`)
  }
  return name as string
}

const checkFlag = (name: string, flag: string, value: unknown): boolean => {
  if (value === undefined) return false
  if (typeof value !== "boolean") fail(`tool '${name}': \`${flag}\` must be true or false; got ${JSON.stringify(value)}`)
  return value as boolean
}

const expectedShapeName = (schema: Schema.Schema.AnyNoContext): string => {
  const ast = schema.ast
  const candidates = [ast, AST.typeAST(ast)]
  for (const node of candidates) {
    const id = AST.getIdentifierAnnotation(node)
    if (Option.isSome(id)) return id.value
    const title = AST.getTitleAnnotation(node)
    if (Option.isSome(title)) return title.value
  }
  return "Output"
}

const shapeErrors = (issue: ParseResult.ParseIssue): ReadonlyArray<string> =>
  ParseResult.ArrayFormatter.formatIssueSync(issue).map(
    (issue) => `${issue.path.length === 0 ? "top-level" : issue.path.map(String).join(".")}: ${issue.message}`
  )

const toExecutionError = (name: string) => (cause: unknown) => new ToolExecutionError({ toolName: name, cause })

const Proto = {
  [TypeId]: TypeId,
  pipe() {
    return pipeArguments(this, arguments)
  }
}

/**
 * Makes a tool. Definition errors (a bad name, a missing `sideEffecting`, a thin description, an
 * unknown capability, a `urlArg` that is not a declared string parameter, an unsupported schema)
 * throw `ToolDefinitionError` here, so a bad tool fails when its module loads.
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
  Out,
  S extends Schema.Schema.AnyNoContext | undefined = undefined
>(
  name: Name,
  options: Options<P, S, Out>
): Tool<Name, P, SuccessOf<S, Out>, ErrorOf<Out>, ContextOf<Out>> =>
  build(name, options as unknown as Options<Parameters, Schema.Schema.AnyNoContext | undefined, unknown>, false) as unknown as Tool<Name, P, SuccessOf<S, Out>, ErrorOf<Out>, ContextOf<Out>>

/** Builds a tool; `delegating` is set only by `asTool`. @internal */
export const build = (
  nameInput: string,
  options: Options<Parameters, Schema.Schema.AnyNoContext | undefined, unknown>,
  delegating: boolean
): Tool<string, Parameters, unknown, unknown, unknown> => {
  const name = checkName(nameInput)
  if (typeof options !== "object" || options === null) fail(`Tool.make('${name}', options): options must be an object`)
  if (typeof options.sideEffecting !== "boolean") {
    fail(
      "Tool.make requires an explicit `sideEffecting` (true if the tool mutates the world / has external effects, false if it's read-only). The framework's approval gating and idempotency depend on knowing upfront."
    )
  }
  const description = checkDescription(name, options.description)
  const idempotent = checkFlag(name, "idempotent", options.idempotent)
  const requiresApproval = checkFlag(name, "requiresApproval", options.requiresApproval)
  const caps = options.caps ?? []
  if (!Array.isArray(caps)) fail(`tool '${name}': \`caps\` must be an array of 'private_data', 'untrusted_content', 'egress'`)
  for (const cap of caps) {
    if (!acceptedCapabilities.includes(cap)) {
      fail(`tool '${name}': unknown capability ${JSON.stringify(cap)}; accepted: 'private_data', 'untrusted_content', 'egress'`)
    }
  }
  if (typeof options.handler !== "function") fail(`tool '${name}': \`handler\` must be a function`)

  const input = options.parameters
  const parameters: Schema.Schema.AnyNoContext = Schema.isSchema(input)
    ? input
    : typeof input === "object" && input !== null
      ? (Schema.Struct(input) as unknown as Schema.Schema.AnyNoContext)
      : fail(`tool '${name}': \`parameters\` must be struct fields or a Schema.Struct`)
  let jsonSchema: Chat.ToolSchema["parameters"]
  try {
    jsonSchema = fromParameters(parameters)
  } catch (error) {
    return fail(`tool '${name}': unsupported parameters schema: ${error instanceof Error ? error.message : String(error)}`)
  }
  const urlArg = options.urlArg
  if (urlArg !== undefined && !isStringParameter(parameters, urlArg)) {
    fail(`tool '${name}': urlArg '${String(urlArg)}' must name a declared string parameter; declared: ${acceptedArguments(parameters).join(", ") || "(none)"}`)
  }
  let timeout: Duration.Duration | undefined
  if (options.timeout !== undefined) {
    const decoded = Duration.decodeUnknown(options.timeout)
    if (Option.isNone(decoded) || Duration.toMillis(decoded.value) <= 0) {
      fail(`tool '${name}': \`timeout\` must be a positive Duration (e.g. "5 seconds"); got ${String(options.timeout)}`)
    }
    timeout = Option.getOrUndefined(decoded)
  }
  const maxBytes = options.maxResultBytes ?? DEFAULT_MAX_BYTES

  // Everything below is built once, here, never per call.
  const decode = makeArgumentDecoder(parameters)
  const accepted = acceptedArguments(parameters)
  const success = options.success
  const validate = success === undefined ? undefined : ParseResult.validateEither(Schema.typeSchema(success))
  const encode = success === undefined ? undefined : ParseResult.encodeUnknownEither(success)
  const expected = success === undefined ? "Output" : expectedShapeName(success)
  const handler = options.handler
  const onError = toExecutionError(name)

  const invoke = (args: unknown, context: RunContext.Service): Effect.Effect<unknown, unknown, unknown> =>
    Effect.suspend(() => {
      let controller: AbortController | undefined
      const handlerContext: HandlerContext = {
        get signal() {
          controller ??= new AbortController()
          return controller.signal
        },
        context
      }
      let out: unknown
      try {
        out = handler(args as never, handlerContext)
      } catch (error) {
        return Effect.fail(onError(error))
      }
      const running: Effect.Effect<unknown, unknown, unknown> = Effect.isEffect(out)
        ? Effect.catchAllDefect(out, (defect) => Effect.fail(onError(defect)))
        : isPromiseLike(out)
          ? Effect.tryPromise({ try: () => out as PromiseLike<unknown>, catch: onError })
          : Effect.succeed(out)
      // Create the controller if the handler has not read its signal yet: a handler that reads it
      // later (after an `await`) must still see it aborted.
      return Effect.onInterrupt(running, () =>
        Effect.sync(() => (controller ??= new AbortController()).abort(new Error(`tool '${name}' interrupted`)))
      )
    })

  const bounded = (args: unknown, context: RunContext.Service) =>
    timeout === undefined
      ? invoke(args, context)
      : Effect.timeoutFail(invoke(args, context), {
          duration: timeout,
          onTimeout: () => new ToolTimeoutError({ toolName: name, timeout: Duration.format(timeout) })
        })

  const checkOutput = (value: unknown): Effect.Effect<unknown, ToolShapeError> => {
    if (validate === undefined) return Effect.succeed(value)
    const result = validate(value)
    if (Either.isRight(result)) return Effect.succeed(result.right)
    return Effect.zipRight(
      Tracing.addEvent(Tracing.EventName.toolShapeMismatch, { tool_name: name, expected_shape: expected }),
      Effect.fail(new ToolShapeError({ toolName: name, expected, raw: value, errors: shapeErrors(result.left) }))
    )
  }

  const validateArgs = (args: unknown): Effect.Effect<unknown, ToolArgumentError> => {
    const decoded = decode(args)
    if (Either.isRight(decoded)) return Effect.succeed(decoded.right)
    const { unexpected, missing, invalid } = decoded.left
    return Effect.fail(new ToolArgumentError({ toolName: name, unexpected, missing, invalid, accepted }))
  }

  const run = (args: unknown) =>
    Effect.flatMap(RunContext, (context) =>
      Effect.flatMap(validateArgs(args), (decoded) => Effect.flatMap(bounded(decoded, context), checkOutput))
    )

  const render = (value: unknown): string => {
    if (encode === undefined) return renderValue(value, { maxBytes })
    const encoded = encode(value)
    return renderValue(Either.isRight(encoded) ? encoded.right : value, { maxBytes })
  }

  const tool = Object.assign(Object.create(Proto), {
    name,
    description,
    parameters,
    success,
    schema: Object.freeze({ name, description, parameters: jsonSchema }),
    sideEffecting: options.sideEffecting,
    idempotent,
    requiresApproval,
    caps: Object.freeze([...caps]),
    urlArg,
    timeout,
    accepted,
    delegating,
    validate: validateArgs,
    run,
    render
  })
  return Object.freeze(tool)
}

const isPromiseLike = (u: unknown): u is PromiseLike<unknown> =>
  typeof u === "object" && u !== null && "then" in u && typeof u.then === "function"

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
 * @category rendering
 */
export const renderResult = (value: unknown, options?: { readonly maxBytes?: number | undefined }): string =>
  renderValue(value, options)
