/**
 * The span agentkit makes when the fiber's tracer is Effect's own (its default, `nativeTracer`),
 * which records nowhere: its spans are plain records that the fiber's context holds while they
 * run, read only by whoever asks for them (`Effect.currentSpan`, a child span, a test). This one
 * has the shape and meaning of Effect's `NativeSpan` (name, parent, context, kind, status, links,
 * events, attributes, random hex ids, a child's trace id its parent's), but makes on first read
 * what Effect's makes at once: its ids (Effect's are built one random character at a time) and
 * its map of attributes (kept until then as the records it was given, applied in order). A run's
 * spans are rarely read, so a traced run makes neither.
 *
 * @internal
 */
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import type * as Exit from "effect/Exit"
import * as HashMap from "effect/HashMap"
import type * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import { randomHex } from "./randomId.js"

/**
 * Attribute records, applied in order when the map is made (read then: agentkit never changes a
 * record it gave a span): their own keys (`skipUndefined`: not those set to `undefined`).
 */
interface Written {
  readonly record: Readonly<Record<string, unknown>>
  readonly skipUndefined: boolean
}

const setAll = (map: Map<string, unknown>, record: Readonly<Record<string, unknown>>, skipUndefined: boolean): void => {
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue
    const value = record[key]
    if (value !== undefined || !skipUndefined) map.set(key, value)
  }
}

/** Effect's own tracer, the default one (a fiber's unless another is installed). */
export const nativeTracer: Tracer.Tracer = Context.get(DefaultServices.liveServices, Tracer.Tracer)

/** A span of Effect's own tracer, its ids and attribute map made on first read. */
export class LazySpan implements Tracer.Span {
  readonly _tag = "Span"
  readonly sampled = true
  status: Tracer.SpanStatus
  links: ReadonlyArray<Tracer.SpanLink>
  // plain fields, not `#` ones: a copy of the span (a test's diff, say) can still read it
  private _spanId: string | undefined = undefined
  private _traceId: string | undefined = undefined
  private _attributes: Map<string, unknown> | undefined = undefined
  /**
   * What was written before the map was made, in order: the fiber's annotations, the record the
   * span opened with, what was written while it ran, the record it ended with.
   */
  private _annotations: HashMap.HashMap<string, unknown> | undefined
  private _opened: Readonly<Record<string, unknown>> | undefined
  private _written: Array<Written> | undefined = undefined
  private _ended: Readonly<Record<string, unknown>> | undefined = undefined
  private _events: Array<[name: string, startTime: bigint, attributes: Record<string, unknown>]> | undefined = undefined

  constructor(
    readonly name: string,
    readonly parent: Option.Option<Tracer.AnySpan>,
    readonly context: Context.Context<never>,
    links: ReadonlyArray<Tracer.SpanLink>,
    startTime: bigint,
    readonly kind: Tracer.SpanKind,
    annotations: HashMap.HashMap<string, unknown>,
    /** Its attributes as it opens (all own keys, `undefined` ones too, as Effect sets them). */
    attributes: Readonly<Record<string, unknown>> | undefined
  ) {
    this.links = links
    this.status = { _tag: "Started", startTime }
    this._annotations = HashMap.size(annotations) > 0 ? annotations : undefined
    this._opened = attributes
  }

  get spanId(): string {
    return (this._spanId ??= randomHex(16))
  }

  get traceId(): string {
    return (this._traceId ??= this.parent._tag === "Some" ? this.parent.value.traceId : randomHex(32))
  }

  get attributes(): ReadonlyMap<string, unknown> {
    if (this._attributes !== undefined) return this._attributes
    const map = new Map<string, unknown>()
    if (this._annotations !== undefined) HashMap.forEach(this._annotations, (value, key) => map.set(key, value))
    if (this._opened !== undefined) setAll(map, this._opened, false)
    if (this._written !== undefined) {
      for (const { record, skipUndefined } of this._written) setAll(map, record, skipUndefined)
    }
    if (this._ended !== undefined) setAll(map, this._ended, true)
    this._annotations =
      this._opened =
      this._written =
      this._ended =
        undefined
    return (this._attributes = map)
  }

  /** Sets the own keys of `record` (not those set to `undefined` when `skipUndefined`), in order. */
  write(record: Readonly<Record<string, unknown>>, skipUndefined: boolean): void {
    if (this._attributes !== undefined) setAll(this._attributes, record, skipUndefined)
    else (this._written ??= []).push({ record, skipUndefined })
  }

  /** Sets the own keys of `record` not set to `undefined`, the last write before the span ends. */
  writeEnd(record: Readonly<Record<string, unknown>>): void {
    if (this._attributes !== undefined || this._ended !== undefined) this.write(record, true)
    else this._ended = record
  }

  attribute(key: string, value: unknown): void {
    if (this._attributes !== undefined) this._attributes.set(key, value)
    else this.write({ [key]: value }, false)
  }

  /** The events recorded, as Effect's span lists them. */
  get events(): Array<[name: string, startTime: bigint, attributes: Record<string, unknown>]> {
    return (this._events ??= [])
  }

  event(name: string, startTime: bigint, attributes?: Record<string, unknown>): void {
    this.events.push([name, startTime, attributes ?? {}])
  }

  addLinks(links: ReadonlyArray<Tracer.SpanLink>): void {
    this.links = [...this.links, ...links]
  }

  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>): void {
    this.status = { _tag: "Ended", endTime, exit, startTime: this.status.startTime }
  }
}
