/**
 * A workload: what one run does, independent of who runs it. Every case of a workload (its Effect
 * floor and the agentkit setups measured against it) runs exactly this: the same prompt and
 * input, the same mock model answering the same steps, the same tool.
 */
import { Effect, Schema } from "effect"

export interface Workload {
  /** Short id, used in `--workload` and in the JSON output. */
  readonly id: string
  /** One line for the report's heading. */
  readonly title: string
  /** The model name sent on every call. */
  readonly model: string
  /** The system prompt. */
  readonly prompt: string
  /** The user's input. */
  readonly input: string
  /** How many model steps ask for the tool before the final answer (1: two model steps, one tool call). */
  readonly toolRounds: number
  /** The `text` argument of every tool call (the tool echoes it back, so it is also the tool's result). */
  readonly argument: string
  /** The final answer's text: every run must end with it, or the case is broken. */
  readonly answer: string
}

/** The minimal workload of issues 10 and 19: two model steps and one tool call. */
export const minimal: Workload = {
  id: "minimal",
  title: "2 model steps, 1 tool call",
  model: "bench-model",
  prompt: "Echo.",
  input: "say hi",
  toolRounds: 1,
  argument: "hi",
  answer: "done"
}

/**
 * The realistic workload of issue 19: 20 model steps (19 tool calls, one a step) over a transcript
 * that grows to about 100 KB (each call's argument and the tool's result are 2.6 KB), so per-turn
 * copies and full-state checkpoints, O(n²) over a run, show.
 */
export const realistic: Workload = {
  id: "realistic",
  title: "20 model steps, 19 tool calls, ~100 KB transcript",
  model: "bench-model",
  prompt: "Echo.",
  input: "say hi, many times",
  toolRounds: 19,
  argument: "lorem ipsum dolor sit amet, ".repeat(93).slice(0, 2600),
  answer: "done"
}

/** The workloads, in report order. A new workload is added here and gets its own floor case. */
export const workloads: ReadonlyArray<Workload> = [minimal, realistic]

/**
 * The one tool every workload uses: it echoes its `text` argument, answering asynchronously (a
 * resolved promise), as real I/O does.
 */
export const echoTool = {
  name: "echo",
  description: "Echo the text back to the caller, unchanged, for benchmarking.",
  fields: { text: Schema.String },
  handler: ({ text }: { readonly text: string }): Effect.Effect<string> => Effect.promise(() => Promise.resolve(text))
} as const
