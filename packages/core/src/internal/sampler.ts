/** Whole-run sampling by correlation id. @internal */
import { ConfigurationError } from "../ConfigurationError.js"

const encoder = new TextEncoder()

/** FNV-1a (32 bit) over the UTF-8 bytes of a string. */
export const fnv1a32 = (text: string): number => {
  let hash = 0x811c9dc5
  for (const byte of encoder.encode(text)) {
    hash ^= byte
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return hash
}

/** The sampler that keeps every run. */
export const always = { shouldSample: (_correlationId: string): boolean => true }

/** A deterministic ratio sampler; a ratio outside [0, 1] throws `ConfigurationError`. */
export const ratio = (share: number): { readonly shouldSample: (correlationId: string) => boolean } => {
  if (typeof share !== "number" || !(share >= 0 && share <= 1)) {
    throw new ConfigurationError({
      field: "sampler.ratio",
      message: `sampler ratio must be a number from 0 to 1; got ${String(share)}`
    })
  }
  const threshold = Math.floor(share * 2 ** 32)
  if (threshold === 0) return { shouldSample: () => false }
  if (threshold >= 2 ** 32) return always
  return { shouldSample: (correlationId) => fnv1a32(correlationId) < threshold }
}
