/**
 * Whether a module is the program node was started with (not imported by a test): pass the
 * module's `import.meta.url`.
 */
import { realpathSync } from "node:fs"
import { pathToFileURL } from "node:url"

export const isEntry = (moduleUrl: string): boolean => {
  const entry = process.argv[1]
  if (entry === undefined) return false
  try {
    return moduleUrl === pathToFileURL(realpathSync(entry)).href
  } catch {
    return false
  }
}
