/**
 * The trifecta state of a run, in one place: which legs a run tree has touched (they live on the
 * run context, one cell per tree), what a conversation passed in already touched, what a turn's
 * calls would touch together, which call completes the trifecta, what a tool result counts for
 * and how it is shown to the model, the static check over the advertised tools, and the
 * `policy.check` span. `RunPolicy` is its public face; the ReAct loop calls it through small
 * hooks. @internal
 */
import { capabilities as allCapabilities, toolFailureText, Tracing, Utf8 } from "@agentkit/core"
import type { Capability, Message, RunContext } from "@agentkit/core"
import type { ToolRegistry } from "@agentkit/tools"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { PolicyDenied, trifectaReason } from "../Errors.js"
import type { RunPolicy } from "../RunPolicy.js"

/** The legs as flags. */
export type Legs = RunContext.Legs

const none: ReadonlyArray<Capability> = Object.freeze([])

/** The trifecta capabilities among `caps`, sorted. */
export const trifectaOf = (caps: Iterable<Capability>): Array<Capability> => {
  const found = new Set<Capability>()
  for (const cap of caps) if (allCapabilities.includes(cap)) found.add(cap)
  return Array.from(found).sort()
}

/**
 * The caps of everything an agent can reach: its cognition's, else the union of its tools'; a tool
 * whose description is untrusted adds the untrusted leg (the model reads it when it is advertised).
 */
export const reach = (
  cognition: { readonly tools: ToolRegistry.ToolRegistry; readonly caps?: ReadonlyArray<Capability> | undefined }
) =>
  Object.freeze(
    trifectaOf([
      ...(cognition.caps ?? cognition.tools.tools().flatMap((tool) => tool.caps)),
      ...advertisedLegs(cognition.tools)
    ])
  )

/**
 * The legs advertising these tools touches: the untrusted leg when any description is untrusted
 * text (an MCP server's not declared trusted), from the first turn, called or not.
 */
export const advertisedLegs = (registry: ToolRegistry.ToolRegistry): ReadonlyArray<Capability> =>
  registry.tools().some((tool) => tool.untrustedDescription === true) ? untrustedOnly : none

const untrustedOnly: ReadonlyArray<Capability> = Object.freeze(["untrusted_content" as const])

/**
 * The legs a conversation passed in has touched: each tool result counts for its tool's caps; a
 * result from a tool the registry does not know counts as private and untrusted (fail closed).
 */
export const historyLegs = (
  messages: ReadonlyArray<Message.Message>,
  registry: ToolRegistry.ToolRegistry
): ReadonlyArray<Capability> => {
  let found: Set<Capability> | undefined
  for (const message of messages) {
    if (message.role !== "tool") continue
    found ??= new Set()
    const tool = Option.getOrUndefined(registry.getOption(message.name))
    if (tool === undefined) {
      found.add("private_data")
      found.add("untrusted_content")
    } else for (const cap of tool.caps) found.add(cap)
  }
  return found === undefined ? none : trifectaOf(found)
}

const canEgress = (tool: ToolRegistry.AnyTool): boolean => tool.caps.includes("egress")

/**
 * The legs a turn would touch: the tree's legs so far plus the caps of the turn's calls that have
 * not run (calls of unknown tools never run). `undefined` when no call of the turn can send:
 * then no call can complete the trifecta, and nothing is read.
 */
export const project = (
  context: RunContext.Service,
  registry: ToolRegistry.ToolRegistry,
  calls: ReadonlyArray<{ readonly name: string }>
): Legs | undefined => {
  let tools: Array<ToolRegistry.AnyTool> | undefined
  let egress = false
  for (const call of calls) {
    const tool = Option.getOrUndefined(registry.getOption(call.name))
    if (tool === undefined || tool.caps.length === 0) continue
    ;(tools ??= []).push(tool)
    if (canEgress(tool)) egress = true
  }
  if (!egress) return undefined
  const { legs } = context
  let privateData = legs.privateData
  let untrustedContent = legs.untrustedContent
  for (const tool of tools!) {
    if (tool.caps.includes("private_data")) privateData = true
    if (tool.caps.includes("untrusted_content")) untrustedContent = true
  }
  return { privateData, untrustedContent, egress: true }
}

/**
 * Whether a call of this tool completes the trifecta: it can send, and the legs so far plus its
 * own caps (and those of the other calls of its turn: `projected`) include private data and
 * untrusted content.
 */
export const completes = (tool: ToolRegistry.AnyTool, projected: Legs | undefined): boolean =>
  projected !== undefined && canEgress(tool) && projected.privateData && projected.untrustedContent

/** The dynamic check's verdict on a call, before it runs: `deny` only under `dynamic: "deny"`. */
export const denied = (policy: RunPolicy, tool: ToolRegistry.AnyTool, projected: Legs | undefined): boolean =>
  policy.dynamic === "deny" && completes(tool, projected)

/** Whether the call waits for a person at the policy gate. */
export const gated = (policy: RunPolicy, tool: ToolRegistry.AnyTool, projected: Legs | undefined): boolean =>
  policy.dynamic === "gate" && completes(tool, projected)

/** The dynamic check's decision on an egress call, as a `policy.check` span with the legs seen. */
export const checkSpan = (
  context: RunContext.Service,
  policy: RunPolicy,
  tool: ToolRegistry.AnyTool,
  projected: Legs | undefined,
  decision: "allow" | "deny" | "gate"
): Effect.Effect<void> => {
  if (!canEgress(tool) || !context.tracing || policy.dynamic === "off") return Effect.void
  const legs = projected ?? context.legs
  return Effect.withSpan(
    // set through `annotate`, so the legs reach OpenTelemetry as an array of strings
    Tracing.annotate({
      [Tracing.Attribute.policyTool]: tool.name,
      [Tracing.Attribute.policyLegs]: [
        ...(legs.privateData ? ["private_data"] : []),
        ...(legs.untrustedContent ? ["untrusted_content"] : []),
        "egress"
      ],
      [Tracing.Attribute.policyDecision]: decision
    }),
    Tracing.SpanName.policyCheck,
    { captureStackTrace: false }
  )
}

/** The legs a tool's result counts for, success or error: its trifecta caps. */
export const capsOf = (
  tool: ToolRegistry.AnyTool
): ReadonlyArray<Capability> => (tool.caps.length === 0 ? none : tool.caps)

/** The legs a delegating call's result carries: what its sub-runs touched. */
export const touchedOf = (legs: Legs): ReadonlyArray<Capability> => {
  if (!legs.privateData && !legs.untrustedContent && !legs.egress) return none
  const found: Array<Capability> = []
  if (legs.egress) found.push("egress")
  if (legs.privateData) found.push("private_data")
  if (legs.untrustedContent) found.push("untrusted_content")
  return found
}

/** How much of an untrusted tool's error text the model is shown (UTF-8 bytes), before it is wrapped. */
export const untrustedErrorBytes = 2048

/** The text the model sees for a successful result that carries these legs (untrusted output is wrapped). */
export const shownOutput = (
  policy: RunPolicy,
  toolName: string,
  text: string,
  legs: ReadonlyArray<Capability>
): string => legs.includes("untrusted_content") ? policy.wrapUntrusted(text, toolName) : text

/**
 * The text the model sees for a failed call that carries these legs: the failure text; from an
 * untrusted source it is capped, then wrapped like untrusted output (its message may hold the
 * attacker's words).
 */
export const shownFailure = (
  policy: RunPolicy,
  toolName: string,
  error: unknown,
  legs: ReadonlyArray<Capability>
): string => {
  const text = toolFailureText(toolName, error)
  if (!legs.includes("untrusted_content")) return text
  const { droppedBytes, kept } = Utf8.cut(text, untrustedErrorBytes)
  return policy.wrapUntrusted(droppedBytes === 0 ? kept : `${kept}…[truncated ${droppedBytes} bytes]`, toolName)
}

/** The static check, over the caps of everything the agent can reach, before the first model call. */
export const staticCheck = (policy: RunPolicy, caps: ReadonlyArray<Capability>): Effect.Effect<void, PolicyDenied> =>
  policy.static === "off" || caps.length < allCapabilities.length
    ? Effect.void
    : policy.static === "deny"
    ? Effect.fail(new PolicyDenied({ capabilities: [...caps] }))
    : Tracing.addEvent(Tracing.EventName.policyFlagged, {
      [Tracing.Attribute.policyMode]: policy.static,
      [Tracing.Attribute.policyCapabilities]: caps.join(","),
      [Tracing.Attribute.policyReason]: trifectaReason
    })
