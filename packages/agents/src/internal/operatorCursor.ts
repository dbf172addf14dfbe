/**
 * The operator's cursors: a list page's (the store page it stopped in, the last record consumed,
 * the order) and the changes mark (the newest write time seen and the run versions written then).
 */
import type { CheckpointStore } from "@agentkit/core"

/** The list cursor: the store page it stopped in, the sort key of the last record consumed, the order. */
export const encodeListCursor = (
  page: string | undefined,
  after: readonly [number, string],
  order: "asc" | "desc"
): string => Buffer.from(JSON.stringify(["list", page ?? null, after[0], after[1], order])).toString("base64url")
export const decodeListCursor = (
  cursor: string,
  order: "asc" | "desc"
): { readonly page: string | undefined; readonly after: readonly [number, string] | undefined } | undefined => {
  if (cursor.length > 8192) return undefined
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    if (
      Array.isArray(parsed) &&
      parsed.length === 5 &&
      parsed[0] === "list" &&
      (parsed[1] === null || typeof parsed[1] === "string") &&
      Number.isSafeInteger(parsed[2]) &&
      typeof parsed[3] === "string" &&
      parsed[4] === order
    ) {
      return { page: parsed[1] === null ? undefined : (parsed[1] as string), after: [parsed[2] as number, parsed[3]] }
    }
  } catch {
    // not a cursor made here
  }
  return undefined
}
/** Whether a record comes after a sort key in the list's order (`updatedAt`, then `runId` in code units). */
export const beyond = (
  record: CheckpointStore.RunRecord,
  after: readonly [number, string],
  order: "asc" | "desc"
): boolean => {
  const sign = record.updatedAt !== after[0]
    ? record.updatedAt - after[0]
    : record.runId < after[1]
    ? -1
    : record.runId > after[1]
    ? 1
    : 0
  return order === "asc" ? sign > 0 : sign < 0
}

/** The changes cursor: the newest write time seen and the run versions written at that time. */
interface ChangeMark {
  readonly at: number
  readonly seen: ReadonlyArray<string>
}
export const encodeMark = (mark: ChangeMark): string =>
  Buffer.from(JSON.stringify(["changes", mark.at, mark.seen])).toString("base64url")
export const decodeMark = (cursor: string): ChangeMark | undefined => {
  if (cursor.length > 65536) return undefined
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    if (
      Array.isArray(parsed) &&
      parsed.length === 3 &&
      parsed[0] === "changes" &&
      Number.isSafeInteger(parsed[1]) &&
      Array.isArray(parsed[2]) &&
      parsed[2].every((s) => typeof s === "string")
    ) {
      return { at: parsed[1] as number, seen: parsed[2] as Array<string> }
    }
  } catch {
    // not a cursor made here
  }
  return undefined
}
export const written = (record: CheckpointStore.RunRecord): string => `${record.runId}@${record.version}`
