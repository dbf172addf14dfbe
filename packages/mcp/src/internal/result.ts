/**
 * What the model sees of an MCP tool result. Text blocks are kept (each capped); everything else
 * (images, audio, resource links, embedded resources) is wrapped in a short marker that names its
 * kind, MIME type, URI and size and never carries binary data, and an embedded text resource is
 * capped and wrapped. `structuredContent` is checked against the tool's output schema when there
 * is one, and shown as JSON when the server sent no text.
 *
 * @internal
 */
import { Tool } from "@agentkit/tools"

/** The largest text kept of one content block, in UTF-8 bytes. */
export const BLOCK_MAX_BYTES = 16384

const cap = (text: string, maxBytes: number): string => Tool.renderResult(text, { maxBytes })

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const str = (u: unknown): string => (typeof u === "string" ? u : "")

const sizeOfBase64 = (data: unknown): number => (typeof data === "string" ? Math.floor((data.length * 3) / 4) : 0)

/** One content block as text; unknown block kinds are named, never passed through. */
export const block = (content: unknown, maxBytes: number = BLOCK_MAX_BYTES): string => {
  if (!isObject(content)) return "[malformed content block]"
  switch (content.type) {
    case "text":
      return typeof content.text === "string" ? cap(content.text, maxBytes) : "[malformed text block]"
    case "image":
    case "audio":
      return `[${content.type} ${cap(str(content.mimeType), 100) || "of unknown type"}, ${
        sizeOfBase64(content.data)
      } bytes, not shown]`
    case "resource_link":
      return `[resource link ${cap(str(content.uri), 512)}${
        content.name === undefined ? "" : ` (${cap(str(content.name), 200)})`
      }${content.mimeType === undefined ? "" : `, ${cap(str(content.mimeType), 100)}`}]`
    case "resource": {
      const resource = isObject(content.resource) ? content.resource : {}
      const uri = cap(str(resource.uri), 512)
      const mime = resource.mimeType === undefined ? "" : ` ${cap(str(resource.mimeType), 100)}`
      if (typeof resource.text === "string") {
        return `[resource ${uri}${mime}]\n${cap(resource.text, maxBytes)}\n[end of resource ${uri}]`
      }
      return `[resource ${uri}${mime}, ${sizeOfBase64(resource.blob)} bytes of binary data, not shown]`
    }
    default:
      return `[unsupported content block of type ${JSON.stringify(cap(String(content.type), 40))}]`
  }
}

/** The text of a result's content list (blocks joined by blank lines); `undefined` when empty. */
export const text = (content: unknown): string | undefined => {
  if (!Array.isArray(content) || content.length === 0) return undefined
  return content.map((item) => block(item)).join("\n\n")
}
