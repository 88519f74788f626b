// The OpenAI SDK against finrepro proxy: OPENAI_BASE_URL and OPENAI_API_KEY
// come from the environment, as a harness would set them.
import OpenAI from "openai";
import { out, retried, collect } from "./common.mjs";

const client = new OpenAI({ maxRetries: 3 });
const model = "gpt-test";

// Non-streamed; the first attempt gets a 429 with Retry-After.
out("chat", await client.chat.completions.create({
  model, messages: [{ role: "user", content: "Hello RATE_LIMIT_ONCE" }],
}));

// Streamed with the usage chunk; the first attempt breaks off mid-stream.
out("chat.stream", await retried(async () => collect(await client.chat.completions.create({
  model, stream: true, stream_options: { include_usage: true },
  messages: [{ role: "user", content: "Stream please CUT_ONCE" }],
}))));

// A tool call with streamed arguments; the first attempt carries an
// error event.
const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }];
out("chat.stream.tool", await retried(async () => collect(await client.chat.completions.create({
  model, stream: true, tools, messages: [{ role: "user", content: "Weather in Paris? STREAM_ERROR_ONCE" }],
}))));

// A multi-turn conversation that repeats an identical request: the two
// identical requests get their two recorded answers, in order.
const turn = [{ role: "user", content: "Pick a number." }];
const a = await client.chat.completions.create({ model, messages: turn });
const b = await client.chat.completions.create({ model, messages: turn });
out("chat.repeat.1", a);
out("chat.repeat.2", b);
out("chat.turn.2", await client.chat.completions.create({
  model, messages: [...turn, a.choices[0].message, { role: "user", content: "And another?" }],
}));

// The Responses API, non-streamed (the first attempt gets a 500) and
// streamed, and a continuation of the first.
const r = await client.responses.create({ model, input: "Summarise SERVER_ERROR_ONCE" });
out("responses", r);
out("responses.stream", await collect(await client.responses.create({ model, input: "Stream a summary", stream: true })));
out("responses.next", await client.responses.create({ model, input: "Shorter", previous_response_id: r.id }));

// Embeddings (the SDK asks for base64 and decodes it) and the model list.
out("embeddings", await client.embeddings.create({ model: "emb-test", input: "finance" }));
const models = [];
for await (const m of client.models.list()) models.push(m);
out("models", models);
