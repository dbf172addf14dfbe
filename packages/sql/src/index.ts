/**
 * @agentkit/sql: agentkit's durable stores on `@effect/sql` (embedded SQLite by default, or
 * Postgres): checkpoints with leases, the execution ledger, audit, idempotency, memo and quotas.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export { DriverNotInstalled, SchemaVersionUnsupported } from "./Errors.js"
/** @since 0.1.0 */
export * as SqlMigrations from "./SqlMigrations.js"
/** @since 0.1.0 */
export * as SqlStores from "./SqlStores.js"
/** @since 0.1.0 */
export * as SqlSpanStore from "./SqlSpanStore.js"
