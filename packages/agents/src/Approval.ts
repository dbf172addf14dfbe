/**
 * Human decisions: the pending entries a suspended run waits on (`PendingEntry`), the decisions a
 * person takes on them (`Decision`), the digest that binds a decision to exactly what it was
 * given for, and the optional in-process `Approver`. This namespace gathers those modules.
 *
 * @since 0.1.0
 */
export * from "./Approver.js"
export * from "./Decision.js"
export * from "./PendingEntry.js"
