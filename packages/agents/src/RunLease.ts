/**
 * How runs under a checkpoint store hold their lease: its time to live, how often the owner
 * renews it, the owner's name, and how many takeovers a run may have before it is failed.
 * Optional: read with `Effect.serviceOption`, so it never appears in `agent.run`'s requirements.
 *
 * @since 0.1.0
 */
import { ConfigurationError } from "@agentkit/core"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

/**
 * The lease settings.
 *
 * @example
 * ```ts
 * import { RunLease } from "@agentkit/agents"
 *
 * const settings: RunLease.Settings = { ...RunLease.defaults, owner: "worker-a" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Settings {
  /** How long a lease lives without a heartbeat (default 30 seconds). */
  readonly ttl: Duration.Duration
  /** How often the owner renews it (default every 10 seconds). */
  readonly heartbeat: Duration.Duration
  /** Who holds it (default: this process's random id). */
  readonly owner: string
  /** Takeovers a run may have; one more fails it with `recovered more than N times` (default 3). */
  readonly maxRecoveries: number
}

/**
 * This process's owner name: `agentkit-` and a random id, the same for every run it drives.
 *
 * @example
 * ```ts
 * import { RunLease } from "@agentkit/agents"
 *
 * RunLease.processOwner.startsWith("agentkit-") // true
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const processOwner: string = `agentkit-${crypto.randomUUID()}`

/**
 * The defaults: a 30-second lease renewed every 10 seconds, this process as owner, 3 recoveries.
 *
 * @example
 * ```ts
 * import { RunLease } from "@agentkit/agents"
 *
 * RunLease.defaults.maxRecoveries // 3
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults: Settings = {
  ttl: Duration.seconds(30),
  heartbeat: Duration.seconds(10),
  owner: processOwner,
  maxRecoveries: 3
}

/**
 * The options of `RunLease.layer`: any of the settings.
 *
 * @example
 * ```ts
 * import { RunLease } from "@agentkit/agents"
 *
 * const options: RunLease.Options = { ttl: "2 minutes", heartbeat: "30 seconds", maxRecoveries: 5 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly ttl?: Duration.DurationInput | undefined
  readonly heartbeat?: Duration.DurationInput | undefined
  readonly owner?: string | undefined
  readonly maxRecoveries?: number | undefined
}

const duration = (
  field: string,
  input: Duration.DurationInput | undefined,
  fallback: Duration.Duration
): Duration.Duration => {
  if (input === undefined) return fallback
  const decoded = Duration.decodeUnknown(input)
  if (Option.isNone(decoded) || !(Duration.toMillis(decoded.value) > 0) || !Duration.isFinite(decoded.value)) {
    throw new ConfigurationError({
      field,
      message: `${field} must be a positive, finite duration (e.g. "30 seconds"); got ${String(input)}`
    })
  }
  return decoded.value
}

/**
 * Checks options into settings: a bad duration, a heartbeat not shorter than the ttl, an empty
 * owner or a negative recovery count throws `ConfigurationError`.
 *
 * @example
 * ```ts
 * import { RunLease } from "@agentkit/agents"
 *
 * RunLease.settings({ ttl: "1 minute" }).heartbeat // 10 seconds, the default
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const settings = (options: Options = {}): Settings => {
  const ttl = duration("runLease.ttl", options.ttl, defaults.ttl)
  const heartbeat = duration("runLease.heartbeat", options.heartbeat, defaults.heartbeat)
  if (Duration.toMillis(heartbeat) >= Duration.toMillis(ttl)) {
    throw new ConfigurationError({
      field: "runLease.heartbeat",
      message: "runLease.heartbeat must be shorter than runLease.ttl, or the lease lapses between beats"
    })
  }
  const owner = options.owner ?? defaults.owner
  if (typeof owner !== "string" || owner.length === 0) {
    throw new ConfigurationError({ field: "runLease.owner", message: "runLease.owner must be a non-empty string" })
  }
  const maxRecoveries = options.maxRecoveries ?? defaults.maxRecoveries
  if (!Number.isInteger(maxRecoveries) || maxRecoveries < 0) {
    throw new ConfigurationError({
      field: "runLease.maxRecoveries",
      message: `runLease.maxRecoveries must be a non-negative integer; got ${String(options.maxRecoveries)}`
    })
  }
  return { ttl, heartbeat, owner, maxRecoveries }
}

/**
 * The lease settings service. Without it, runs use `defaults`.
 *
 * @example
 * ```ts
 * import { RunLease } from "@agentkit/agents"
 * import { Effect } from "effect"
 *
 * const program = agent.run(task).pipe(Effect.provide(RunLease.layer({ owner: "worker-a", maxRecoveries: 5 })))
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class RunLease extends Context.Tag("@agentkit/agents/RunLease")<RunLease, Settings>() {
  /** A layer of checked settings (bad options throw `ConfigurationError` when it is made). */
  static layer(options: Options = {}): Layer.Layer<RunLease> {
    return Layer.succeed(RunLease, settings(options))
  }
  /** The defaults. */
  static readonly defaults = defaults
  /** Checks options into settings. */
  static readonly settings = settings
  /** This process's owner name. */
  static readonly processOwner = processOwner
}

/**
 * The lease settings' types, reachable through the `RunLease` class.
 *
 * @example
 * ```ts
 * import { RunLease } from "@agentkit/agents"
 *
 * const options: RunLease.Options = { ttl: "1 minute" }
 * const settings: RunLease.Settings = RunLease.settings(options)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace RunLease {
  /** @since 0.1.0 */
  export type Settings = import("./RunLease.js").Settings
  /** @since 0.1.0 */
  export type Options = import("./RunLease.js").Options
}
