/**
 * A run recorded through the real SDK and the local Messages API emulator keeps no credential:
 * not the API key the SDK sends in its headers (the emulator echoes it in its error), not a token
 * in a tool's arguments, in a tool's result or in a provider error's text. The recorder is given
 * no secrets here: the credential-shaped values are found by their shape. Then the recording
 * replays offline to the same failure.
 */
import { Agent, ReActCognition } from "@agentkit/agents"
import { AnthropicChatModel } from "@agentkit/anthropic"
import { ChatModelError, Invoker, RunContext } from "@agentkit/core"
import { Fixture, makeTestCtx, Recorder, Recording, Replay } from "@agentkit/testing"
import { Tool } from "@agentkit/tools"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { apiError, emulator, sse } from "./emulator.js"

const KEY = "sk-ant-api03-Q1w2E3r4T5y6U7i8O9p0AaSsDdFfGgHh-emulator"
const ARGUMENT_TOKEN = "ghp_R3c0rd1ngT0k3nInAnArgument000000"
const RESULT_TOKEN = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjb3VyaWVyIn0.c2lnbmVkLWJ5LXRoZS1jb3VyaWVy"
const ERROR_TOKEN = "xoxb-2468013579-ErrorTextToken"
const SECRETS = [KEY, ARGUMENT_TOKEN, RESULT_TOKEN, ERROR_TOKEN]

const trackOrder = Tool.make("track_order", {
  description: "Track an order with the courier and return the tracking link for the customer.",
  parameters: { order_id: Schema.String, note: Schema.String },
  sideEffecting: false,
  idempotent: true,
  handler: ({ order_id }) =>
    Effect.succeed(`order ${order_id}: in transit; link https://courier.example/t?jwt=${RESULT_TOKEN}`)
})

const agent = Agent.make({
  name: "support",
  model: "claude-sonnet-4-6",
  prompt: "Answer order questions. Use the tools; never guess a status.",
  cognition: ReActCognition.make({ tools: [trackOrder] })
})

describe("a recording made through the Anthropic emulator", () => {
  it.scopedLive("holds no key, token or secret, from headers, tool arguments, tool results or error texts", () =>
    Effect.gen(function*() {
      const emu = yield* emulator([
        sse({
          id: "msg_1",
          blocks: [
            { text: ["Let me track it."] },
            {
              toolUse: {
                id: "toolu_1",
                name: "track_order",
                json: [`{"order_id":"A-771","note":"courier token ${ARGUMENT_TOKEN}"}`]
              }
            }
          ],
          stopReason: "tool_use"
        }),
        // the second request is refused; the text echoes the key the SDK sent and another token
        apiError(401, "authentication_error", `invalid x-api-key ${KEY}; workspace token ${ERROR_TOKEN} revoked`)
      ])
      const recorder = Recorder.make()
      const live = Layer.provide(
        Invoker.layer({ chatMiddleware: [recorder.middleware], toolMiddleware: [recorder.middleware] }),
        AnthropicChatModel.layer({ apiKey: KEY, baseURL: emu.url })
      )
      const failed = yield* Effect.flip(
        agent.run("Where is order A-771?").pipe(RunContext.provide({ runId: "recorded" }), Effect.provide(live))
      )

      // the secrets really went through: the key in the headers, the tokens in the second request and the error
      expect(emu.requests[0]!.headers["authorization"]).toBe(`Bearer ${KEY}`)
      expect(emu.requests[1]!.rawBody).toContain(ARGUMENT_TOKEN)
      expect(emu.requests[1]!.rawBody).toContain(RESULT_TOKEN)
      expect(failed).toBeInstanceOf(ChatModelError)
      expect((failed as ChatModelError).message).toContain(ERROR_TOKEN)

      const path = join(mkdtempSync(join(tmpdir(), "agentkit-anthropic-recording-")), "run.recording.json")
      yield* recorder.write(path)
      const text = readFileSync(path, "utf8")
      for (const secret of SECRETS) expect(text).not.toContain(secret)
      expect(text).not.toContain("sk-ant")

      const recording = yield* Recording.read(path)
      const [first, tool, second] = recording.exchanges as [
        Recording.ChatExchange,
        Recording.ToolExchange,
        Recording.ChatExchange
      ]
      expect(first.response?.toolCalls).toEqual([
        { id: "toolu_1", name: "track_order", arguments: { order_id: "A-771", note: "courier token [redacted]" } }
      ])
      expect(tool.text).toBe("order A-771: in transit; link https://courier.example/t?jwt=[redacted]")
      expect(second.error).toMatchObject({ reason: "auth", retryable: false, status: 401 })
      expect(second.error?.message).toContain("invalid x-api-key [redacted]; workspace token [redacted] revoked")

      // and it replays offline, with no emulator, to the same failure
      const replay = Replay.make(recording)
      const replayed = yield* Effect.exit(
        Replay.orDivergence(
          agent.run("Where is order A-771?").pipe(
            Effect.provide(makeTestCtx({ llm: replay.llm, runId: "recorded", toolMiddleware: [replay.toolMiddleware] }))
          )
        )
      )
      expect(Fixture.failureOf(replayed)).toMatchObject({ _tag: "ChatModelError", reason: "auth", status: 401 })
      replay.assertConsumed()
    }))
})
