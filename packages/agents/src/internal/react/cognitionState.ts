/**
 * The ReAct cognition's own slot of the run state (`RunState.cognitionState`): an object of named
 * parts, each versioned by its owner, so a part added later (or by another feature) never
 * disturbs the others, and keys this release does not know are kept as they are.
 *
 * - `termination`: the termination condition's counters (`Termination.State`);
 * - `output`: `{ version: 1, repairs }`, how many times an answer that did not decode was repaired.
 *
 * A slot that does not decode is `RunStateCorrupt` (the lifecycle then leaves the record as it
 * is). @internal
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { RunStateCorrupt } from "../../Errors.js"
import * as Termination from "../../Termination.js"
import { lazy } from "../lazy.js"
import type { Run } from "./state.js"

const OutputPart = Schema.Struct({ version: Schema.Literal(1), repairs: Schema.NonNegativeInt })

const Parts = Schema.Struct({
  termination: Schema.optional(Termination.State),
  output: Schema.optional(OutputPart)
})

type Parts = Schema.Schema.Type<typeof Parts>

const decodeParts = lazy(() => Schema.decodeUnknownEither(Parts, { onExcessProperty: "preserve" }))

/** Checks a saved slot before the run goes on from it. */
export const check = (runId: string, slot: unknown): Either.Either<void, RunStateCorrupt> => {
  if (slot === undefined) return Either.void
  if (typeof slot !== "object" || slot === null || Array.isArray(slot)) {
    return Either.left(
      new RunStateCorrupt({
        runId,
        detail: "its cognitionState is not an object; expected the ReAct cognition's parts"
      })
    )
  }
  return Either.mapBoth(decodeParts(slot), {
    onLeft: (error) =>
      new RunStateCorrupt({
        runId,
        detail: `its cognitionState does not decode: ${ParseResult.TreeFormatter.formatErrorSync(error)}`
      }),
    onRight: () => undefined
  })
}

/** The run's parts (its slot was checked when the run started from it). */
const partsOf = (run: Run): Parts => (run.cognitionState ?? {}) as Parts

/** Replaces one part, keeping the others (known or not). */
const setPart = <K extends keyof Parts>(run: Run, key: K, value: Parts[K]): void => {
  run.cognitionState = { ...(run.cognitionState as object | undefined), [key]: value }
}

/** Evaluates the termination condition on a model turn, keeping its counters in the run. */
export const terminate = (
  condition: Termination.Termination,
  run: Run,
  turn: Termination.Turn
): Termination.Reason | undefined => {
  const { state, stop } = Termination.evaluate(
    condition,
    partsOf(run).termination ?? Termination.initial(condition),
    turn
  )
  setPart(run, "termination", state)
  return stop
}

/** How many times the run repaired an answer that did not decode. */
export const repairsOf = (run: Run): number => partsOf(run).output?.repairs ?? 0

/** Counts one more repair. */
export const countRepair = (run: Run): void => setPart(run, "output", { version: 1, repairs: repairsOf(run) + 1 })
