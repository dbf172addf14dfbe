// A local ESLint rule: no member of Effect's runtime that Effect does not document and export.
//
// It reports, on any value (without type information it cannot tell a fiber or a primitive from
// anything else, so the names are forbidden everywhere it runs):
// - a member access, or a destructured property, named `effect_instruction_*`, `_op`,
//   `patchRuntimeFlags`, `currentRuntimeFlags`, `_queue`, `_fiberRefs`, `_children` (also
//   through a string literal: `fiber["_queue"]`);
// - a computed access whose key builds such a name from pieces (`"effect_" + "instruction_i0"`,
//   `` `_fiber${"Refs"}` ``, `"effect_instruction_i" + n`);
// - an assignment to a `currentSpan` member (the fiber's span is the runtime's to set);
// - `as any` and `<any>` (an Effect value cast to `any` is the usual way in to its internals; with
//   no type information the rule cannot tell an Effect value from another, so it forbids every
//   such cast in the files it runs on: a superset).

/** The private names, exactly. */
const names = new Set(["_op", "patchRuntimeFlags", "currentRuntimeFlags", "_queue", "_fiberRefs", "_children"])

/** Whether `name` is one of the private names (or an `effect_instruction_*` one). */
export const isPrivateName = (name) => names.has(name) || name.startsWith("effect_instruction")

/**
 * The string a computed key builds, as far as it is known: literal pieces as they are, every
 * other piece as `\u0000` (a character no name has). `undefined` when the key is no string
 * expression (a number, a symbol, a variable).
 */
const built = (node) => {
  if (node.type === "Literal") return typeof node.value === "string" ? node.value : undefined
  if (node.type === "TemplateLiteral") {
    let text = ""
    node.quasis.forEach((quasi, i) => {
      text += quasi.value.cooked ?? ""
      if (i < node.expressions.length) text += built(node.expressions[i]) ?? "\u0000"
    })
    return text
  }
  if (node.type === "BinaryExpression" && node.operator === "+") {
    const left = built(node.left)
    const right = built(node.right)
    if (left === undefined && right === undefined) return undefined
    return (left ?? "\u0000") + (right ?? "\u0000")
  }
  return undefined
}

/**
 * Whether a name built from pieces may be one of the private names: all of it known and one of
 * them, or a known piece of three characters or more that is part of one of them (`"_fiber" + x`)
 * or starts with `effect_instruction`.
 */
const mayBePrivate = (text) => {
  if (!text.includes("\u0000")) return isPrivateName(text)
  const candidates = [...names, "effect_instruction_i0"]
  return text.split("\u0000").some((piece) =>
    piece.length >= 3 &&
    (piece.startsWith("effect_instruction") || candidates.some((name) => name.includes(piece)))
  )
}

/** The name a non-computed key or a literal key gives. */
const keyName = (node, computed) => {
  if (!computed && node.type === "Identifier") return node.name
  if (!computed && node.type === "PrivateIdentifier") return undefined
  if (node.type === "Literal" && typeof node.value === "string") return node.value
  return undefined
}

/** @type {import("eslint").Rule.RuleModule} */
export const noEffectInternals = {
  meta: {
    type: "problem",
    docs: { description: "Use only the public, documented Effect API: no runtime internals, no `as any`." },
    schema: [],
    messages: {
      member:
        "`{{name}}` is a member of Effect's runtime that Effect does not document or export: use the public API (Effect.uninterruptibleMask, Effect.locally, FiberRef, Tracer.make, ...).",
      computed: "This computed key builds the name of a private member of Effect's runtime (`{{name}}`).",
      currentSpan: "Do not assign a fiber's `currentSpan`: the runtime sets it from the fiber's context.",
      asAny: "No `as any` here: an Effect value cast to `any` reaches Effect's internals (type it, or use `unknown`)."
    }
  },
  create(context) {
    const checkKey = (node, key, computed) => {
      const name = keyName(key, computed)
      if (name !== undefined) {
        if (isPrivateName(name)) context.report({ node, messageId: "member", data: { name } })
        return
      }
      if (!computed) return
      const text = built(key)
      if (text !== undefined && mayBePrivate(text)) {
        context.report({ node, messageId: "computed", data: { name: text.replaceAll("\u0000", "…") } })
      }
    }
    return {
      MemberExpression(node) {
        checkKey(node, node.property, node.computed)
      },
      "ObjectPattern > Property"(node) {
        checkKey(node, node.key, node.computed)
      },
      AssignmentExpression(node) {
        const target = node.left
        if (target.type === "MemberExpression" && keyName(target.property, target.computed) === "currentSpan") {
          context.report({ node, messageId: "currentSpan" })
        }
      },
      TSAsExpression(node) {
        if (node.typeAnnotation.type === "TSAnyKeyword") context.report({ node, messageId: "asAny" })
      },
      TSTypeAssertion(node) {
        if (node.typeAnnotation.type === "TSAnyKeyword") context.report({ node, messageId: "asAny" })
      }
    }
  }
}

/** The local plugin, as eslint.config.mjs registers it. */
export default { rules: { "no-effect-internals": noEffectInternals } }
