/**
 * The errors of the SQL stores that core's store errors do not cover. A database the stores
 * cannot use is refused when the layer is built, before anything runs.
 *
 * @since 0.1.0
 */
import { ErrorTypeId } from "@agentkit/core"
import * as Schema from "effect/Schema"

/**
 * The database's schema version is not the one this release works with: newer (written by a
 * later `@agentkit/sql`: upgrade this one) or, when the layer is told not to migrate, older (run
 * the migrations first). Nothing was run and nothing was changed.
 *
 * @example
 * ```ts
 * import { SchemaVersionUnsupported } from "@agentkit/sql"
 *
 * new SchemaVersionUnsupported({ table: "agentkit_migrations", found: 3, supported: 2 }).message
 * // "the database's agentkit schema is version 3 (agentkit_migrations), newer than this @agentkit/sql supports (2): upgrade @agentkit/sql; nothing was run or changed"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class SchemaVersionUnsupported
  extends Schema.TaggedError<SchemaVersionUnsupported>("@agentkit/sql/SchemaVersionUnsupported")(
    "SchemaVersionUnsupported",
    {
      /** The migrations table read. */
      table: Schema.String,
      /** The newest migration recorded in it (0: none). */
      found: Schema.Number,
      /** The version this release works with. */
      supported: Schema.Number
    }
  )
{
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return this.found > this.supported
      ? `the database's agentkit schema is version ${this.found} (${this.table}), newer than this @agentkit/sql supports (${this.supported}): upgrade @agentkit/sql; nothing was run or changed`
      : `the database's agentkit schema is version ${this.found} (${this.table}); this @agentkit/sql needs version ${this.supported}: run the migrations first (SqlMigrations.run, or a layer with migrate: true); nothing was run or changed`
  }
}

/**
 * A database driver package the stores need is not installed. `@agentkit/sql` declares its
 * drivers as optional peer dependencies, so an app installs only the one it uses: `@libsql/client`
 * and `@effect/sql-libsql` for SQLite (`SqlStores.layerSqlite`), `@effect/sql-pg` for Postgres
 * (`SqlStores.layerPg`). Nothing was opened.
 *
 * @example
 * ```ts
 * import { DriverNotInstalled } from "@agentkit/sql"
 *
 * new DriverNotInstalled({ driver: "@effect/sql-pg", database: "Postgres", install: "@effect/sql-pg@^0.53.0" }).message
 * // "the Postgres stores need the package @effect/sql-pg, which is not installed: install it beside @agentkit/sql (npm install @effect/sql-pg@^0.53.0); nothing was opened"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class DriverNotInstalled extends Schema.TaggedError<DriverNotInstalled>("@agentkit/sql/DriverNotInstalled")(
  "DriverNotInstalled",
  {
    /** The package that could not be found. */
    driver: Schema.String,
    /** The database whose stores need it (`SQLite` or `Postgres`). */
    database: Schema.String,
    /** What to install, as npm takes it: every driver package that database needs, with its range. */
    install: Schema.String
  }
) {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `the ${this.database} stores need the package ${this.driver}, which is not installed: install it beside @agentkit/sql (npm install ${this.install}); nothing was opened`
  }
}
