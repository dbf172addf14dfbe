/**
 * Structured output: an agent's answer decoded into a schema's Type (`Agent.make({ output })`).
 *
 * The model is told the shape in one of two ways. A **schema block** is a system message after
 * the agent's prompt that holds the output's JSON Schema (derived by the tools package's walker,
 * so its bytes are the same from run to run); the answer's text is then decoded as JSON. A
 * **forced output tool** (`structured_output`, whose input schema is the output's JSON Schema) is
 * a call the provider is made to answer with (`ChatRequest.toolChoice`); its input is decoded.
 * A **native format** (`ChatRequest.responseFormat`, the output's JSON Schema) is the provider's
 * own structured output (OpenAI's strict `json_schema`); the answer's text is decoded.
 * `SingleCallCognition` uses the native format for an object answer where the provider honours
 * it (`features.responseFormat`), else forces the tool where the provider honours that
 * (`features.toolChoice`, as Anthropic does), and uses the schema block elsewhere; `ReActCognition` always uses the schema
 * block (forcing a tool would stop it calling its real tools).
 *
 * An answer that does not decode is repaired: the model is told why, with the decode error (the
 * `path: message` lines of Effect's `ArrayFormatter`, joined by `; `), and asked again, once in a
 * ReAct loop, up to `maxRepairs` times (default 1) in a single call. After that the run ends
 * `partial` with stop reason `invalid_output` and the error on the result.
 *
 * @since 0.1.0
 */
import { FAILURE_TEXT_MAX_BYTES, Message, Utf8 } from "@agentkit/core"
import type { Chat } from "@agentkit/core"
import { JsonSchema } from "@agentkit/tools"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { AgentDefinitionError } from "./Errors.js"

/**
 * How an agent's answer is decoded and how the model is told its shape. Made by `Agent.make({
 * output })` (or `StructuredOutput.make`), handed to the cognition with every drive.
 *
 * @example
 * ```ts
 * import { StructuredOutput } from "@agentkit/agents"
 * import { Either, Schema } from "effect"
 *
 * const output: StructuredOutput.StructuredOutput<{ readonly status: string }> = StructuredOutput.make(Schema.Struct({ status: Schema.String }))
 * Either.getOrThrow(output.decodeText('{"status":"shipped"}')) // { status: "shipped" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface StructuredOutput<A> {
  /** The output's JSON Schema (the encoded side: what the model writes). */
  readonly jsonSchema: JsonSchema.JsonSchema
  /** How many times a single call asks again after an answer that does not decode. */
  readonly maxRepairs: number
  /** The system message that tells the model the shape. */
  readonly schemaBlock: Message.SystemMessage
  /** The forced output tool: its input is the answer (wrapped as `{ value }` when the output is not an object). */
  readonly tool: Chat.ToolSchema
  /** Decodes an answer's text (JSON, optionally inside one code fence). */
  readonly decodeText: (text: string) => Either.Either<A, string>
  /** Decodes an encoded value (the output tool's answer, a recorded result). */
  readonly decode: (encoded: unknown) => Either.Either<A, string>
  /** The answer the output tool's input stands for, as a value and as the JSON text of the result. */
  readonly fromToolInput: (input: unknown) => { readonly value: unknown; readonly text: string }
  /** Encodes a decoded answer to its JSON value (for a recorded result). */
  encode(value: A): unknown
}

/**
 * The name of the forced output tool.
 *
 * @example
 * ```ts
 * import { StructuredOutput } from "@agentkit/agents"
 *
 * StructuredOutput.toolName // "structured_output"
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const toolName = "structured_output"

/**
 * What the model is asked again with after an answer that does not decode: the Python agentkit's
 * texts, ReAct's and the single call's (which says `ONLY`).
 *
 * @example
 * ```ts
 * import { StructuredOutput } from "@agentkit/agents"
 *
 * StructuredOutput.repairText("react", "status: is missing")
 * // "Your previous response was invalid (status: is missing). Return only output matching the required format."
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const repairText = (cognition: "react" | "single_call", error: string): string =>
  `Your previous response was invalid (${error}). Return ${
    cognition === "react" ? "only" : "ONLY"
  } output matching the required format.`

/**
 * The text of the schema block: the instruction, then the JSON Schema on one line.
 *
 * @example
 * ```ts
 * import { StructuredOutput } from "@agentkit/agents"
 *
 * StructuredOutput.schemaBlockText({ type: "object", properties: { status: { type: "string" } }, required: ["status"] })
 * // 'Respond with only JSON that matches this JSON Schema (no prose, no code fences):\n{"type":"object",...}'
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const schemaBlockText = (jsonSchema: JsonSchema.JsonSchema): string =>
  `Respond with only JSON that matches this JSON Schema (no prose, no code fences):\n${JSON.stringify(jsonSchema)}`

/** How many decode issues an error text lists (the rest are counted). */
const MAX_ISSUES = 20

/**
 * A parse error as one line: its `ArrayFormatter` issues as `path: message` (`(root)` for the
 * whole value), joined by `; `. A hostile or huge answer cannot make it huge: past 20 issues the
 * rest are counted (`and N more issues`), and the text is cut at `FAILURE_TEXT_MAX_BYTES` (8 KiB)
 * with a marker, since it goes back to the model in the repair message and onto the result.
 *
 * @example
 * ```ts
 * import { StructuredOutput } from "@agentkit/agents"
 * import { Either, Schema } from "effect"
 *
 * const result = Schema.decodeUnknownEither(Schema.Struct({ steps: Schema.Array(Schema.String) }))({})
 * if (Either.isLeft(result)) StructuredOutput.formatError(result.left) // "steps: is missing"
 * ```
 *
 * @since 0.1.0
 * @category formatting
 */
export const formatError = (error: ParseResult.ParseError): string => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
  const shown = issues
    .slice(0, MAX_ISSUES)
    .map((issue) => `${issue.path.length === 0 ? "(root)" : issue.path.map(String).join(".")}: ${issue.message}`)
  if (issues.length > MAX_ISSUES) shown.push(`and ${issues.length - MAX_ISSUES} more issues`)
  return Utf8.truncate(shown.join("; "), FAILURE_TEXT_MAX_BYTES)
}

const FENCE = /^```[a-zA-Z0-9_-]*\s*\n([\s\S]*?)\n?```$/

/** The text inside one surrounding code fence, else the text itself (trimmed). */
const unfenced = (text: string): string => {
  const trimmed = text.trim()
  const fenced = FENCE.exec(trimmed)
  return fenced === null ? trimmed : fenced[1]!.trim()
}

const definitionError = (message: string): never => {
  throw new AgentDefinitionError({ message })
}

const TOOL_DESCRIPTION =
  "Return the final answer as structured data: call this tool once, with the answer as its input."

/**
 * Makes the structured output of a schema. A schema without a JSON representation (a
 * declaration such as `Schema.DateFromSelf`, a `bigint`) or a `maxRepairs` that is not a
 * non-negative integer throws `AgentDefinitionError`, naming the problem.
 *
 * @example
 * ```ts
 * import { StructuredOutput } from "@agentkit/agents"
 * import { Schema } from "effect"
 *
 * const Verdict = Schema.Struct({ status: Schema.Literal("shipped", "lost"), eta: Schema.optional(Schema.String) })
 * const output = StructuredOutput.make(Verdict, { maxRepairs: 2 })
 * output.tool.name // "structured_output"
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <A, I>(
  schema: Schema.Schema<A, I, never>,
  options: { readonly maxRepairs?: number | undefined } = {}
): StructuredOutput<A> => {
  if (!Schema.isSchema(schema)) {
    definitionError("structured output: `output` must be an Effect Schema (e.g. Schema.Struct({ ... }))")
  }
  const maxRepairs = options.maxRepairs ?? 1
  if (!Number.isInteger(maxRepairs) || maxRepairs < 0) {
    definitionError(`structured output: maxRepairs must be a non-negative integer; got ${String(options.maxRepairs)}`)
  }
  const derived = JsonSchema.make(schema)
  if (Either.isLeft(derived)) return definitionError(`structured output: ${derived.left}`)
  const jsonSchema = derived.right
  // a tool's input is a JSON object: any other answer is wrapped as `{ value }`
  const wrapped = jsonSchema["type"] !== "object"
  const tool: Chat.ToolSchema = {
    name: toolName,
    description: TOOL_DESCRIPTION,
    parameters: wrapped ? { type: "object", properties: { value: jsonSchema }, required: ["value"] } : jsonSchema
  }
  const decodeJson = Schema.decodeUnknownEither(Schema.parseJson(schema), { errors: "all" })
  const decodeValue = Schema.decodeUnknownEither(schema, { errors: "all" })
  const encodeValue = Schema.encodeSync(schema)
  return {
    jsonSchema,
    maxRepairs,
    schemaBlock: Message.system(schemaBlockText(jsonSchema)),
    tool,
    decodeText: (text) => Either.mapLeft(decodeJson(unfenced(text)), formatError),
    decode: (encoded) => Either.mapLeft(decodeValue(encoded), formatError),
    fromToolInput: (input) => {
      const value = wrapped && typeof input === "object" && input !== null && "value" in input ? input.value : input
      return { value, text: (JSON.stringify(value) as string | undefined) ?? "" }
    },
    encode: (value) => encodeValue(value)
  }
}

/**
 * The conversation with the schema block in place: after the leading system messages (the
 * agent's prompt), before the first other message.
 *
 * @example
 * ```ts
 * import { StructuredOutput } from "@agentkit/agents"
 * import { FAILURE_TEXT_MAX_BYTES, Message, Utf8 } from "@agentkit/core"
 * import { Schema } from "effect"
 *
 * const output = StructuredOutput.make(Schema.Struct({ status: Schema.String }))
 * StructuredOutput.withSchemaBlock([Message.system("Be brief."), Message.user("Where is A-771?")], output).map((m) => m.role)
 * // ["system", "system", "user"]
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const withSchemaBlock = <A>(
  messages: ReadonlyArray<Message.Message>,
  output: StructuredOutput<A>
): Array<Message.Message> => {
  let head = 0
  while (head < messages.length && messages[head]!.role === "system") head++
  return [...messages.slice(0, head), output.schemaBlock, ...messages.slice(head)]
}
