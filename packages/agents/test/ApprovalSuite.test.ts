/**
 * The approval suite's core shared with the durable engine (`suites/approval.ts`), in process:
 * decisions given to `agent.resume`, each resume in its own runtime over the same store.
 */
import { approvalMatrix } from "./suites/approval.js"
import { inProcess } from "./suites/engine.js"

approvalMatrix(inProcess)
