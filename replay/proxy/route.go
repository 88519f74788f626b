package proxy

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/finrepro/finrepro/replay"
)

// A family is an API family: it decides the error shape and the stream
// grammar of an exchange.
type family int

const (
	openAI family = iota
	anthropic
	gemini
)

// A route is what the proxy makes of an incoming request's method and
// URL: the provider it is for, the endpoint relative to the provider's
// base URL, and how its answer is shaped.
type route struct {
	provider string
	endpoint string
	family   family
	// kind is the replay kind of the endpoint, for usage and cost; empty
	// for endpoints replay does not read (embeddings, models).
	kind replay.Kind
	// get is a GET (models, retrieving a stored response): its body is {}.
	get bool
	// gemStream is a Gemini streamGenerateContent with alt=sse.
	gemStream bool
	// version is a Gemini path's API version, v1beta or v1; the key
	// does not hold it (the two serve the same requests) but the upstream
	// is asked in the client's version.
	version string
	// retrieve is the id of the stored response a GET /v1/responses/{id}
	// asks for.
	retrieve string
}

// defaultProviders are the provider names of the paths without a
// provider prefix.
var defaultProviders = [...]string{openAI: "openai", anthropic: "anthropic", gemini: "gemini"}

// errNoRoute is a path the proxy does not serve.
var errNoRoute = errors.New("not an endpoint finrepro proxy serves")

// routeOf maps a request to its route. The path is
// [/PROVIDER]/v1/ENDPOINT for the OpenAI-compatible APIs and Anthropic's
// messages, and [/PROVIDER]/v1beta/models/MODEL:METHOD (or v1) for Gemini, where
// PROVIDER, when present, is a name known to known. The query is ignored
// except Gemini's alt=sse; key= is a credential and never kept.
func routeOf(method string, u *url.URL, known func(string) bool) (route, error) {
	p := u.Path
	var rt route
	if name, rest, ok := strings.Cut(strings.TrimPrefix(p, "/"), "/"); ok && name != "v1" && name != "v1beta" {
		if !known(name) {
			return rt, errNoRoute
		}
		rt.provider, p = name, "/"+rest
	}
	version, after, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	geminiPath := method == http.MethodPost && strings.HasPrefix(after, "models/") && strings.Contains(after, ":")
	switch {
	case version == "v1beta" || version == "v1" && geminiPath:
		rest := after
		rt.version = version
		model, verb, ok := strings.Cut(strings.TrimPrefix(rest, "models/"), ":")
		if method != http.MethodPost || !strings.HasPrefix(rest, "models/") || !ok || model == "" || !plain(model) || !plain(verb) {
			return rt, errNoRoute
		}
		rt.family, rt.endpoint = gemini, rest
		switch verb {
		case "generateContent":
			rt.kind = replay.KindGemini
		case "streamGenerateContent":
			if u.Query().Get("alt") != "sse" {
				return rt, errors.New("streamGenerateContent is served with alt=sse only")
			}
			rt.gemStream = true
		}
	case strings.HasPrefix(p, "/v1/"):
		rest := strings.TrimPrefix(p, "/v1/")
		if !plainPath(rest) {
			return rt, errNoRoute
		}
		rt.endpoint = rest
		switch {
		case rest == "messages" || strings.HasPrefix(rest, "messages/"):
			rt.family = anthropic
			if rest == "messages" {
				rt.kind = replay.KindAnthropic
			}
		case rest == "chat/completions":
			rt.kind = replay.KindChat
		case rest == "responses":
			rt.kind = replay.KindResponses
		}
		if method == http.MethodGet {
			rt.get = true
			switch {
			case rest == "models" || strings.HasPrefix(rest, "models/"):
			case strings.HasPrefix(rest, "responses/") && !strings.Contains(rest[len("responses/"):], "/"):
				rt.retrieve = rest[len("responses/"):]
			default:
				return rt, errNoRoute
			}
			rt.kind = ""
		} else if method != http.MethodPost {
			return rt, errNoRoute
		}
	default:
		return rt, errNoRoute
	}
	if rt.provider == "" {
		rt.provider = defaultProviders[rt.family]
	}
	return rt, nil
}

// plain reports whether a path segment is non-empty and has no slash,
// dot-dot or character that could leave the endpoint.
func plain(s string) bool {
	return s != "" && !strings.ContainsAny(s, "/\\?# \t\r\n") && s != "." && !strings.Contains(s, "..")
}

// plainPath reports whether every segment of a relative path is plain.
func plainPath(s string) bool {
	for seg := range strings.SplitSeq(s, "/") {
		if !plain(seg) {
			return false
		}
	}
	return true
}
