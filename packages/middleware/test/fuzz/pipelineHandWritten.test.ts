/** Attack suite through every tool middleware, hand-written schemas (see `pipeline.ts`). */
import { pipelineSuite } from "./pipeline.js"

pipelineSuite("hand-written")
