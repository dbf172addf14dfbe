/**
 * The import cost of core+tools+agents on top of `effect`, measured in a fresh process each time
 * (`import.mjs`): a module loaded once is cached, so it cannot be measured in this one.
 */
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"

export interface ImportCost {
  /** Importing `effect` alone. */
  readonly effectMs: number
  /** Importing `@agentkit/core`, `@agentkit/tools` and `@agentkit/agents` after it. */
  readonly agentkitMs: number
}

const script = fileURLToPath(new URL("../import.mjs", import.meta.url))

/** One fresh-process measurement. */
export const measureImportCost = (): ImportCost => {
  const output = execFileSync(process.execPath, [script, "--json"], { encoding: "utf8" })
  const parsed: unknown = JSON.parse(output)
  if (
    typeof parsed !== "object" || parsed === null ||
    !("effectMs" in parsed) || typeof parsed.effectMs !== "number" ||
    !("agentkitMs" in parsed) || typeof parsed.agentkitMs !== "number"
  ) {
    throw new Error(`import.mjs printed ${output.trim()}, not {"effectMs": number, "agentkitMs": number}`)
  }
  return { effectMs: parsed.effectMs, agentkitMs: parsed.agentkitMs }
}
