import { ConfigurationError, Invoker, ToolDenied } from "@agentkit/core"
import { Egress, EgressDenied, EgressHttpClient, Retry } from "@agentkit/middleware"
import { Tool } from "@agentkit/tools"
import { FetchHttpClient, HttpClient, HttpClientError } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { call, setup } from "./fixtures.js"

/** A loopback HTTP server that records every request path; closed when the scope ends. */
const loopback = Effect.acquireRelease(
  Effect.async<{ readonly port: number; readonly hits: Array<string>; readonly close: () => Promise<void> }>(
    (resume) => {
      const hits: Array<string> = []
      const server = createServer((req, res) => {
        hits.push(req.url ?? "")
        if (req.url === "/redirect") {
          const port = (server.address() as AddressInfo).port
          res.writeHead(302, { location: `http://localhost:${port}/secret` })
          res.end()
          return
        }
        res.end("pong")
      })
      server.listen(0, "127.0.0.1", () =>
        resume(
          Effect.succeed({
            port: (server.address() as AddressInfo).port,
            hits,
            close: () =>
              new Promise<void>((done) => {
                server.closeAllConnections()
                server.close(() => done())
              })
          })
        ))
    }
  ),
  (server) => Effect.promise(() => server.close())
)

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost", "sub.localhost", "[::ffff:7f00:1]"])

/** A fetch tool: it only ever sends a request to a loopback address (never anywhere else). */
const fetchTool = () => {
  const state = { runs: 0 }
  const tool = Tool.make("fetch_url", {
    description: "Fetch a web page by its URL and return the body text of the response.",
    parameters: { url: Schema.String },
    sideEffecting: false,
    idempotent: true,
    urlArg: "url",
    handler: async ({ url }) => {
      state.runs++
      if (!LOOPBACK_HOSTS.has(new URL(url).hostname)) return "not fetched"
      const response = await fetch(url)
      return response.text()
    }
  })
  return {
    tool,
    get runs() {
      return state.runs
    }
  }
}

const deny = (tool: string) => (message: string) => new ToolDenied({ toolName: tool, reason: "egress", message })

const ssrf = (host: string) => `egress to private/loopback/link-local host '${host}' blocked (SSRF)`

describe("Egress middleware", () => {
  it.effect("allow example.com: evil.com is refused before the tool runs; api.example.com passes", () => {
    const fetchUrl = fetchTool()
    const layer = setup({ toolMiddleware: [Egress.egress({ allow: ["example.com"] })] })
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      const error = yield* Effect.flip(invoker.tool(call("fetch_url", { url: "https://evil.com/x" }), fetchUrl.tool))
      expect(error).toStrictEqual(deny("fetch_url")("egress to 'evil.com' not allowed (not in egress allowlist)"))
      expect(fetchUrl.runs).toBe(0)
      expect((yield* invoker.tool(call("fetch_url", { url: "https://api.example.com/v1" }), fetchUrl.tool)).text).toBe(
        "not fetched"
      )
      expect((yield* invoker.tool(call("fetch_url", { url: "https://EXAMPLE.com./" }), fetchUrl.tool)).text).toBe(
        "not fetched"
      )
      expect(fetchUrl.runs).toBe(2)
      for (const url of ["https://badexample.com/", "https://example.com.evil.com/", "https://example.co/"]) {
        const denied = yield* Effect.flip(invoker.tool(call("fetch_url", { url }), fetchUrl.tool))
        expect(denied.message).toBe(`egress to '${new URL(url).hostname}' not allowed (not in egress allowlist)`)
      }
      expect(fetchUrl.runs).toBe(2)
    }).pipe(Effect.provide(layer))
  })

  it.live("every private and loopback literal form is refused before the handler or any socket runs", () =>
    Effect.gen(function*() {
      const server = yield* loopback
      const port = server.port
      const fetchUrl = fetchTool()
      const cases: ReadonlyArray<readonly [string, string]> = [
        [`http://2130706433:${port}/`, "2130706433"],
        [`http://0x7f000001:${port}/`, "0x7f000001"],
        [`http://0177.0.0.1:${port}/`, "0177.0.0.1"],
        [`http://127.1:${port}/`, "127.1"],
        [`http://127.0.0.1:${port}/`, "127.0.0.1"],
        [`http://[::1]:${port}/`, "::1"],
        [`http://[::ffff:127.0.0.1]:${port}/`, "::ffff:127.0.0.1"],
        [`http://localhost:${port}/`, "localhost"],
        [`http://LocalHost.:${port}/`, "localhost."],
        [`http://sub.localhost:${port}/`, "sub.localhost"],
        [`http://user:pw@127.0.0.1:${port}/`, "127.0.0.1"],
        ["http://[fc00::1]/", "fc00::1"],
        ["http://[fd12:3456::1]/", "fd12:3456::1"],
        ["http://[fe80::1]/", "fe80::1"],
        ["http://[::]/", "::"],
        ["http://[::ffff:10.0.0.1]/", "::ffff:10.0.0.1"],
        ["http://[64:ff9b::a9fe:a9fe]/", "64:ff9b::a9fe:a9fe"],
        ["http://169.254.169.254/latest/meta-data/", "169.254.169.254"],
        ["http://10.1.2.3/", "10.1.2.3"],
        ["http://172.16.0.1/", "172.16.0.1"],
        ["http://192.168.1.1/", "192.168.1.1"],
        ["http://100.64.0.1/", "100.64.0.1"],
        ["http://0.0.0.0/", "0.0.0.0"],
        ["http://0/", "0"],
        ["http://224.0.0.1/", "224.0.0.1"],
        ["http://255.255.255.255/", "255.255.255.255"]
      ]
      const layer = setup({ toolMiddleware: [Egress.egress()] })
      yield* Effect.gen(function*() {
        const invoker = yield* Invoker
        for (const [url, host] of cases) {
          const error = yield* Effect.flip(invoker.tool(call("fetch_url", { url }), fetchUrl.tool))
          expect(error).toStrictEqual(deny("fetch_url")(ssrf(host)))
        }
      }).pipe(Effect.provide(layer))
      expect(fetchUrl.runs).toBe(0)
      expect(server.hits).toEqual([])
    }).pipe(Effect.scoped))

  it.live("allowPrivate admits a service you run yourself (the request arrives)", () =>
    Effect.gen(function*() {
      const server = yield* loopback
      const fetchUrl = fetchTool()
      const layer = setup({ toolMiddleware: [Egress.egress({ allowPrivate: ["127.0.0.1"] })] })
      const outcome = yield* Effect.flatMap(Invoker, (i) =>
        i.tool(call("fetch_url", { url: `http://127.0.0.1:${server.port}/ping` }), fetchUrl.tool)).pipe(
          Effect.provide(layer)
        )
      expect(outcome.text).toBe("pong")
      expect(server.hits).toEqual(["/ping"])
    }).pipe(Effect.scoped))

  it.effect("schemes, missing hosts and missing arguments are refused with the spec's texts (fail closed)", () => {
    const fetchUrl = fetchTool()
    const layer = setup({ toolMiddleware: [Egress.egress({ allow: ["example.com"] })] })
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      ["ftp://example.com/x", "egress scheme 'ftp' not allowed (expected ('http', 'https'))"],
      ["file:///etc/passwd", "egress scheme 'file' not allowed (expected ('http', 'https'))"],
      ["javascript:alert(1)", "egress scheme 'javascript' not allowed (expected ('http', 'https'))"],
      ["not a url", "egress URL is not a valid URL (no scheme): 'not a url'"],
      ["//example.com/x", "egress URL is not a valid URL (no scheme): '//example.com/x'"],
      ["", "egress URL is not a valid URL (no scheme): ''"],
      ["http://", "egress URL has no host: 'http://'"],
      ["http:///x", "egress URL has no host: 'http:///x'"],
      ["http://exa mple.com/", "egress URL is not a valid URL: 'http://exa mple.com/'"],
      ["https://[::1/", "egress URL is not a valid URL: 'https://[::1/'"],
      [`https://${"a".repeat(1000)}.com/`, `egress to '${"a".repeat(200)}…' not allowed (not in egress allowlist)`],
      [`ftp://${"a".repeat(1_000_000)}`, "egress scheme 'ftp' not allowed (expected ('http', 'https'))"],
      [
        `https://exa mple${"a".repeat(1_000_000)}`,
        `egress URL is not a valid URL: 'https://exa mple${"a".repeat(185)}…'`
      ]
    ]
    return Effect.gen(function*() {
      const invoker = yield* Invoker
      for (const [url, message] of cases) {
        const error = yield* Effect.flip(invoker.tool(call("fetch_url", { url }), fetchUrl.tool))
        expect(error).toStrictEqual(deny("fetch_url")(message))
      }
      // unlike Python, a missing or non-string URL argument is blocked
      for (const args of [{}, { url: 42 }, { url: null }]) {
        const error = yield* Effect.flip(invoker.tool(call("fetch_url", args), fetchUrl.tool))
        expect(error).toStrictEqual(deny("fetch_url")("egress URL argument 'url' is missing or not a string (blocked)"))
      }
      expect(fetchUrl.runs).toBe(0)
    }).pipe(Effect.provide(layer))
  })

  it.effect("schemes option: one scheme reads as a Python one-tuple", () =>
    Effect.gen(function*() {
      const policy = Egress.policy({ schemes: ["https"] })
      expect((yield* Effect.flip(policy.check("http://example.com/"))).message).toBe(
        "egress scheme 'http' not allowed (expected ('https',))"
      )
      expect((yield* policy.check("https://example.com/")).hostname).toBe("example.com")
    }))

  it.effect("an empty allowlist denies everything; no allowlist is the SSRF guard only", () =>
    Effect.gen(function*() {
      expect((yield* Effect.flip(Egress.policy({ allow: [] }).check("https://example.com/"))).message).toBe(
        "egress to 'example.com' not allowed (not in egress allowlist)"
      )
      expect((yield* Egress.policy().check("https://anything.example.org/")).hostname).toBe("anything.example.org")
    }))

  it.effect("a custom check runs after the built-in ones and before the allowlist", () =>
    Effect.gen(function*() {
      const checked: Array<string> = []
      const policy = Egress.policy({
        allow: ["example.com"],
        check: (url) => {
          checked.push(url.hostname)
          return url.hostname === "internal.example.com" ? Effect.fail("resolves to a private address") : Effect.void
        }
      })
      expect((yield* Effect.flip(policy.check("https://internal.example.com/"))).message).toBe(
        "resolves to a private address"
      )
      expect((yield* Effect.flip(policy.check("https://evil.com/"))).message).toBe(
        "egress to 'evil.com' not allowed (not in egress allowlist)"
      )
      yield* Effect.flip(policy.check("http://127.0.0.1/"))
      expect(checked).toEqual(["internal.example.com", "evil.com"])
    }))

  it.effect("denials are never retried, even for an idempotent tool", () => {
    const fetchUrl = fetchTool()
    const layer = setup({ toolMiddleware: [Egress.egress({ allow: [] }), Retry.retry({ maxAttempts: 5 })] })
    return Effect.gen(function*() {
      yield* Effect.flip((yield* Invoker).tool(call("fetch_url", { url: "https://example.com" }), fetchUrl.tool))
      expect(fetchUrl.runs).toBe(0)
    }).pipe(Effect.provide(layer))
  })

  it("bad allowlist entries throw ConfigurationError", () => {
    expect(() => Egress.policy({ allow: ["exa mple.com"] })).toThrow(ConfigurationError)
    expect(() => Egress.policy({ allowPrivate: ["not a host"] })).toThrow(ConfigurationError)
    expect(Egress.isPolicy(Egress.policy({ allow: ["*.example.com", "[::1]", "10.0.0.1"] }))).toBe(true)
  })

  it.effect("allowPrivate takes CIDR ranges and host names", () =>
    Effect.gen(function*() {
      const policy = Egress.policy({ allowPrivate: ["10.0.0.0/8", "fd00::/8", "metadata.localhost"] })
      yield* policy.check("http://10.20.30.40/")
      yield* policy.check("http://[fd00::5]/")
      yield* policy.check("http://metadata.localhost/")
      expect((yield* Effect.flip(policy.check("http://11.0.0.1.nip.io.localhost/"))).message).toBe(
        ssrf("11.0.0.1.nip.io.localhost")
      )
      expect((yield* Effect.flip(policy.check("http://192.168.0.1/"))).message).toBe(ssrf("192.168.0.1"))
      // public addresses pass the SSRF guard
      yield* policy.check("http://8.8.8.8/")
      yield* policy.check("http://[2606:4700::1111]/")
      yield* policy.check("http://[::ffff:8.8.8.8]/")
    }))
})

describe("Egress: address ranges (node:net BlockList), embedded IPv4 judged by what it embeds", () => {
  it.effect("IPv4-mapped, NAT64 and 6to4 addresses are blocked or allowed as the IPv4 they carry", () =>
    Effect.gen(function*() {
      const policy = Egress.policy()
      const blocked = [
        "http://[::ffff:192.168.1.1]/",
        "http://[::ffff:c0a8:101]/",
        "http://[64:ff9b::7f00:1]/",
        "http://[64:ff9b::10.1.2.3]/",
        "http://[2002:7f00:1::]/",
        "http://[2002:a9fe:a9fe:1::1]/",
        "http://[::]/",
        "http://[fe80::1]/",
        "http://[ff02::1]/",
        "http://[2001:db8::1]/",
        "http://0x7f.1/",
        "http://0177.0.0.1/",
        "http://127.1/",
        "http://4294967295/",
        "http://100.64.0.1/",
        "http://198.18.0.1/"
      ]
      for (const url of blocked) {
        const denial = yield* Effect.flip(policy.check(url))
        expect(denial.message, url).toMatch(/blocked \(SSRF\)$/)
      }
      for (
        const url of [
          "http://[::ffff:8.8.8.8]/",
          "http://[64:ff9b::808:808]/",
          "http://[2002:808:808::1]/",
          "http://1.1.1.1/"
        ]
      ) {
        yield* policy.check(url)
      }
    }))

  it("allowPrivate refuses a malformed range with a ConfigurationError", () => {
    expect(() => Egress.policy({ allowPrivate: ["10.0.0.0/33"] })).toThrow(ConfigurationError)
    expect(() => Egress.policy({ allowPrivate: ["10.0.0.0/x"] })).toThrow(ConfigurationError)
  })
})

describe("EgressHttpClient", () => {
  const clientLayer = (options: Egress.Options) =>
    EgressHttpClient.layer(options).pipe(Layer.provide(FetchHttpClient.layer))

  it.live("every blocked form fails before a socket opens; the loopback server receives 0 requests", () =>
    Effect.gen(function*() {
      const server = yield* loopback
      const port = server.port
      const urls = [
        `http://2130706433:${port}/`,
        `http://0x7f000001:${port}/`,
        `http://0177.0.0.1:${port}/`,
        `http://127.1:${port}/`,
        `http://127.0.0.1:${port}/`,
        `http://[::1]:${port}/`,
        `http://[::ffff:127.0.0.1]:${port}/`,
        `http://localhost:${port}/`
      ]
      yield* Effect.gen(function*() {
        const client = yield* HttpClient.HttpClient
        for (const url of urls) {
          const error = yield* Effect.flip(client.get(url))
          expect(error).toBeInstanceOf(HttpClientError.RequestError)
          expect(error.reason).toBe("InvalidUrl")
          expect((error as HttpClientError.RequestError).cause).toBeInstanceOf(EgressDenied)
          expect((error as HttpClientError.RequestError).description).toMatch(/blocked \(SSRF\)$/)
        }
      }).pipe(Effect.provide(clientLayer({})))
      expect(server.hits).toEqual([])
    }).pipe(Effect.scoped))

  it.live("an allowlisted loopback (allowPrivate) passes; query parameters are part of the checked URL", () =>
    Effect.gen(function*() {
      const server = yield* loopback
      yield* Effect.gen(function*() {
        const client = yield* HttpClient.HttpClient
        const response = yield* client.get(`http://127.0.0.1:${server.port}/ping`, { urlParams: { q: "1" } })
        expect(yield* response.text).toBe("pong")
      }).pipe(Effect.provide(clientLayer({ allow: ["127.0.0.1"], allowPrivate: ["127.0.0.1"] })))
      expect(server.hits).toEqual(["/ping?q=1"])
    }).pipe(Effect.scoped))

  it.live("redirects are never followed by the transport; followRedirects checks every hop", () =>
    Effect.gen(function*() {
      const server = yield* loopback
      yield* Effect.gen(function*() {
        const client = yield* HttpClient.HttpClient
        const response = yield* client.get(`http://127.0.0.1:${server.port}/redirect`)
        expect(response.status).toBe(302)
        // the hop to http://localhost:<port>/secret is refused before it is sent
        const error = yield* Effect.flip(
          HttpClient.followRedirects(client).get(`http://127.0.0.1:${server.port}/redirect`)
        )
        expect((error as HttpClientError.RequestError).description).toBe(ssrf("localhost"))
      }).pipe(Effect.provide(clientLayer({ allowPrivate: ["127.0.0.1"] })))
      expect(server.hits).toEqual(["/redirect", "/redirect"])
    }).pipe(Effect.scoped))

  it.live("a tool fetching through it (no urlArg) is refused as a ToolDenied the model can read", () =>
    Effect.gen(function*() {
      const server = yield* loopback
      const page = Tool.make("fetch_page", {
        description: "Fetch a page through the shared HTTP client and return its body text.",
        parameters: { address: Schema.String },
        sideEffecting: false,
        idempotent: true,
        handler: ({ address }) =>
          Effect.flatMap(
            HttpClient.HttpClient,
            (client) => Effect.flatMap(client.get(address), (response) => response.text)
          )
      })
      const layer = Layer.mergeAll(
        setup({ toolMiddleware: [Egress.egress(), Retry.retry()] }),
        clientLayer({ allowPrivate: ["127.0.0.1"] })
      )
      yield* Effect.gen(function*() {
        const invoker = yield* Invoker
        const error = yield* Effect.flip(
          invoker.tool(call("fetch_page", { address: `http://localhost:${server.port}/` }), page)
        )
        expect(error).toStrictEqual(deny("fetch_page")(ssrf("localhost")))
        const ok = yield* invoker.tool(call("fetch_page", { address: `http://127.0.0.1:${server.port}/ok` }), page)
        expect(ok.text).toBe("pong")
      }).pipe(Effect.provide(layer))
      expect(server.hits).toEqual(["/ok"])
    }).pipe(Effect.scoped))
})
