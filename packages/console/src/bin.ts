#!/usr/bin/env node
/**
 * The `agentkit-console` executable: the operator CLI over Node (`Cli.run`).
 *
 * @since 0.1.0
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { run } from "./Cli.js"

run(process.argv).pipe(Effect.provide(Layer.merge(NodeContext.layer, FetchHttpClient.layer)), NodeRuntime.runMain)
