/**
 * `pnpm demo`: runs the seed program and prints its three lines. Offline (a scripted model)
 * unless ANTHROPIC_API_KEY is set.
 */
import { Effect } from "effect"
import { chooseModel } from "./model.js"
import { program, runtime } from "./program.js"

const main = Effect.gen(function*() {
  const model = yield* chooseModel
  const lines = yield* program.pipe(Effect.provide(runtime(model)))
  for (const line of lines) console.log(line)
})

Effect.runPromise(main).catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
