/**
 * How a tool value is built: the definition checks and the per-call pipeline (validate, run the
 * handler with its signal, bound it by the timeout, check the output). `Tool.make` builds tools
 * here; it is not part of the public API. @internal
 */
import {
  capabilities as acceptedCapabilities,
  errorMessage,
  errorType,
  PythonText,
  RunContext,
  ToolArgumentError,
  ToolDefinitionError,
  ToolExecutionError,
  ToolShapeError,
  ToolTimeoutError,
  Tracing
} from "@agentkit/core"
import type { ApprovalCondition, Chat, ExecuteOptions } from "@agentkit/core"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import { pipeArguments } from "effect/Pipeable"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import type { HandlerContext, Options, Parameters, Tool } from "../Tool.js"
import { acceptedArguments, makeArgumentDecoder } from "./arguments.js"
import { fromParameters, isStringParameter } from "./jsonSchema.js"
import { DEFAULT_MAX_BYTES, renderValue } from "./render.js"

/** Marks tool values. */
export const TypeId: unique symbol = Symbol.for("@agentkit/tools/Tool")

const NAME = /^[a-zA-Z0-9_-]{1,64}$/

const fail = (message: string): never => {
  throw new ToolDefinitionError({ message })
}

const codePoints = (text: string): number => {
  let n = 0
  for (const _ of text) n++
  return n
}

/** Checks a definition's description and returns it trimmed. */
const checkDescription = (name: string, description: unknown): string => {
  const text = typeof description === "string" ? description.trim() : ""
  const length = codePoints(text)
  if (length < 30) {
    fail(
      `tool '${name}' needs a description of at least 30 characters so the model can understand it; got ${length} chars: ${
        PythonText.repr(text)
      }`
    )
  }
  return text
}

/** Checks a tool name against what providers accept. */
const checkName = (name: unknown): string => {
  if (typeof name !== "string" || !NAME.test(name)) {
    fail(
      `tool name ${JSON.stringify(name)} is invalid: it must match ^[a-zA-Z0-9_-]{1,64}$ (letters, digits, '_' and '-')`
    )
  }
  return name as string
}

const checkFlag = (name: string, flag: string, value: unknown): boolean => {
  if (value === undefined) return false
  if (typeof value !== "boolean") {
    fail(`tool '${name}': \`${flag}\` must be true or false; got ${JSON.stringify(value)}`)
  }
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

/**
 * An Effect handler's defect: a `ToolExecutionError` marked `defect`, so the model sees a generic
 * failure; the details (type, message, stack) go to the current span as an `exception` event.
 */
const toDefect = (name: string, tracing: boolean) => (defect: unknown) => {
  const error = new ToolExecutionError({ toolName: name, cause: defect, defect: true })
  if (!tracing) return Effect.fail(error)
  let stack: string | undefined
  try {
    stack = defect instanceof Error && typeof defect.stack === "string" ? defect.stack : undefined
  } catch {
    stack = undefined
  }
  return Effect.zipRight(
    Tracing.addEvent(Tracing.EventName.exception, {
      [Tracing.Attribute.exceptionType]: errorType(defect),
      [Tracing.Attribute.exceptionMessage]: errorMessage(defect),
      ...(stack === undefined ? {} : { [Tracing.Attribute.exceptionStacktrace]: stack })
    }),
    Effect.fail(error)
  )
}

/**
 * What a handler is called with. Its signal (and the controller behind it) is made only when the
 * handler reads it, or when the call is interrupted: a handler that reads it later (after an
 * `await`) still sees it aborted.
 */
class CallContext implements HandlerContext {
  #controller: AbortController | undefined = undefined
  constructor(
    readonly context: HandlerContext["context"],
    readonly callId: string | undefined,
    readonly runId: string | undefined
  ) {}
  get signal(): AbortSignal {
    return (this.#controller ??= new AbortController()).signal
  }
  static abort(call: CallContext, toolName: string): void {
    ;(call.#controller ??= new AbortController()).abort(new Error(`tool '${toolName}' interrupted`))
  }
}

const Proto = {
  [TypeId]: TypeId,
  pipe() {
    return pipeArguments(this, arguments)
  }
}

/** Builds a tool. @internal */
export const build = (
  nameInput: string,
  options: Options<Parameters, Schema.Schema.AnyNoContext | undefined, unknown>
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
  const approval: unknown = options.requiresApproval
  if (approval !== undefined && typeof approval !== "boolean" && typeof approval !== "function") {
    fail(
      `tool '${name}': \`requiresApproval\` must be true, false or a function (args, context) => boolean | Effect<boolean>; got ${
        JSON.stringify(approval)
      }`
    )
  }
  const requiresApproval: boolean | ApprovalCondition = typeof approval === "function"
    ? (approval as ApprovalCondition)
    : approval === true
  const delegating = checkFlag(name, "delegating", options.delegating)
  const untrustedDescription = checkFlag(name, "untrustedDescription", options.untrustedDescription)
  const caps = options.caps ?? []
  if (!Array.isArray(caps)) {
    fail(`tool '${name}': \`caps\` must be an array of 'private_data', 'untrusted_content', 'egress'`)
  }
  for (const cap of caps) {
    if (!acceptedCapabilities.includes(cap)) {
      fail(
        `tool '${name}': unknown capability ${
          JSON.stringify(cap)
        }; accepted: 'private_data', 'untrusted_content', 'egress'`
      )
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
    return fail(`tool '${name}': unsupported parameters schema: ${errorMessage(error)}`)
  }
  const urlArg = options.urlArg
  if (urlArg !== undefined && !isStringParameter(parameters, urlArg)) {
    fail(
      `tool '${name}': urlArg '${String(urlArg)}' must name a declared string parameter; declared: ${
        acceptedArguments(parameters).join(", ") || "(none)"
      }`
    )
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
  if (!(Number.isSafeInteger(maxBytes) && maxBytes > 0)) {
    fail(
      `tool '${name}': \`maxResultBytes\` must be a positive integer (UTF-8 bytes); got ${
        String(options.maxResultBytes)
      }`
    )
  }
  if (acceptedArguments(parameters).includes("__proto__")) {
    // Effect's decoder would set the decoded object's prototype instead of the key
    fail(`tool '${name}': a parameter cannot be named '__proto__'`)
  }

  // Everything below is built once, here, never per call.
  const decode = makeArgumentDecoder(parameters)
  const accepted = acceptedArguments(parameters)
  const success = options.success
  const validate = success === undefined ? undefined : ParseResult.validateEither(Schema.typeSchema(success))
  const encode = success === undefined ? undefined : ParseResult.encodeUnknownEither(success)
  const expected = success === undefined ? "Output" : expectedShapeName(success)
  const handler = options.handler
  const onError = toExecutionError(name)

  // One uninterruptible region per call: the handler is called in it (a synchronous call cannot
  // be interrupted anyway) and what it returns runs interruptibly inside it, so that, however the
  // call ends, an Effect handler's defect becomes a `ToolExecutionError` and an interruption
  // aborts the handler's signal (`catchAllDefect` and `onInterrupt` in one frame).
  const invoke = (args: unknown, options: ExecuteOptions): Effect.Effect<unknown, unknown, unknown> =>
    Effect.uninterruptibleMask((restore) => {
      const context = options.context
      const handlerContext = new CallContext(context, options.callId, options.runId)
      let out: unknown
      try {
        out = handler(args as never, handlerContext)
      } catch (error) {
        return Effect.fail(onError(error))
      }
      // An Effect handler reads `yield* RunContext` from the environment the Invoker read the
      // call's context from: nothing is provided per call.
      const effect = Effect.isEffect(out)
      if (!effect && !Predicate.isPromiseLike(out)) return Effect.succeed(out)
      const running: Effect.Effect<unknown, unknown, unknown> = effect
        ? (out as Effect.Effect<unknown, unknown, unknown>)
        : Effect.tryPromise({ try: () => out as PromiseLike<unknown>, catch: onError })
      return Effect.matchCauseEffect(restore(running), {
        onSuccess: Effect.succeed,
        onFailure: (cause) => {
          const defect = effect ? Cause.dieOption(cause) : Option.none()
          if (Option.isSome(defect)) return toDefect(name, context.tracing)(defect.value)
          if (Cause.isInterruptedOnly(cause)) CallContext.abort(handlerContext, name)
          return Effect.failCause(cause)
        }
      })
    })

  const bounded = (args: unknown, options: ExecuteOptions) =>
    timeout === undefined
      ? invoke(args, options)
      : Effect.timeoutFail(invoke(args, options), {
        duration: timeout,
        onTimeout: () => new ToolTimeoutError({ toolName: name, timeout: Duration.format(timeout) })
      })

  const checkOutput = (value: unknown): Effect.Effect<unknown, ToolShapeError> => {
    if (validate === undefined) return Effect.succeed(value)
    const result = validate(value)
    if (Either.isRight(result)) return Effect.succeed(result.right)
    return Effect.zipRight(
      Tracing.addEvent(Tracing.EventName.toolShapeMismatch, {
        [Tracing.EventAttribute.toolName]: name,
        [Tracing.EventAttribute.expectedShape]: expected
      }),
      Effect.fail(new ToolShapeError({ toolName: name, expected, raw: value, errors: shapeErrors(result.left) }))
    )
  }

  const decodeArgs = (args: unknown): Either.Either<unknown, ToolArgumentError> =>
    Either.mapLeft(decode(args), (problems) => new ToolArgumentError({ toolName: name, ...problems, accepted }))

  const validateArgs = (args: unknown): Effect.Effect<unknown, ToolArgumentError> => decodeArgs(args)

  // valid arguments go straight to the handler, and without a `success` schema its value is the
  // output: no step is spent on what is already known
  const execute = (args: unknown, options: ExecuteOptions): Effect.Effect<unknown, unknown, unknown> => {
    const decoded = decodeArgs(args)
    if (Either.isLeft(decoded)) return Effect.fail(decoded.left)
    const ran = bounded(decoded.right, options)
    return validate === undefined ? ran : Effect.flatMap(ran, checkOutput)
  }

  const run = (args: unknown) => RunContext.with((context) => execute(args, { context }))

  const render = (value: unknown): string => {
    if (encode === undefined) return renderValue(value, { maxBytes })
    let shown = value
    try {
      const encoded = encode(value)
      if (Either.isRight(encoded)) shown = encoded.right
    } catch {
      // an encoding that throws: the value as it is
    }
    return renderValue(shown, { maxBytes })
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
    untrustedDescription,
    validate: validateArgs,
    run,
    execute,
    render
  })
  return Object.freeze(tool)
}
