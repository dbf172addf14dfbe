/**
 * Authentication, CSRF and the security headers of the console. @internal
 *
 * - A request authenticates with `Authorization: Bearer <token>` (the CLI) or the session cookie
 *   (the browser; HttpOnly, `SameSite=Strict`, scoped to the console's path). Either way the
 *   token goes to the `Authenticator` on every request, so revoking a token ends its sessions.
 * - CSRF: every write authenticated by the cookie must carry `x-agentkit-csrf`, a token derived
 *   from the session's token (SHA-256 under a fixed label), which only a same-origin script can
 *   read (from `GET /api/session`); a custom header also forces a CORS preflight, which the
 *   console never grants. An `Origin` naming another host, or `Sec-Fetch-Site: cross-site`, is
 *   refused on every write. Bearer requests need no CSRF token: a browser never adds that header
 *   by itself.
 * - Without an authenticator only loopback peers are served, and only under a loopback `Host`
 *   (no DNS rebinding); writes still need the CSRF header (a per-process secret).
 */
import type * as Cookies from "@effect/platform/Cookies"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import { Forbidden, Unauthorized } from "../Errors.js"
import * as OperatorAuth from "../OperatorAuth.js"

/** The session cookie's name. */
export const cookieName = "agentkit_console"
/** The CSRF header's name. */
export const csrfHeader = "x-agentkit-csrf"

const processSecret = randomBytes(32).toString("hex")

/** The CSRF token of a session credential. */
export const csrfOf = (secret: string): string =>
  createHash("sha256").update(`agentkit-console-csrf\0${secret}`).digest("hex")

const equal = (a: string, b: string): boolean => {
  const x = createHash("sha256").update(a).digest()
  const y = createHash("sha256").update(b).digest()
  return timingSafeEqual(x, y)
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "::1", "[::1]"])

/** Whether a bind host or a `Host` header's name is loopback. */
export const isLoopbackHost = (host: string): boolean =>
  LOOPBACK_HOSTS.has(host.toLowerCase()) || /^127\.\d+\.\d+\.\d+$/.test(host)

const isLoopbackAddress = (address: string | undefined): boolean =>
  address !== undefined && (address === "::1" || /^(::ffff:)?127\.\d+\.\d+\.\d+$/.test(address))

const hostnameOf = (host: string): string => {
  if (host.startsWith("[")) return host.slice(0, host.indexOf("]") + 1)
  const colon = host.lastIndexOf(":")
  return colon === -1 ? host : host.slice(0, colon)
}

const isSafe = (method: string) => method === "GET" || method === "HEAD" || method === "OPTIONS"

/** Refuses a write that a browser sent from another site. */
const checkSameOrigin = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<void, Forbidden> => {
  if (isSafe(request.method)) return Effect.void
  const site = request.headers["sec-fetch-site"]
  if (site !== undefined && site !== "same-origin" && site !== "none") {
    return Effect.fail(new Forbidden({ message: `a write from another site is refused (Sec-Fetch-Site: ${site})` }))
  }
  const origin = request.headers["origin"]
  if (origin !== undefined) {
    let host: string | undefined
    try {
      host = new URL(origin).host
    } catch {
      host = undefined
    }
    if (host === undefined || host !== request.headers["host"]) {
      return Effect.fail(
        new Forbidden({ message: `a write from origin ${origin} is refused: only this console's own pages may write` })
      )
    }
  }
  return Effect.void
}

const bearerOf = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const header = request.headers["authorization"]
  if (header === undefined) return undefined
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
  return match?.[1]
}

/** Who is asking: the principal and the CSRF token of the session. */
export interface Authenticated {
  readonly principal: OperatorAuth.Principal
  readonly csrf: string
}

/** Authenticates a request (and, for a write, checks CSRF and the origin). */
export const authenticate = (
  request: HttpServerRequest.HttpServerRequest,
  authenticator: Option.Option<OperatorAuth.Service>
): Effect.Effect<Authenticated, Unauthorized | Forbidden> =>
  Effect.gen(function*() {
    yield* checkSameOrigin(request)
    const unsafe = !isSafe(request.method)
    if (Option.isNone(authenticator)) {
      const remote = Option.getOrUndefined(request.remoteAddress)
      const host = request.headers["host"]
      if (!isLoopbackAddress(remote) || host === undefined || !isLoopbackHost(hostnameOf(host))) {
        return yield* new Forbidden({
          message: "this console has no authenticator: it serves loopback peers (and a loopback Host) only"
        })
      }
      const csrf = csrfOf(processSecret)
      if (unsafe && !equal(request.headers[csrfHeader] ?? "", csrf)) {
        return yield* new Forbidden({ message: `a write must carry the ${csrfHeader} header from GET /api/session` })
      }
      return { principal: OperatorAuth.local, csrf }
    }
    const bearer = bearerOf(request)
    const cookie = bearer === undefined ? request.cookies[cookieName] : undefined
    const token = bearer ?? cookie
    if (token === undefined || token === "") {
      return yield* new Unauthorized({
        message: "sign in: send an operator token (Authorization: Bearer) or use the sign-in form"
      })
    }
    const principal = yield* authenticator.value
      .authenticate(Redacted.make(token))
      .pipe(Effect.mapError((error) => new Unauthorized({ message: error.message })))
    const csrf = csrfOf(token)
    if (unsafe && cookie !== undefined && !equal(request.headers[csrfHeader] ?? "", csrf)) {
      return yield* new Forbidden({ message: `a write must carry the ${csrfHeader} header from GET /api/session` })
    }
    return { principal, csrf }
  })

/** Checks a sign-in request's origin (login CSRF). */
export const checkLogin = checkSameOrigin

/** Whether the request reached us over TLS (directly or through a proxy that says so). */
export const isHttps = (request: HttpServerRequest.HttpServerRequest): boolean =>
  request.headers["x-forwarded-proto"] === "https" || request.url.startsWith("https:")

/** The session cookie's options. */
export const cookieOptions = (path: string, secure: boolean): Cookies.Cookie["options"] => ({
  httpOnly: true,
  sameSite: "strict",
  secure,
  path: path === "" ? "/" : path
})

/** The Content-Security-Policy of every console response: no inline script or style, no framing. */
export const contentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'"
].join("; ")

/** The security headers of every console response. */
export const securityHeaders: Readonly<Record<string, string>> = {
  "content-security-policy": contentSecurityPolicy,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "permissions-policy": "camera=(), microphone=(), geolocation=(), payment=()"
}

/** Adds the security headers (and `Cache-Control`) to a response. */
export const secure = (
  response: HttpServerResponse.HttpServerResponse,
  cache = "no-store"
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.setHeaders(response, { ...securityHeaders, "cache-control": cache })
