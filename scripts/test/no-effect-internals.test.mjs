// The public-Effect-API lint rule (scripts/eslint/no-effect-internals.mjs): each form it must
// catch, clean code it must pass, and the built packages, in which it must find nothing.
import { RuleTester } from "eslint"
import { existsSync, readdirSync } from "node:fs"
import { fileURLToPath } from "node:url"
import tseslint from "typescript-eslint"
import { describe, expect, it } from "vitest"
import { distLinter } from "../eslint/dist.mjs"
import { noEffectInternals } from "../eslint/no-effect-internals.mjs"

const tester = new RuleTester({
  languageOptions: { parser: tseslint.parser, ecmaVersion: 2022, sourceType: "module" }
})

// RuleTester runs its cases through `describe` and `it` (vitest's here).
RuleTester.describe = describe
RuleTester.it = it
RuleTester.itOnly = it.only

describe("no-effect-internals", () => {
  tester.run("no-effect-internals", noEffectInternals, {
    valid: [
      // the public API, and names that only look alike
      "const fiber = yield* Effect.fiberId; fiber.id(); fiber.getFiberRef(FiberRef.currentContext)",
      "Effect.uninterruptibleMask((restore) => Effect.matchCauseEffect(restore(self), handlers))",
      "const span = fiber.currentSpan",
      "const op = event.op; const queue = job.queue; const children = node.children",
      "record[`${prefix}_name`] = 1; record['_' + key] = 2; record[key] = 3",
      "const x = value as unknown as Effect.Effect<number>",
      "let currentSpan = undefined; currentSpan = span",
      "class A { #queue = []; read() { return this.#queue } }"
    ],
    invalid: [
      ...["effect_instruction_i0", "effect_instruction_i2", "_op", "_queue", "_fiberRefs", "_children"].map((name) => ({
        code: `primitive.${name}`,
        errors: [{ messageId: "member" }]
      })),
      { code: "fiber.patchRuntimeFlags(flags, patch)", errors: [{ messageId: "member" }] },
      { code: "const flags = fiber.currentRuntimeFlags", errors: [{ messageId: "member" }] },
      { code: "fiber?._queue.length", errors: [{ messageId: "member" }] },
      { code: "fiber[\"_fiberRefs\"]", errors: [{ messageId: "member" }] },
      {
        code: "const { _children, currentRuntimeFlags } = fiber",
        errors: [{ messageId: "member" }, { messageId: "member" }]
      },
      { code: "op[\"effect_\" + \"instruction_i1\"] = work", errors: [{ messageId: "computed" }] },
      { code: "op[\"effect_instruction_i\" + n]", errors: [{ messageId: "computed" }] },
      { code: "fiber[`_fiber${'Refs'}`]", errors: [{ messageId: "computed" }] },
      { code: "fiber[`_que${x}`]", errors: [{ messageId: "computed" }] },
      { code: "fiber['patchRuntime' + 'Flags'](a, b)", errors: [{ messageId: "computed" }] },
      { code: "fiber.currentSpan = span", errors: [{ messageId: "currentSpan" }] },
      { code: "fiber[\"currentSpan\"] = span", errors: [{ messageId: "currentSpan" }] },
      {
        code: "const run = (Effect.succeed(1) as any).effect_instruction_i0",
        errors: [{ messageId: "member" }, { messageId: "asAny" }]
      },
      { code: "const anything = program as any", errors: [{ messageId: "asAny" }] },
      { code: "const anything = <any>program", errors: [{ messageId: "asAny" }] }
    ]
  })
})

describe("the built packages", () => {
  const root = fileURLToPath(new URL("../..", import.meta.url))
  const built = readdirSync(new URL("../../packages", import.meta.url)).filter((name) =>
    existsSync(new URL(`../../packages/${name}/dist`, import.meta.url))
  )

  it("use no Effect internals either (packages/*/dist/**/*.js)", async () => {
    // the global setup builds them (bundles.setup.mjs)
    expect(built.length).toBeGreaterThan(0)
    const results = await distLinter(root).lintFiles(["packages/*/dist/**/*.js"])
    expect(results.length).toBeGreaterThan(50)
    const found = results.flatMap((result) =>
      result.messages.map((message) => `${result.filePath}:${message.line}: ${message.message}`)
    )
    expect(found).toEqual([])
  }, 300_000)

  it("would find them there: a built file using a private member fails", async () => {
    const [result] = await distLinter(root).lintText("export const f = (fiber) => fiber._queue.length", {
      filePath: "packages/core/dist/example.js"
    })
    expect(result?.messages.map((message) => message.ruleId)).toEqual(["agentkit/no-effect-internals"])
  })
})
