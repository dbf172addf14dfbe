import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { program, runtime, scriptedModel } from "../src/program.js"

describe("support-desk demo", () => {
  it.effect("prints the seed's three lines", () =>
    Effect.gen(function*() {
      const lines = yield* program.pipe(Effect.provide(runtime(scriptedModel())))
      expect(lines).toEqual([
        "Order A-771 shipped on 14 August and arrives Tuesday.",
        "lookup_order {\"type\":\"object\",\"properties\":{\"order_id\":{\"type\":\"string\"}},\"required\":[\"order_id\"]}",
        "rejected: tool 'cancel_order' call rejected: unexpected argument(s) ['order']; missing required argument(s) ['order_id']. Accepted arguments: ['order_id', 'reason']"
      ])
    }))
})

describe("npm run demo (scripts/run.mjs)", () => {
  it("says on stderr what it is doing; stdout is exactly the three seed lines", () => {
    const root = fileURLToPath(new URL("../../../", import.meta.url))
    // provider keys alone take nothing online: only AGENTKIT_MODEL names a model
    const env: NodeJS.ProcessEnv = { ...process.env, ANTHROPIC_API_KEY: "sk-ant-unused", OPENAI_API_KEY: "sk-unused" }
    delete env.AGENTKIT_MODEL
    const result = spawnSync(process.execPath, ["scripts/run.mjs", "demo"], { cwd: root, env, encoding: "utf8" })
    expect(result.status).toBe(0)
    expect(result.stdout.split("\n")).toEqual([
      "Order A-771 shipped on 14 August and arrives Tuesday.",
      "lookup_order {\"type\":\"object\",\"properties\":{\"order_id\":{\"type\":\"string\"}},\"required\":[\"order_id\"]}",
      "rejected: tool 'cancel_order' call rejected: unexpected argument(s) ['order']; missing required argument(s) ['order_id']. Accepted arguments: ['order_id', 'reason']",
      ""
    ])
    expect(result.stderr).toMatch(/^agentkit: bundling the demo/m)
  }, 120_000)
})
