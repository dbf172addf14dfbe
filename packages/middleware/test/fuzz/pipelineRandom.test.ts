/** Attack suite through every tool middleware, random schemas (see `pipeline.ts`). */
import { pipelineSuite } from "./pipeline.js"

pipelineSuite("random")
