#!/usr/bin/env node
/**
 * The `agentkit-console` executable: the operator CLI over Node (`Cli.run`). An error prints one
 * line to stderr, naming the problem and what to do, and exits 1; `--verbose` (anywhere on the
 * command line) prints its full cause too. The CLI's modules load after the command line is read.
 *
 * @since 0.1.0
 */
const verbose = process.argv.includes("--verbose")
const argv = process.argv.filter((arg) => arg !== "--verbose")

const [{ run }, FetchHttpClient, NodeContext, Cause, Effect, Exit, Layer, ValidationError] = await Promise.all([
  import("./Cli.js"),
  import("@effect/platform/FetchHttpClient"),
  import("@effect/platform-node/NodeContext"),
  import("effect/Cause"),
  import("effect/Effect"),
  import("effect/Exit"),
  import("effect/Layer"),
  import("@effect/cli/ValidationError")
])

const exit = await Effect.runPromiseExit(
  run(argv).pipe(Effect.provide(Layer.merge(NodeContext.layer, FetchHttpClient.layer)))
)
if (Exit.isFailure(exit)) {
  const failure = Cause.failureOption(exit.cause)
  const error = failure._tag === "Some" ? failure.value : undefined
  // @effect/cli has printed its own message for a command line it could not read
  if (error === undefined || !ValidationError.isValidationError(error)) {
    const message = typeof error === "object" && error !== null && "message" in error
      ? String((error as { readonly message: unknown }).message)
      : Cause.squash(exit.cause) instanceof Error
      ? (Cause.squash(exit.cause) as Error).message
      : String(Cause.squash(exit.cause))
    process.stderr.write(`agentkit-console: ${message}\n`)
    if (verbose) process.stderr.write(`${Cause.pretty(exit.cause, { renderErrorCause: true })}\n`)
    else if (error === undefined) process.stderr.write("agentkit-console: run again with --verbose for the details\n")
  }
  process.exitCode = 1
}
