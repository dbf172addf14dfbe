/**
 * A named lookup surface for tools: advertised sorted by name (the tool list is part of the
 * provider's cache-stable prompt prefix), kept in insertion order for policies.
 *
 * @since 0.1.0
 */
import { PythonText, ToolDefinitionError, ToolNotFoundError } from "@agentkit/core"
import type { Chat } from "@agentkit/core"
import * as Option from "effect/Option"
import { type Pipeable, pipeArguments } from "effect/Pipeable"
import { isTool, type Tool } from "./Tool.js"

/**
 * Any tool, whatever its types.
 *
 * @example
 * ```ts
 * import type { ToolRegistry } from "@agentkit/tools"
 *
 * const names = (tools: ReadonlyArray<ToolRegistry.AnyTool>) => tools.map((tool) => tool.name)
 * names([lookupOrder, cancelOrder]) // ["lookup_order", "cancel_order"]
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type AnyTool = Tool<string, any, any, any, any> // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * The union of the requirements of a list of tools.
 *
 * @example
 * ```ts
 * import { Tool, type ToolRegistry } from "@agentkit/tools"
 * import { Context, Effect, Schema } from "effect"
 *
 * class Orders extends Context.Tag("Orders")<Orders, { readonly status: (id: string) => Effect.Effect<string> }>() {}
 * const lookupOrder = Tool.make("lookup_order", {
 *   description: "Look up an order by its id and return its status line.", parameters: { order_id: Schema.String }, sideEffecting: false,
 *   handler: ({ order_id }) => Effect.flatMap(Orders, (orders) => orders.status(order_id)) })
 * type Needs = ToolRegistry.Requirements<typeof lookupOrder> // Orders
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements<T extends AnyTool> = T extends Tool<string, infer _P, infer _S, infer _E, infer R> ? R : never

/**
 * The union of the errors of a list of tools' handlers.
 *
 * @example
 * ```ts
 * import { Tool, type ToolRegistry } from "@agentkit/tools"
 * import { Data, Effect, Schema } from "effect"
 *
 * class OrderNotFound extends Data.TaggedError("OrderNotFound")<{ readonly id: string }> {}
 * const lookupOrder = Tool.make("lookup_order", {
 *   description: "Look up an order by its id and return its status line.", parameters: { order_id: Schema.String }, sideEffecting: false,
 *   handler: ({ order_id }) => (order_id.startsWith("A-") ? Effect.succeed("shipped") : Effect.fail(new OrderNotFound({ id: order_id }))) })
 * type Failures = ToolRegistry.Errors<typeof lookupOrder> // OrderNotFound
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Errors<T extends AnyTool> = T extends Tool<string, infer _P, infer _S, infer E, infer _R> ? E : never

/**
 * An immutable registry of tools.
 *
 * @example
 * ```ts
 * import { ToolRegistry } from "@agentkit/tools"
 *
 * const registry: ToolRegistry.ToolRegistry = ToolRegistry.fromTools([lookupOrder, cancelOrder])
 * registry.names() // ["cancel_order", "lookup_order"]
 * registry.getOption("refund_order") // Option.none()
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolRegistry<T extends AnyTool = AnyTool> extends Pipeable {
  /** The tool names, sorted by code point. */
  names(): ReadonlyArray<string>
  /** What goes on the wire, in the order of `names()`. */
  schemas(): ReadonlyArray<Chat.ToolSchema>
  /** The tools in insertion order. */
  tools(): ReadonlyArray<T>
  /** The tool with this name; throws `ToolNotFoundError` (`no tool 'x'. Available tools: a, b.`). */
  get(name: string): T
  /** The tool with this name, if any. */
  getOption(name: string): Option.Option<T>
  /**
   * A new registry with the tool added. A name already registered throws `ToolDefinitionError`
   * unless `replace` is true, which swaps the tool in place (keeping its position).
   */
  register<U extends AnyTool>(tool: U, options?: { readonly replace?: boolean }): ToolRegistry<T | U>
}

class Registry<T extends AnyTool> implements ToolRegistry<T> {
  readonly #byName: ReadonlyMap<string, T>
  readonly #sorted: ReadonlyArray<string>
  readonly #schemas: ReadonlyArray<Chat.ToolSchema>
  readonly #tools: ReadonlyArray<T>

  constructor(byName: ReadonlyMap<string, T>) {
    this.#byName = byName
    this.#tools = Object.freeze(Array.from(byName.values()))
    this.#sorted = Object.freeze(Array.from(byName.keys()).sort(PythonText.compare))
    this.#schemas = Object.freeze(this.#sorted.map((name) => byName.get(name)!.schema))
  }
  names() {
    return this.#sorted
  }
  schemas() {
    return this.#schemas
  }
  tools() {
    return this.#tools
  }
  get(name: string): T {
    const tool = this.#byName.get(name)
    if (tool === undefined) throw new ToolNotFoundError({ name, available: this.#sorted })
    return tool
  }
  getOption(name: string): Option.Option<T> {
    return Option.fromNullable(this.#byName.get(name))
  }
  register<U extends AnyTool>(tool: U, options?: { readonly replace?: boolean }): ToolRegistry<T | U> {
    if (!isTool(tool)) {
      throw new ToolDefinitionError({
        message: "ToolRegistry: only tools made with Tool.make or asTool can be registered"
      })
    }
    if (this.#byName.has(tool.name) && options?.replace !== true) {
      throw new ToolDefinitionError({
        message: `ToolRegistry: tool '${tool.name}' already registered. Pass { replace: true } to swap deliberately.`
      })
    }
    const next = new Map<string, T | U>(this.#byName)
    next.set(tool.name, tool)
    return new Registry(next)
  }
  pipe() {
    return pipeArguments(this, arguments)
  }
}

/**
 * The empty registry.
 *
 * @example
 * ```ts
 * import { ToolRegistry } from "@agentkit/tools"
 *
 * ToolRegistry.empty.names() // []
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const empty: ToolRegistry<never> = new Registry<never>(new Map<string, never>())

/**
 * A registry of these tools, registered in order (a duplicate name throws `ToolDefinitionError`).
 *
 * @example
 * ```ts
 * import { ToolRegistry } from "@agentkit/tools"
 *
 * const registry = ToolRegistry.fromTools([lookupOrder, cancelOrder])
 * registry.names() // ["cancel_order", "lookup_order"]: sorted, stable
 * registry.schemas().length // 2
 * registry.get("lookup_order").name // "lookup_order"
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromTools = <const T extends ReadonlyArray<AnyTool>>(tools: T): ToolRegistry<T[number]> => {
  let registry: ToolRegistry<T[number]> = empty
  for (const tool of tools) registry = registry.register(tool)
  return registry
}

/**
 * Whether a value is a registry.
 *
 * @example
 * ```ts
 * import { ToolRegistry } from "@agentkit/tools"
 *
 * ToolRegistry.isToolRegistry(ToolRegistry.empty) // true
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isToolRegistry = (u: unknown): u is ToolRegistry => u instanceof Registry
