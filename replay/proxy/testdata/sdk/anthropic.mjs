// The Anthropic SDK against finrepro proxy: ANTHROPIC_BASE_URL and
// ANTHROPIC_API_KEY come from the environment.
import Anthropic from "@anthropic-ai/sdk";
import { out, retried, collect } from "./common.mjs";

const client = new Anthropic({ maxRetries: 3 });
const model = "claude-test";

out("messages", await client.messages.create({
  model, max_tokens: 64, messages: [{ role: "user", content: "Hello RATE_LIMIT_ONCE" }],
}));
out("messages.5xx", await client.messages.create({
  model, max_tokens: 64, messages: [{ role: "user", content: "Again SERVER_ERROR_ONCE" }],
}));

out("messages.stream", await retried(async () => collect(await client.messages.create({
  model, max_tokens: 64, stream: true, messages: [{ role: "user", content: "Stream please CUT_ONCE" }],
}))));

const tools = [{ name: "get_weather", description: "weather", input_schema: { type: "object", properties: { city: { type: "string" } } } }];
out("messages.stream.tool", await retried(async () => collect(await client.messages.create({
  model, max_tokens: 64, stream: true, tools, messages: [{ role: "user", content: "Weather in Paris? STREAM_ERROR_ONCE" }],
}))));

// The helper that accumulates a stream into the final message.
out("messages.stream.final", await client.messages.stream({
  model, max_tokens: 64, messages: [{ role: "user", content: "Final message please" }],
}).finalMessage());

const turn = [{ role: "user", content: "Pick a number." }];
const a = await client.messages.create({ model, max_tokens: 64, messages: turn });
const b = await client.messages.create({ model, max_tokens: 64, messages: turn });
out("messages.repeat.1", a);
out("messages.repeat.2", b);
out("messages.turn.2", await client.messages.create({
  model, max_tokens: 64, messages: [...turn, { role: "assistant", content: a.content }, { role: "user", content: "And another?" }],
}));
