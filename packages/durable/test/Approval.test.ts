/**
 * The approval suite's core against the durable engine (`packages/agents/test/suites/approval.ts`,
 * run in process by the agents tests): decisions recorded through `DurableRuns.decide` (the
 * Operator checks them, so a bad one is refused before anything is written) and applied by a sweep.
 */
import { approvalMatrix } from "../../agents/test/suites/approval.js"
import { durableEngine } from "./engine.js"

approvalMatrix(durableEngine)
