// The Gemini SDK against finrepro proxy: the base URL is the SDK's
// httpOptions.baseUrl, here from GEMINI_BASE_URL; GEMINI_API_KEY is the key.
import { GoogleGenAI } from "@google/genai";
import { out, retried, collect } from "./common.mjs";

const ai = new GoogleGenAI({ apiKey: process.env.GEMINI_API_KEY, httpOptions: { baseUrl: process.env.GEMINI_BASE_URL } });
const model = "gemini-test";

// The SDK object carries the HTTP response's headers (dates, the proxy's
// hit or recorded): what is printed is the answer.
const plain = (r) => {
  const { sdkHttpResponse, ...rest } = r;
  return rest;
};

out("generate", plain(await retried(() => ai.models.generateContent({ model, contents: "Hello RATE_LIMIT_ONCE" }))));
out("generate.5xx", plain(await retried(() => ai.models.generateContent({ model, contents: "Again SERVER_ERROR_ONCE" }))));

out("generate.stream", (await retried(async () => collect(await ai.models.generateContentStream({
  model, contents: "Stream please CUT_ONCE",
})))).map(plain));

const tools = [{ functionDeclarations: [{ name: "get_weather", parameters: { type: "OBJECT", properties: { city: { type: "STRING" } } } }] }];
out("generate.stream.tool", (await retried(async () => collect(await ai.models.generateContentStream({
  model, contents: "Weather in Paris? STREAM_ERROR_ONCE", config: { tools },
})))).map(plain));

const turn = [{ role: "user", parts: [{ text: "Pick a number." }] }];
const a = await ai.models.generateContent({ model, contents: turn });
const b = await ai.models.generateContent({ model, contents: turn });
out("generate.repeat.1", plain(a));
out("generate.repeat.2", plain(b));
out("generate.turn.2", plain(await ai.models.generateContent({
  model, contents: [...turn, a.candidates[0].content, { role: "user", parts: [{ text: "And another?" }] }],
})));

out("embed", plain(await ai.models.embedContent({ model: "gemini-embedding-test", contents: "finance" })));
