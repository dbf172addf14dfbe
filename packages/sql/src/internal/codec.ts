/**
 * Reading rows back. Integer columns arrive as numbers (SQLite, libsql's default), bigints
 * (libsql with `intMode: "bigint"`) or strings (Postgres BIGINT, SUM and COUNT): each is read as a
 * safe integer or the row is corrupt. Text is stored as written (canonical JSON as TEXT, never
 * JSONB, which would reorder keys). @internal
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

const describe = (value: unknown): string =>
  typeof value === "string"
    ? JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value)
    : `${typeof value} ${String(value)}`

/** An integer column, whatever the driver returns for it. */
export const IntColumn: Schema.Schema<number, unknown> = Schema.transformOrFail(Schema.Unknown, Schema.Number, {
  strict: true,
  decode: (value, _, ast) => {
    const n = typeof value === "number"
      ? value
      : typeof value === "bigint"
      ? Number(value)
      : typeof value === "string" && /^-?\d{1,16}$/.test(value)
      ? Number(value)
      : Number.NaN
    return Number.isSafeInteger(n)
      ? ParseResult.succeed(n)
      : ParseResult.fail(new ParseResult.Type(ast, value, `expected an integer; got ${describe(value)}`))
  },
  encode: ParseResult.succeed
})

/** A nullable integer column. */
export const NullableInt = Schema.NullOr(IntColumn)

/** A nullable text column. */
export const NullableText = Schema.NullOr(Schema.String)

/** Decodes `input` with `schema`, giving the readable failure text on the left. */
export const decodeWith = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(schema)
  return (input: unknown): Either.Either<A, string> =>
    Either.mapLeft(decode(input), (error) => ParseResult.TreeFormatter.formatErrorSync(error))
}

/** A page cursor: the sort key of the last row of the page, opaque to the caller. */
export const encodeCursor = (key: ReadonlyArray<string | number>): string =>
  Buffer.from(JSON.stringify(key)).toString("base64url")

/** A cursor this store made, or undefined. */
export const decodeCursor = <A>(cursor: string, read: (parsed: unknown) => A | undefined): A | undefined => {
  if (typeof cursor !== "string" || cursor.length > 4096) return undefined
  try {
    return read(JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")))
  } catch {
    return undefined
  }
}
