/**
 * How a server's tool is named for the model: `mcp__<server>__<tool>`, characters outside
 * `[A-Za-z0-9_-]` replaced by `_` (MCP allows `.`; providers do not), cut past 64 characters with
 * an 8-hex hash of `<server>/<tool>` so that two long names stay apart. The sanitised name is only
 * a label: the toolset keeps the server's own name for every call, and two tools that map to one
 * label are refused at connect (`McpNameCollision`).
 *
 * @since 0.1.0
 */
import { CanonicalJson, ConfigurationError } from "@agentkit/core"

const SERVER = /^[A-Za-z0-9-]{1,32}$/

/**
 * Checks a server name: 1 to 32 letters, digits or `-` (no `_`, so `mcp__<server>__` never
 * reads two ways). Throws `ConfigurationError` (field `name`) otherwise.
 *
 * @example
 * ```ts
 * import { McpName } from "@agentkit/mcp"
 *
 * McpName.checkServer("everything") // "everything"
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const checkServer = (server: unknown): string => {
  if (typeof server !== "string" || !SERVER.test(server)) {
    throw new ConfigurationError({
      field: "name",
      message: `MCP server name ${
        JSON.stringify(server)
      } is invalid: it must match ^[A-Za-z0-9-]{1,32}$ (letters, digits and '-')`
    })
  }
  return server
}

/**
 * The agentkit name of a server's tool.
 *
 * @example
 * ```ts
 * import { McpName } from "@agentkit/mcp"
 *
 * McpName.make("everything", "get-sum") // "mcp__everything__get-sum"
 * McpName.make("docs", "search.v2") // "mcp__docs__search_v2"
 * McpName.make("docs", "x".repeat(80)).length // 64
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (server: string, tool: string): string => {
  const name = `mcp__${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, "_")
  if (name.length <= 64) return name
  return `${name.slice(0, 55)}_${CanonicalJson.sha256(`${server}/${tool}`).slice(0, 8)}`
}
