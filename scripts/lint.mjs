#!/usr/bin/env node
// Runs ESLint over the repository (eslint.config.mjs) and fails on any error, on any warning that
// the config's `pending` list does not name, and on a `pending` entry that no longer fires (the
// list only shrinks). Prints ESLint's usual report and a count by rule.
//
// Usage: node scripts/lint.mjs [--fix]
import { ESLint } from "eslint"
import { relative, sep } from "node:path"
import { fileURLToPath } from "node:url"
import { pending } from "../eslint.config.mjs"
import { distLinter } from "./eslint/dist.mjs"

const root = fileURLToPath(new URL("..", import.meta.url))
const started = performance.now()
// The cache (gitignored) re-lints only changed files; it is keyed on content, so a fresh clone
// and a touched-but-unchanged file agree.
const eslint = new ESLint({
  cwd: root,
  fix: process.argv.includes("--fix"),
  cache: true,
  cacheLocation: "build/.eslintcache",
  cacheStrategy: "content"
})
const results = await eslint.lintFiles(["."])
if (process.argv.includes("--fix")) await ESLint.outputFixes(results)

const rel = (path) => relative(root, path).split(sep).join("/")
const byRule = new Map()
const fired = new Set()
const unexpected = []
for (const result of results) {
  const file = rel(result.filePath)
  for (const message of result.messages) {
    const rule = message.ruleId ?? "(parse error)"
    byRule.set(rule, (byRule.get(rule) ?? 0) + 1)
    if (message.severity === 1) {
      if (pending[file]?.[rule] !== undefined) fired.add(`${file} ${rule}`)
      else {unexpected.push(
          `${file}:${message.line}:${message.column}: warning ${rule} is not in eslint.config.mjs \`pending\``
        )}
    }
  }
}

const report = (await eslint.loadFormatter("stylish")).format(results)
if (report !== "") console.error(report)
const stale = Object.entries(pending).flatMap(([file, rules]) =>
  Object.keys(rules)
    .filter((rule) => !fired.has(`${file} ${rule}`))
    .map((rule) => `eslint.config.mjs: pending '${file}' '${rule}' no longer fires: remove it`)
)
for (const line of [...unexpected, ...stale]) console.error(line)

// The built JavaScript too (what users run): the public-Effect-API rule alone, over every package's dist/.
const dist = await distLinter(root).lintFiles(["packages/*/dist/**/*.js"]).catch((error) =>
  // no dist/ yet (a fresh clone before `pnpm build`): nothing to check
  String(error).includes("No files matching") ? [] : Promise.reject(error)
)
const distReport = (await eslint.loadFormatter("stylish")).format(dist)
if (distReport !== "") console.error(distReport)
for (const result of dist) results.push(result)

const errors = results.reduce((n, r) => n + r.errorCount, 0)
const warnings = results.reduce((n, r) => n + r.warningCount, 0)
const rules = [...byRule].sort(([a], [b]) => a.localeCompare(b)).map(([rule, n]) => `${rule} ${n}`).join(", ")
console.error(
  `lint: ${results.length} files in ${((performance.now() - started) / 1000).toFixed(1)}s; ` +
    `${errors} errors, ${warnings} pending warnings${rules === "" ? "" : ` (${rules})`}`
)
if (errors > 0 || unexpected.length > 0 || stale.length > 0) process.exit(1)
