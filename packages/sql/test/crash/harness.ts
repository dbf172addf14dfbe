/**
 * The crash suite's parent. It keeps `workers` worker processes at work (compiled JS started as
 * `node worker.js`, so SIGKILL reaches the process doing the work), each long-lived: it drives
 * the runs the parent hands it, and the parent hands every worker each run that can go on (new,
 * running with an expired lease, or suspended with its wait decided). Each worker is killed with
 * SIGKILL after a random number of reported points, until the kills are done; a started, idle
 * worker waits in reserve, so a killed one is replaced at once (its runs' leases still have to
 * expire before another worker can take them over). Meanwhile the parent plays the operator
 * (through the agents `Operator` service on its own stores): it approves what waits for an
 * approval and decides in-doubt calls from the side-effect log, which knows whether the effect
 * happened. When a generation of runs has finished and kills remain, a
 * new generation starts. At the end it counts (counting.ts) from what survived: the logs and the
 * database.
 */
import { spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { count, parseCalls, parseEffects } from "./counting.js"
import type { Figures, FinalRun, SideEffect } from "./counting.js"
import { encode, lines } from "./protocol.js"
import type { Database, Event, WorkerConfig } from "./protocol.js"

/** A run as the parent sees it in the store. */
export interface Row {
  readonly runId: string
  readonly status: string
  readonly state: string
  readonly result: string | undefined
  readonly leaseExpiresAt: number | undefined
  /** The record's version: a suspension is one version (a run may suspend in doubt again after a retry). */
  readonly version: number
}

/** What the parent does through the operator service of its own process (the operator's seat). */
export interface Operator {
  /** Every run's record: status, state and result (canonical JSON text). */
  readonly records: () => Promise<ReadonlyArray<Row>>
  /**
   * Decides what a suspended run waits on: approvals approved, in-doubt calls resolved from the
   * side-effect log (which knows whether the effect happened). Answers how many in-doubt calls it
   * resolved.
   */
  readonly settle: (record: Row, effects: ReadonlyArray<SideEffect>) => Promise<number>
  /** The runs at the end, as the counting reads them. */
  readonly finalRuns: () => Promise<ReadonlyArray<FinalRun>>
}

export interface Options {
  readonly name: string
  readonly workerScript: string
  readonly database: Database
  readonly dir: string
  /** Runs per generation: when a generation has finished and kills remain, a new one starts. */
  readonly runs: number
  readonly kills: number
  /** Workers at work at once; with more than one, every run is offered to each (they compete for the leases). */
  readonly workers: number
  readonly seed: number
  readonly worker: Pick<WorkerConfig, "leaseTtlMs" | "heartbeatMs" | "concurrency" | "iterations" | "approvalAt">
  readonly operator: Operator
  /** A worker is killed after 1 to this many reported points (default: the points of a generation per worker). */
  readonly killWithin?: number | undefined
  /** How many workers may be started before the suite gives up (default: kills × 4 + 50). */
  readonly maxWorkers?: number | undefined
  readonly log?: ((line: string) => void) | undefined
}

export interface Report {
  readonly figures: Figures
  readonly generations: number
  readonly workersStarted: number
  /** The point each killed worker had reported last (the kill landed in the step after it). */
  readonly killedAfter: Readonly<Record<string, number>>
  /** Runs taken over from a lease that expired, and drives that met another worker's lease. */
  readonly takeovers: number
  readonly contended: number
  /** Runs whose finish more than one worker reported (a run finishes exactly once: 0). */
  readonly finishedTwice: number
  /** How the drives ended, by outcome (and detail, for lost leases). */
  readonly outcomes: Readonly<Record<string, number>>
  /** Outcomes the workers reported as errors, and workers that failed (none expected). */
  readonly errors: ReadonlyArray<string>
}

/** A small seeded generator, so that a failing sequence of kills can be replayed. */
export const random = (seed: number) => {
  let state = seed >>> 0
  return (bound: number) => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * bound)
  }
}

interface Worker {
  readonly id: string
  readonly child: ChildProcess
  readonly ready: Promise<void>
  readonly exited: Promise<void>
  /** Runs sent to it with no outcome yet, and those of them it reported a point for. */
  readonly open: Set<string>
  readonly touched: Set<string>
  points: number
  lastPoint: string
  /** After how many points it is killed (Infinity: never). */
  killAt: number
  killed: boolean
}

export const run = async (options: Options): Promise<Report> => {
  const next = random(options.seed)
  const callsLog = join(options.dir, "calls.log")
  const effectsLog = join(options.dir, "effects.log")
  writeFileSync(callsLog, "")
  writeFileSync(effectsLog, "")
  const runIds: Array<string> = []
  let generations = 0
  const generation = () => {
    const first = runIds.length
    for (let i = 0; i < options.runs; i++) runIds.push(`run-${String(first + i).padStart(5, "0")}`)
    generations++
  }
  generation()
  const interrupted = new Set<string>()
  const errors: Array<string> = []
  let kills = 0
  let started = 0
  let inDoubtResolved = 0
  let takeovers = 0
  let contended = 0
  const killedAfter: Record<string, number> = {}
  const finishes = new Map<string, number>()
  const outcomes: Record<string, number> = {}
  const maxWorkers = options.maxWorkers ?? options.kills * 4 + 50

  const start = (): Worker => {
    const id = `w${started++}`
    const config: WorkerConfig = { workerId: id, database: options.database, callsLog, effectsLog, ...options.worker }
    const child = spawn(process.execPath, [options.workerScript, JSON.stringify(config)], {
      stdio: ["pipe", "pipe", "pipe"]
    })
    let ready: () => void = () => undefined
    const worker: Worker = {
      id,
      child,
      ready: new Promise((resolve) => {
        ready = resolve
      }),
      exited: new Promise((resolve) =>
        child.on("exit", (code) => {
          if (!worker.killed && code !== 0) errors.push(`${id} exited with ${code}: ${stderr.trim()}`)
          ready() // a worker that died before it was ready is not waited for
          resolve()
        })
      ),
      open: new Set(),
      touched: new Set(),
      points: 0,
      lastPoint: "(none)",
      killAt: Infinity,
      killed: false
    }
    child.stdin!.on("error", () => undefined) // a killed worker's stdin is closed: nothing more to tell it
    let stderr = ""
    child.stderr!.on("data", (chunk: Buffer) => {
      if (process.env["CRASH_DEBUG"] !== undefined) process.stderr.write(chunk)
      stderr += chunk.toString()
    })
    child.stdout!.on(
      "data",
      lines((text) => {
        const event = JSON.parse(text) as Event
        if (event.t === "ready") ready()
        else if (event.t === "point") {
          worker.touched.add(event.runId)
          worker.points++
          worker.lastPoint = event.point
          if (event.point === "takeover") takeovers++
          if (!worker.killed && worker.points >= worker.killAt && kills < options.kills) {
            worker.killed = true
            // SIGKILL to the node process itself (started as `node worker.js`, no wrapper)
            if (child.kill("SIGKILL")) {
              kills++
              killedAfter[worker.lastPoint] = (killedAfter[worker.lastPoint] ?? 0) + 1
              for (const runId of worker.touched) interrupted.add(runId)
            }
          }
        } else {
          worker.open.delete(event.runId)
          worker.touched.delete(event.runId)
          if (event.outcome === "error") errors.push(`${id} ${event.runId}: ${event.detail ?? ""}`)
          const kind = event.outcome === "lost-lease" && event.detail !== undefined
            ? `${event.outcome} (${event.detail})`
            : event.outcome
          outcomes[kind] = (outcomes[kind] ?? 0) + 1
          if (event.outcome === "busy" || event.outcome === "lost-lease") contended++
          if (event.outcome === "finished") finishes.set(event.runId, (finishes.get(event.runId) ?? 0) + 1)
        }
      })
    )
    return worker
  }

  const records = () => options.operator.records()
  /** Waits that a person decided (approvals, in-doubt calls): those runs can go on. */
  const decided = new Set<string>()

  /** The operator: approvals for what waits on one, in-doubt calls decided from the effect log. */
  const operate = async (all: ReadonlyArray<Row>) => {
    const effects = parseEffects(readFileSync(effectsLog, "utf8"))
    for (const record of all) {
      if (record.status !== "suspended") continue
      const wait = `${record.runId} ${record.version}`
      if (decided.has(wait)) continue
      inDoubtResolved += await options.operator.settle(record, effects)
      decided.add(wait)
    }
  }

  /** Whether a run can go on now: new, running with no live lease, or suspended with its wait decided. */
  const drivable = (record: Row | undefined, now: number) => {
    if (record === undefined) return true
    if (record.status === "running") return record.leaseExpiresAt === undefined || record.leaseExpiresAt <= now
    if (record.status === "suspended") return decided.has(`${record.runId} ${record.version}`)
    return false
  }

  // a kill lands after 1 to `killWithin` reported points of a worker (uniformly): dense enough that
  // a generation of runs sees several, spread over every kind of point
  const killWithin = options.killWithin ??
    Math.max(1, Math.ceil((options.runs * (options.worker.iterations * 6 + 3)) / options.workers))
  const killPoint = () => (kills < options.kills ? 1 + next(killWithin) : Infinity)

  await records() // the operator's stores are open (and the database migrated) before any worker starts
  const reserve: Array<Worker> = []
  const active = new Set<Worker>()
  const topUp = () => {
    while (reserve.length < options.workers && started < maxWorkers) reserve.push(start())
  }
  topUp()
  for (;;) {
    const all = await records()
    const byId = new Map(all.map((record) => [record.runId, record]))
    let pending = runIds.filter((runId) => byId.get(runId)?.status !== "done")
    if (pending.length === 0 && kills >= options.kills) break
    if (pending.length === 0) {
      generation() // kills remain: new runs to kill
      pending = runIds.filter((runId) => byId.get(runId)?.status !== "done")
    }
    if (started >= maxWorkers && active.size === 0 && reserve.length === 0) {
      throw new Error(
        `${options.name}: not finished after ${maxWorkers} workers (${pending.length} runs left, ${kills} kills): ${
          errors.join("; ")
        }`
      )
    }
    while (active.size < options.workers && reserve.length > 0) {
      const worker = reserve.shift()!
      await worker.ready
      worker.killAt = killPoint()
      active.add(worker)
      void worker.exited.then(() => active.delete(worker))
      topUp()
    }
    await operate(all)
    const now = Date.now()
    for (const worker of active) {
      // each worker takes the runs in its own order, so that competing workers meet mid-way
      const order = pending.filter((runId) => !worker.open.has(runId) && drivable(byId.get(runId), now))
      for (let i = order.length - 1; i > 0; i--) {
        const j = next(i + 1)
        ;[order[i], order[j]] = [order[j]!, order[i]!]
      }
      for (const runId of order) {
        worker.open.add(runId)
        worker.child.stdin!.write(encode({ t: "drive", runId }))
      }
    }
    await Promise.race([
      ...[...active].map((worker) => worker.exited),
      new Promise((resolve) => setTimeout(resolve, 50))
    ])
    options.log?.(
      `${pending.length} unfinished of ${runIds.length}, ${kills}/${options.kills} kills, ${started} workers started`
    )
  }
  for (const worker of [...active, ...reserve]) worker.child.stdin!.end(encode({ t: "exit" }))
  await Promise.all([...active, ...reserve].map((worker) => worker.exited))

  // the figures, from what survived
  const runs = await options.operator.finalRuns()
  const figures = count({
    runs,
    calls: parseCalls(readFileSync(callsLog, "utf8")),
    effects: parseEffects(readFileSync(effectsLog, "utf8")),
    interrupted,
    inDoubtResolved,
    kills,
    approvalAt: options.worker.approvalAt
  })
  return {
    figures,
    generations,
    workersStarted: started,
    killedAfter,
    takeovers,
    contended,
    finishedTwice: [...finishes.values()].filter((n) => n > 1).length,
    outcomes,
    errors
  }
}
