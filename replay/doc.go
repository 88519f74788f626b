// Package replay is the only code in finrepro that talks to model APIs.
//
// A Client answers provider-neutral calls (results.Call) from the exchange
// cache first. In Offline mode, the default, a request that is not stored
// is a miss: it is reported with its label and the estimated cost of
// recording it, and no network connection is ever opened. In Record mode a
// miss is sent to its provider, and a successful exchange is stored before
// it is returned, so an interrupted recording resumes where it stopped. In
// Refresh mode every request is sent again and stored under the next free
// sample index; nothing stored is ever overwritten.
//
// # Request objects
//
// A Prompt becomes a request object, the unit the cache keys:
//
//	{"provider": NAME, "endpoint": PATH, "body": {...}, "sample": N}
//
// NAME is the configured provider name, PATH the API path relative to the
// provider's base URL ("chat/completions", "responses", "messages",
// "models/MODEL:generateContent"), body the exact JSON body sent, and N the
// index of repeated draws (omitted when 0). Headers, API keys, base URLs,
// timeouts and retry settings are never part of it. See docs/providers.md.
//
// # Providers
//
// Each provider has a Kind, the API shape it speaks: OpenAI-compatible Chat
// Completions, OpenAI Responses, Anthropic Messages, Gemini
// generateContent, or the built-in simulator "sim" (Chat Completions
// shape, deterministic, marked synthetic).
package replay
