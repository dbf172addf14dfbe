/**
 * `pnpm demo`: runs the seed program and prints its three lines. Offline (a scripted model)
 * unless `AGENTKIT_MODEL=provider:model` names a model (`src/model.ts`).
 */
import { Effect } from "effect"
import { chooseModel } from "./model.js"
import { programOn, runtime } from "./program.js"

const main = Effect.gen(function*() {
  const chosen = yield* chooseModel
  const lines = yield* programOn(chosen.model).pipe(Effect.provide(runtime(chosen.layer)))
  for (const line of lines) console.log(line)
})

Effect.runPromise(main).catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
