/**
 * A small in-memory order book and the two tools of the seed page over it.
 */
import { Tool } from "@agentkit/tools"
import { Data, Effect, Schema } from "effect"

/** An order's current state. */
export interface Order {
  readonly id: string
  readonly status: string
  readonly cancelled?: string | undefined
}

/** No order has that id; the model sees this and can ask the user again. */
export class OrderNotFound extends Data.TaggedError("OrderNotFound")<{ readonly orderId: string }> {
  override get message() {
    return `no order with id '${this.orderId}'`
  }
}

/** The order book: a map from id to order, owned by one program. */
export class OrderBook {
  readonly #orders = new Map<string, Order>()
  constructor(orders: ReadonlyArray<Order>) {
    for (const order of orders) this.#orders.set(order.id, order)
  }
  get(id: string): Effect.Effect<Order, OrderNotFound> {
    const order = this.#orders.get(id)
    return order === undefined ? Effect.fail(new OrderNotFound({ orderId: id })) : Effect.succeed(order)
  }
  cancel(id: string, reason: string): Effect.Effect<Order, OrderNotFound> {
    return Effect.map(this.get(id), (order) => {
      const cancelled = { ...order, status: "cancelled", cancelled: reason }
      this.#orders.set(id, cancelled)
      return cancelled
    })
  }
}

/** The demo's order book. */
export const seedOrders = (): OrderBook =>
  new OrderBook([
    { id: "A-771", status: "shipped 2026-08-14, arriving Tuesday" },
    { id: "B-102", status: "processing, ships in 2 days" }
  ])

/** The seed's two tools over an order book. */
export const orderTools = (book: OrderBook) => {
  const lookupOrder = Tool.make("lookup_order", {
    description:
      "Look up an order by its id and return its status line.\n\nUse this whenever the user mentions an order number.",
    parameters: { order_id: Schema.String },
    sideEffecting: false,
    idempotent: true,
    handler: ({ order_id }) => Effect.map(book.get(order_id), (order) => `order ${order.id}: ${order.status}`)
  })

  const cancelOrder = Tool.make("cancel_order", {
    description:
      "Cancel an order. This really cancels it — there is no undo.\n\nOnly call it after the user has confirmed the order id.",
    parameters: {
      order_id: Schema.String,
      reason: Schema.String.pipe(Schema.optionalWith({ default: () => "customer request" }))
    },
    sideEffecting: true,
    handler: ({ order_id, reason }) =>
      Effect.map(book.cancel(order_id, reason), (order) => `order ${order.id} cancelled (${reason})`)
  })

  return { lookupOrder, cancelOrder }
}
