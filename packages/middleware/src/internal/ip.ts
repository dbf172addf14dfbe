/**
 * IP address literals and the non-public ranges, on Node's `net.isIP` and `net.BlockList`. The
 * IPv6 forms that embed an IPv4 address (IPv4-mapped, NAT64, 6to4) are judged by the embedded
 * address. @internal
 */
import { BlockList, isIP } from "node:net"

/** The address family of an IP literal (without brackets), or `undefined` for a host name. */
export const familyOf = (text: string): "ipv4" | "ipv6" | undefined => {
  const version = isIP(text)
  return version === 4 ? "ipv4" : version === 6 ? "ipv6" : undefined
}

/** The eight 16-bit groups of a valid IPv6 literal (a dotted IPv4 tail included). */
const groupsOf = (address: string): Array<number> => {
  let text = address
  const tail: Array<number> = []
  if (text.includes(".")) {
    const colon = text.lastIndexOf(":")
    const [a, b, c, d] = text.slice(colon + 1).split(".").map(Number) as [number, number, number, number]
    tail.push((a << 8) | b, (c << 8) | d)
    text = text.slice(0, colon + 1)
    if (text.endsWith(":") && !text.endsWith("::")) text = text.slice(0, -1)
  }
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((group) => parseInt(group, 16)))
  const [head = "", rest] = text.split("::")
  const left = parse(head)
  const right = rest === undefined ? [] : parse(rest)
  const zeros = 8 - left.length - right.length - tail.length
  return [...left, ...new Array<number>(Math.max(0, zeros)).fill(0), ...right, ...tail]
}

const dotted = (high: number, low: number): string => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`

/** The IPv4 address an IPv6 address embeds (::ffff:0:0/96, 64:ff9b::/96, 2002::/16), if any. */
const embeddedIPv4 = (address: string): string | undefined => {
  const g = groupsOf(address)
  const zeroTo = (n: number) => g.slice(0, n).every((x) => x === 0)
  if (zeroTo(5) && g[5] === 0xffff) return dotted(g[6]!, g[7]!)
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return dotted(g[6]!, g[7]!)
  if (g[0] === 0x2002) return dotted(g[1]!, g[2]!)
  return undefined
}

/** A set of CIDR ranges and single addresses. */
export interface Ranges {
  /** Adds `a.b.c.d/n`, `x::/n` or a single address; false when the text is not one. */
  readonly add: (text: string) => boolean
  /** Whether an address lies in one of the ranges. */
  readonly has: (address: string) => boolean
}

/** An empty set of ranges. */
export const ranges = (): Ranges => {
  const list = new BlockList()
  return {
    add: (text) => {
      const slash = text.indexOf("/")
      const base = slash === -1 ? text : text.slice(0, slash)
      const family = familyOf(base)
      if (family === undefined) return false
      const width = family === "ipv4" ? 32 : 128
      const prefix = slash === -1 ? width : Number(text.slice(slash + 1))
      if (slash !== -1 && !/^\d{1,3}$/.test(text.slice(slash + 1))) return false
      if (!Number.isInteger(prefix) || prefix < 0 || prefix > width) return false
      list.addSubnet(base, prefix, family)
      return true
    },
    has: (address) => {
      const family = familyOf(address)
      return family !== undefined && list.check(address, family)
    }
  }
}

const rangesOf = (list: ReadonlyArray<string>): Ranges => {
  const set = ranges()
  for (const text of list) set.add(text)
  return set
}

// Everything that is not a global unicast destination: "this network", private, shared (CGNAT),
// loopback, link-local, protocol assignments, documentation, benchmarking, multicast, reserved,
// broadcast.
const blockedV4 = rangesOf([
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

// ::/8 covers the unspecified address, loopback and the deprecated IPv4-compatible form.
const blockedV6 = rangesOf([
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

/** Whether an IP literal is private, loopback, link-local, reserved, multicast or unspecified (a host name is not). */
export const isNonPublic = (address: string): boolean => {
  const family = familyOf(address)
  if (family === "ipv4") return blockedV4.has(address)
  if (family === undefined) return false
  const embedded = embeddedIPv4(address)
  return embedded !== undefined ? blockedV4.has(embedded) : blockedV6.has(address)
}
