/** IP address literals: parsing and the non-public ranges. @internal */

/** A parsed address: IPv4 as a 32-bit number, IPv6 as a 128-bit bigint. */
export type Address = { readonly version: 4; readonly value: number } | { readonly version: 6; readonly value: bigint }

/** Parses dotted-decimal IPv4 (the form the WHATWG URL parser normalizes every legacy form to). */
export const parseIPv4 = (text: string): number | undefined => {
  const parts = text.split(".")
  if (parts.length !== 4) return undefined
  let value = 0
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return undefined
    const n = Number(part)
    if (n > 255) return undefined
    value = value * 256 + n
  }
  return value
}

/** Parses an IPv6 literal (without brackets), a dotted IPv4 tail included. */
export const parseIPv6 = (text: string): bigint | undefined => {
  if (!/^[0-9a-fA-F:.]+$/.test(text)) return undefined
  let head = text
  let tail: Array<number> = []
  const lastColon = text.lastIndexOf(":")
  if (text.includes(".")) {
    const v4 = parseIPv4(text.slice(lastColon + 1))
    if (v4 === undefined) return undefined
    tail = [Math.floor(v4 / 65536), v4 % 65536]
    head = text.slice(0, lastColon + 1)
    if (head.endsWith(":") && !head.endsWith("::")) head = head.slice(0, -1)
  }
  const halves = head.split("::")
  if (halves.length > 2) return undefined
  const groups = (s: string): Array<number> | undefined => {
    if (s === "") return []
    const out: Array<number> = []
    for (const g of s.split(":")) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined
      out.push(parseInt(g, 16))
    }
    return out
  }
  const left = groups(halves[0]!)
  const right = halves.length === 2 ? groups(halves[1]!) : []
  if (left === undefined || right === undefined) return undefined
  const known = left.length + right.length + tail.length
  let all: Array<number>
  if (halves.length === 2) {
    if (known > 7) return undefined
    all = [...left, ...new Array<number>(8 - known).fill(0), ...right, ...tail]
  } else {
    if (known !== 8) return undefined
    all = [...left, ...tail]
  }
  let value = 0n
  for (const g of all) value = (value << 16n) | BigInt(g)
  return value
}

/** Parses an address literal: IPv4 dotted, or IPv6 with or without brackets. */
export const parseAddress = (text: string): Address | undefined => {
  const v4 = parseIPv4(text)
  if (v4 !== undefined) return { version: 4, value: v4 }
  const inner = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text
  if (!inner.includes(":")) return undefined
  const v6 = parseIPv6(inner)
  return v6 === undefined ? undefined : { version: 6, value: v6 }
}

/** A CIDR range. */
export interface Range {
  readonly version: 4 | 6
  readonly base: bigint
  readonly prefix: number
}

const bits = (version: 4 | 6): number => (version === 4 ? 32 : 128)

const valueOf = (address: Address): bigint => (address.version === 4 ? BigInt(address.value) : address.value)

/** Parses `a.b.c.d/n`, `x::/n`, or a single address (a full-length range). */
export const parseRange = (text: string): Range | undefined => {
  const slash = text.indexOf("/")
  const address = parseAddress(slash === -1 ? text : text.slice(0, slash))
  if (address === undefined) return undefined
  const width = bits(address.version)
  const prefix = slash === -1 ? width : Number(text.slice(slash + 1))
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > width) return undefined
  const shift = BigInt(width - prefix)
  return { version: address.version, base: (valueOf(address) >> shift) << shift, prefix }
}

/** Whether an address lies in a range. */
export const inRange = (address: Address, range: Range): boolean => {
  if (address.version !== range.version) return false
  const shift = BigInt(bits(range.version) - range.prefix)
  return valueOf(address) >> shift === range.base >> shift
}

const ranges = (list: ReadonlyArray<string>): ReadonlyArray<Range> => list.map((text) => parseRange(text)!)

// Everything that is not a global unicast destination: "this network", private, shared (CGNAT),
// loopback, link-local, protocol assignments, documentation, benchmarking, multicast, reserved,
// broadcast.
const blockedV4 = ranges([
  "0.0.0.0/8",
  "10.0.0.0/8",
  "100.64.0.0/10",
  "127.0.0.0/8",
  "169.254.0.0/16",
  "172.16.0.0/12",
  "192.0.0.0/24",
  "192.0.2.0/24",
  "192.88.99.0/24",
  "192.168.0.0/16",
  "198.18.0.0/15",
  "198.51.100.0/24",
  "203.0.113.0/24",
  "224.0.0.0/4",
  "240.0.0.0/4"
])

// IPv6 forms that embed an IPv4 address: judged by the embedded address.
const mappedV4 = parseRange("::ffff:0:0/96")!
const nat64 = parseRange("64:ff9b::/96")!
const sixToFour = parseRange("2002::/16")!

// ::/8 covers the unspecified address, loopback and the deprecated IPv4-compatible form.
const blockedV6 = ranges([
  "::/8",
  "64:ff9b:1::/48",
  "100::/64",
  "2001::/23",
  "2001:db8::/32",
  "3fff::/20",
  "fc00::/7",
  "fe80::/10",
  "fec0::/10",
  "ff00::/8"
])

/** Whether an address is private, loopback, link-local, reserved, multicast or unspecified. */
export const isNonPublic = (address: Address): boolean => {
  if (address.version === 4) return blockedV4.some((range) => inRange(address, range))
  const v = address.value
  if (inRange(address, mappedV4) || inRange(address, nat64)) {
    return isNonPublic({ version: 4, value: Number(v & 0xffffffffn) })
  }
  if (inRange(address, sixToFour)) return isNonPublic({ version: 4, value: Number((v >> 80n) & 0xffffffffn) })
  return blockedV6.some((range) => inRange(address, range))
}
