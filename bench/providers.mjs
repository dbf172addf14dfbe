// The provider overhead of one model call: building the request body from a `ChatRequest` (and
// serializing it, as the SDK then does) and mapping the streamed reply (its events already parsed,
// as the SDK hands them over) into a `ChatResponse`'s parts. No network and no SDK: the providers'
// own code, per protocol, on the same call: the seed's conversation after one tool round (system,
// user, an assistant tool call, its result; two tools) answered by an 11-delta text reply, and the
// same request answered by two parallel tool calls. Run after the providers are built
// (`pnpm exec tsc -b packages/anthropic packages/openai packages/google`):
//   node bench/providers.mjs [calls per block] [blocks]
// It prints a markdown table: the median µs per call over the blocks (CPU time), per provider.
const [callsText = "20000", blocksText = "15"] = process.argv.slice(2)
const calls = Number(callsText)
const blocks = Number(blocksText)

const pkg = (name, file) => new URL(`../packages/${name}/dist/${file}`, import.meta.url).href
const AnthropicRequest = await import(pkg("anthropic", "internal/request.js"))
const AnthropicStream = await import(pkg("anthropic", "internal/stream.js"))
const Responses = await import(pkg("openai", "internal/responses.js"))
const Completions = await import(pkg("openai", "internal/completions.js"))
const Gemini = await import(pkg("google", "internal/wire.js"))

const tool = (name, properties, required) => ({
  name,
  description: `${name}: look up or change an order by its id.`,
  parameters: { type: "object", properties, required, additionalProperties: false }
})
const request = {
  model: "m",
  tools: [
    tool("cancel_order", { order_id: { type: "string" }, reason: { type: "string" } }, ["order_id", "reason"]),
    tool("lookup_order", { order_id: { type: "string" } }, ["order_id"])
  ],
  messages: [
    { role: "system", content: "Answer order questions. Use the tools; never guess a status." },
    { role: "user", content: "What happened to order A-771?" },
    {
      role: "assistant",
      content: "",
      toolCalls: [{ id: "c1", name: "lookup_order", arguments: { order_id: "A-771" } }]
    },
    {
      role: "tool",
      toolCallId: "c1",
      name: "lookup_order",
      content: "order A-771: shipped 2026-08-14, arriving Tuesday",
      isError: false
    }
  ]
}
const deltas = "Order A-771 shipped on 14 August and arrives Tuesday; the carrier says it is on time.".match(/.{1,8}/g)
const calls2 = [
  { id: "c2", name: "lookup_order", fragments: ["{\"order_", "id\":\"A-771\"}"] },
  { id: "c3", name: "cancel_order", fragments: ["{\"order_id\":\"B-1\",", "\"reason\":\"dup\"}"] }
]

// the replies, as each wire sends them (parsed)
const anthropic = (toolCalls) => {
  const events = [{
    type: "message_start",
    message: { id: "msg_1", model: "claude-sonnet-4-6", usage: { input_tokens: 120, output_tokens: 1 } }
  }]
  if (!toolCalls) {
    events.push({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } })
    for (const text of deltas) {
      events.push({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } })
    }
    events.push({ type: "content_block_stop", index: 0 })
  } else {
    calls2.forEach((c, index) => {
      events.push({
        type: "content_block_start",
        index,
        content_block: { type: "tool_use", id: c.id, name: c.name, input: {} }
      })
      for (const partial_json of c.fragments) {
        events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } })
      }
      events.push({ type: "content_block_stop", index })
    })
  }
  events.push({
    type: "message_delta",
    delta: { stop_reason: toolCalls ? "tool_use" : "end_turn" },
    usage: { output_tokens: 30 }
  })
  events.push({ type: "message_stop" })
  return events
}
const responses = (toolCalls) => {
  const events = [{ type: "response.created", response: { id: "resp_1", model: "gpt-4.1-mini", usage: null } }]
  if (!toolCalls) {
    events.push({ type: "response.output_item.added", output_index: 0, item: { type: "message", id: "msg_1" } })
    for (const delta of deltas) {
      events.push({ type: "response.output_text.delta", output_index: 0, item_id: "msg_1", content_index: 0, delta })
    }
    events.push({ type: "response.output_item.done", output_index: 0, item: { type: "message", id: "msg_1" } })
  } else {
    calls2.forEach((c, index) => {
      events.push({
        type: "response.output_item.added",
        output_index: index,
        item: { type: "function_call", id: `fc_${c.id}`, call_id: c.id, name: c.name, arguments: "" }
      })
      for (const delta of c.fragments) {
        events.push({
          type: "response.function_call_arguments.delta",
          output_index: index,
          item_id: `fc_${c.id}`,
          delta
        })
      }
      events.push({
        type: "response.function_call_arguments.done",
        output_index: index,
        item_id: `fc_${c.id}`,
        arguments: c.fragments.join("")
      })
      events.push({
        type: "response.output_item.done",
        output_index: index,
        item: { type: "function_call", call_id: c.id, name: c.name, arguments: c.fragments.join("") }
      })
    })
  }
  events.push({
    type: "response.completed",
    response: {
      id: "resp_1",
      model: "gpt-4.1-mini",
      usage: {
        input_tokens: 120,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 30,
        output_tokens_details: { reasoning_tokens: 0 }
      }
    }
  })
  return events
}
const chunk = (delta, finish = null) => ({
  id: "chatcmpl-1",
  model: "gpt-4.1-mini",
  choices: [{ index: 0, delta, finish_reason: finish }],
  usage: null
})
const completions = (toolCalls) => {
  const events = [chunk({ role: "assistant", content: "" })]
  if (!toolCalls) { for (const content of deltas) events.push(chunk({ content })) }
  else {
    calls2.forEach((c, index) => {
      events.push(
        chunk({ tool_calls: [{ index, id: c.id, type: "function", function: { name: c.name, arguments: "" } }] })
      )
      for (const args of c.fragments) events.push(chunk({ tool_calls: [{ index, function: { arguments: args } }] }))
    })
  }
  events.push(chunk({}, toolCalls ? "tool_calls" : "stop"))
  events.push({
    id: "chatcmpl-1",
    model: "gpt-4.1-mini",
    choices: [],
    usage: { prompt_tokens: 120, completion_tokens: 30, prompt_tokens_details: { cached_tokens: 0 } }
  })
  return events
}
const gemini = (toolCalls) => {
  const part = (parts, finishReason) => ({
    candidates: [{ content: { role: "model", parts }, ...(finishReason ? { finishReason } : {}) }],
    usageMetadata: { promptTokenCount: 120, candidatesTokenCount: 30 },
    modelVersion: "gemini-2.5-flash",
    responseId: "r1"
  })
  const events = toolCalls
    ? [part(calls2.map((c) => ({ functionCall: { id: c.id, name: c.name, args: JSON.parse(c.fragments.join("")) } })))]
    : deltas.map((text) => part([{ text }]))
  events.push(part([], "STOP"))
  return events
}

const emit = () => {}
const protocols = [
  {
    name: "Anthropic Messages",
    events: anthropic,
    call: (events) => {
      const params = AnthropicRequest.toParams(request, "claude-sonnet-4-6", {
        defaultModel: undefined,
        maxTokens: 4096,
        cache: true
      })
      JSON.stringify(params)
      const assembler = new AnthropicStream.Assembler(emit)
      for (const event of events) assembler.push(event)
      return assembler.finish()
    }
  },
  {
    name: "OpenAI Responses",
    events: responses,
    call: (events) => {
      JSON.stringify(
        Responses.toParams(request, "gpt-4.1-mini", { reasoningEffort: undefined, defaultMaxTokens: undefined })
      )
      const assembler = new Responses.ResponsesAssembler(emit)
      for (const event of events) assembler.push(event)
      return assembler.finish()
    }
  },
  {
    name: "OpenAI Chat Completions",
    events: completions,
    call: (events) => {
      JSON.stringify(
        Completions.toParams(request, "gpt-4.1-mini", {
          reasoningEffort: undefined,
          defaultMaxTokens: undefined,
          official: true
        })
      )
      const assembler = new Completions.CompletionsAssembler(emit)
      for (const event of events) assembler.push(event)
      return assembler.finish()
    }
  },
  {
    name: "Google Gemini",
    events: gemini,
    call: (events) => {
      JSON.stringify({
        contents: Gemini.contentsOf(request.messages),
        config: Gemini.toConfig(request, { defaultMaxTokens: undefined, thinkingBudget: undefined })
      })
      const assembler = new Gemini.Assembler(emit)
      for (const event of events) assembler.push(event)
      return assembler.result()
    }
  }
]

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}
const measure = (protocol, events) => {
  const block = () => {
    const start = process.cpuUsage()
    for (let i = 0; i < calls; i++) protocol.call(events)
    const used = process.cpuUsage(start)
    return (used.user + used.system) / calls
  }
  for (let i = 0; i < 3; i++) block() // warm up
  return median(Array.from({ length: blocks }, block))
}

const rows = []
for (const protocol of protocols) {
  for (const toolCalls of [false, true]) {
    const events = protocol.events(toolCalls)
    const answer = protocol.call(events)
    const ok = toolCalls ? answer.toolCalls?.length === 2 : answer.content === deltas.join("")
    if (!ok) throw new Error(`${protocol.name}: the reply did not map (${JSON.stringify(answer)})`)
  }
}
// interleaved: every protocol's text case, then every protocol's tool case
for (const toolCalls of [false, true]) {
  for (const protocol of protocols) {
    rows.push([
      protocol.name,
      toolCalls ? "2 tool calls" : `text, ${deltas.length} deltas`,
      measure(protocol, protocol.events(toolCalls))
    ])
    process.stderr.write(".")
  }
}
process.stderr.write("\n")
console.log(`| provider | reply | µs per call (median of ${blocks} blocks of ${calls}) |`)
console.log("| --- | --- | ---: |")
for (const [name, reply, us] of rows) console.log(`| ${name} | ${reply} | ${us.toFixed(2)} |`)
