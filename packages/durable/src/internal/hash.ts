/** A short stable digest (16 hex of sha256), for names derived from the run's state. @internal */
import { createHash } from "node:crypto"

export const digest = (text: string): string => createHash("sha256").update(text).digest("hex").slice(0, 16)
