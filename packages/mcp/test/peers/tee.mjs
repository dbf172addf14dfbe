// Runs an MCP stdio server and appends every line the client sends it to a log file, so a test
// can see what reached the server (a cancellation, or nothing at all).
import { spawn } from "node:child_process"
import { appendFileSync, writeFileSync } from "node:fs"

const [log, command, ...args] = process.argv.slice(2)
writeFileSync(`${log}.pid`, String(process.pid))
const child = spawn(command, args, { stdio: ["pipe", "pipe", "ignore"] })
let pending = ""
process.stdin.on("data", (chunk) => {
  pending += chunk.toString("utf8")
  let newline
  while ((newline = pending.indexOf("\n")) !== -1) {
    appendFileSync(log, pending.slice(0, newline + 1))
    pending = pending.slice(newline + 1)
  }
  child.stdin.write(chunk)
})
process.stdin.on("end", () => child.stdin.end())
child.stdout.pipe(process.stdout)
child.on("exit", (code) => process.exit(code ?? 0))
process.on("SIGTERM", () => child.kill("SIGTERM"))
