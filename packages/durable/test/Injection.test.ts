/**
 * The governance issue's injection suite against the durable engine: the same scenarios, tools,
 * compromised model and loopback collector as the in-process run (`packages/agents/test/suites`),
 * each scenario under the three policies, driven as a workflow on `WorkflowEngine.layerMemory`
 * with its decisions recorded through `DurableRuns.decide` and applied by a sweep.
 */
import { injectionMatrix } from "../../agents/test/suites/injection.js"
import { durableEngine } from "./engine.js"

injectionMatrix(durableEngine)
