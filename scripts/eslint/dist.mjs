// An ESLint instance that runs only the public-Effect-API rule (no-effect-internals.mjs), over
// built JavaScript (packages/*/dist/**/*.js): what scripts/lint.mjs and its test run.
import { ESLint } from "eslint"
import agentkit from "./no-effect-internals.mjs"

/** The linter for built files under `cwd`. */
export const distLinter = (cwd) =>
  new ESLint({
    cwd,
    overrideConfigFile: true,
    overrideConfig: [
      {
        files: ["**/*.js"],
        plugins: { agentkit },
        languageOptions: { ecmaVersion: 2024, sourceType: "module" },
        linterOptions: { reportUnusedDisableDirectives: "off" },
        rules: { "agentkit/no-effect-internals": "error" }
      }
    ]
  })
