package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/cache/reqkey"
	"github.com/finrepro/finrepro/results"
)

// A Kind is the API shape a provider speaks.
type Kind string

// Kinds of provider.
const (
	KindChat      Kind = "chat"      // OpenAI-compatible Chat Completions
	KindResponses Kind = "responses" // OpenAI Responses
	KindAnthropic Kind = "anthropic" // Anthropic Messages
	KindGemini    Kind = "gemini"    // Gemini generateContent
	KindSim       Kind = "sim"       // the built-in simulator (Chat Completions shape)
)

// A ProviderConfig says how to reach one provider.
type ProviderConfig struct {
	// Kind is the API shape.
	Kind Kind
	// BaseURL is the URL the request object's endpoint is appended to.
	BaseURL string
	// KeyEnv names the environment variable holding the API key; empty
	// for servers that need none (vLLM, Ollama, llama.cpp).
	KeyEnv string
	// Concurrency bounds the requests in flight; 0 uses Config.Concurrency.
	Concurrency int
	// RPM and TPM limit requests and estimated tokens per minute; 0 means
	// no limit.
	RPM, TPM int
	// Timeout bounds one attempt; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxAttempts bounds the attempts per request; 0 means DefaultAttempts.
	MaxAttempts int
	// Backoff is the first retry delay, doubled on every retry up to
	// MaxBackoff; 0 means DefaultBackoff.
	Backoff time.Duration
}

// Defaults for ProviderConfig fields left zero.
const (
	DefaultTimeout     = 10 * time.Minute // deep-research answers can take minutes
	DefaultAttempts    = 6                // about a minute of backoff before giving up
	DefaultBackoff     = time.Second
	MaxBackoff         = time.Minute // longest wait between attempts, Retry-After included
	DefaultConcurrency = 4           // polite for a first tier account
	// DefaultMaxTokens is the max_tokens sent to Anthropic, which requires
	// one, when a prompt sets none.
	DefaultMaxTokens = 4096
)

// DefaultProviders returns the built-in provider table.
func DefaultProviders() map[string]ProviderConfig {
	return map[string]ProviderConfig{
		"openai":           {Kind: KindChat, BaseURL: "https://api.openai.com/v1", KeyEnv: "OPENAI_API_KEY"},
		"openai-responses": {Kind: KindResponses, BaseURL: "https://api.openai.com/v1", KeyEnv: "OPENAI_API_KEY"},
		"anthropic":        {Kind: KindAnthropic, BaseURL: "https://api.anthropic.com/v1", KeyEnv: "ANTHROPIC_API_KEY"},
		"gemini":           {Kind: KindGemini, BaseURL: "https://generativelanguage.googleapis.com/v1beta", KeyEnv: "GEMINI_API_KEY"},
		"deepseek":         {Kind: KindChat, BaseURL: "https://api.deepseek.com", KeyEnv: "DEEPSEEK_API_KEY"},
		"kimi":             {Kind: KindChat, BaseURL: "https://api.moonshot.ai/v1", KeyEnv: "MOONSHOT_API_KEY"},
		"qwen":             {Kind: KindChat, BaseURL: "https://dashscope-intl.aliyuncs.com/compatible-mode/v1", KeyEnv: "DASHSCOPE_API_KEY"},
		"doubao":           {Kind: KindChat, BaseURL: "https://ark.cn-beijing.volces.com/api/v3", KeyEnv: "ARK_API_KEY"},
		"openrouter":       {Kind: KindChat, BaseURL: "https://openrouter.ai/api/v1", KeyEnv: "OPENROUTER_API_KEY"},
		"vllm":             {Kind: KindChat, BaseURL: "http://localhost:8000/v1"},
		"ollama":           {Kind: KindChat, BaseURL: "http://localhost:11434/v1"},
		"llamacpp":         {Kind: KindChat, BaseURL: "http://localhost:8080/v1"},
		"sim":              {Kind: KindSim},
		ImportProvider:     {Kind: KindChat},
	}
}

// ImportProvider is the provider of systems whose outputs were collected
// elsewhere and imported (ImportReport): requests to it are keyed in the
// Chat Completions shape and have no base URL, so they are never sent.
const ImportProvider = "import"

// mergeProviders returns the defaults overridden by each of extra in turn.
func mergeProviders(extra ...map[string]ProviderConfig) map[string]ProviderConfig {
	m := DefaultProviders()
	for _, e := range extra {
		maps.Copy(m, e)
	}
	return m
}

// A Request is a decoded request object: what the cache keys and what is
// sent to the provider.
type Request struct {
	Provider string          `json:"provider"`
	Endpoint string          `json:"endpoint"`
	Body     json.RawMessage `json:"body"`
	Sample   int             `json:"sample,omitempty"`
	// Label says what the request is for, in reports; never stored.
	Label results.Label `json:"-"`
	// model is the body's model when the request was built from a
	// prompt, which saves decoding the body to find it.
	model string
	// keyedBody, when not nil, is the canonical encoding of Body, as
	// ParseRequests read it: the key is built from it (reqkey.Build)
	// without reading the body again.
	keyedBody []byte
}

// Encode returns the request object's JSON. The body is copied as it is
// (the cache key's canonical encoding validates and normalises it), which
// spares a full re-validation of large bodies.
func (r *Request) Encode() ([]byte, error) {
	body := bytes.TrimSpace(r.Body)
	if len(body) == 0 {
		return nil, errors.New("empty body")
	}
	var b bytes.Buffer
	b.Grow(len(body) + len(r.Provider) + len(r.Endpoint) + 64)
	b.WriteString(`{"provider":`)
	writeJSONString(&b, r.Provider)
	b.WriteString(`,"endpoint":`)
	writeJSONString(&b, r.Endpoint)
	b.WriteString(`,"body":`)
	b.Write(body)
	if r.Sample != 0 {
		fmt.Fprintf(&b, `,"sample":%d`, r.Sample)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func writeJSONString(b *bytes.Buffer, s string) {
	q, _ := json.Marshal(s) // a string always encodes
	b.Write(q)
}

// defaultEndpoint is the endpoint of a provider kind when a request line
// names none.
func defaultEndpoint(kind Kind) (string, error) {
	switch kind {
	case KindChat, KindSim:
		return "chat/completions", nil
	case KindResponses:
		return "responses", nil
	case KindAnthropic:
		return "messages", nil
	case KindGemini:
		return "", errors.New(`gemini requests need an endpoint "models/MODEL:generateContent"`)
	}
	return "", fmt.Errorf("provider kind %q has no default endpoint", kind)
}

// checkEndpoint is reqkey.CheckEndpoint: one rule for the endpoints of
// requests files and of cache load (docs/keys.md).
func checkEndpoint(e string) error { return reqkey.CheckEndpoint(e) }

// RequestOf returns the request object prompt p becomes, for the provider
// table made of the defaults overridden by providers. Its cache key is
// reqkey.Of of the result.
func RequestOf(p results.Prompt, providers ...map[string]ProviderConfig) ([]byte, error) {
	pc, ok := mergeProviders(providers...)[p.Provider]
	if !ok {
		return nil, fmt.Errorf("replay: unknown provider %q", p.Provider)
	}
	r, err := requestOf(p, pc.Kind)
	if err != nil {
		return nil, err
	}
	return r.Encode()
}

func requestOf(p results.Prompt, kind Kind) (*Request, error) {
	if p.Model == "" {
		return nil, fmt.Errorf("replay: %s prompt: empty model", p.Provider)
	}
	if p.Sample < 0 {
		return nil, fmt.Errorf("replay: %s prompt: negative sample %d", p.Provider, p.Sample)
	}
	b, endpoint, err := bodyOf(p, kind)
	if err != nil {
		return nil, fmt.Errorf("replay: %s prompt for %s: %w", p.Provider, p.Model, err)
	}
	return &Request{Provider: p.Provider, Endpoint: endpoint, Body: b, Sample: p.Sample}, nil
}

// promptKey returns the key of the request for prompt p to a provider of
// the given kind, and its endpoint, checking p as requestOf does. The key
// is hashed from a canonical body built from p's values; a prompt that
// path does not build (see errIndirect) is keyed through its request's
// JSON. TestPromptKey and FuzzPromptKey hold the two paths to one key.
func promptKey(p *results.Prompt, kind Kind) (cache.Key, string, error) {
	if p.Model == "" {
		return cache.Key{}, "", fmt.Errorf("replay: %s prompt: empty model", p.Provider)
	}
	if p.Sample < 0 {
		return cache.Key{}, "", fmt.Errorf("replay: %s prompt: negative sample %d", p.Provider, p.Sample)
	}
	body, endpoint, err := bodyWith(*p, kind, keyed)
	if errors.Is(err, errIndirect) {
		return requestKey(p, kind)
	}
	if err != nil {
		return cache.Key{}, "", fmt.Errorf("replay: %s prompt for %s: %w", p.Provider, p.Model, err)
	}
	key, err := reqkey.Build(p.Provider, endpoint, p.Sample, body.appendTo)
	if err != nil {
		return cache.Key{}, "", fmt.Errorf("replay: key: %w", err)
	}
	return key, endpoint, nil
}

// requestKey is promptKey through the request's JSON: build, encode and
// key it.
func requestKey(p *results.Prompt, kind Kind) (cache.Key, string, error) {
	r, err := requestOf(*p, kind)
	if err != nil {
		return cache.Key{}, "", err
	}
	_, key, err := encodeKey(r)
	return key, r.Endpoint, err
}

// bodyOf builds the provider body of p as sent, its members sorted by
// name (the bytes an encoding/json Encoder without HTML escaping gives
// the same body as a map).
func bodyOf(p results.Prompt, kind Kind) ([]byte, string, error) {
	body, endpoint, err := bodyWith(p, kind, wire)
	if err != nil {
		return nil, "", err
	}
	return body.appendTo(nil), endpoint, nil
}

// errIndirect is a prompt whose canonical body bodyWith does not build:
// a parameter name that is not ASCII, which the canonical form sorts
// after normalising it.
var errIndirect = errors.New("parameter name not ASCII")

// bodyWith builds the provider body of p with the strings and values of
// enc, and returns it (to be written with appendTo) with the endpoint.
func bodyWith(p results.Prompt, kind Kind, enc *bodyEncoding) (*jsonObject, string, error) {
	body := &jsonObject{enc: enc}
	setParams := func(dst *jsonObject, rename map[string]string) error {
		for _, k := range slices.Sorted(maps.Keys(p.Params)) {
			name := k
			if r, ok := rename[k]; ok {
				name = r
			}
			if enc == keyed && !isASCII(name) {
				return errIndirect
			}
			if dst.has(name) {
				return fmt.Errorf("param %q clashes with a field the prompt sets", k)
			}
			v, err := enc.val(p.Params[k])
			if err != nil {
				return err
			}
			dst.set(name, v)
		}
		return nil
	}
	message := func(role, content string) *jsonObject {
		m := &jsonObject{enc: enc}
		m.setString("content", content)
		m.setString("role", role)
		return m
	}
	parts := func(text string) []*jsonObject {
		t := &jsonObject{enc: enc}
		t.setString("text", text)
		return []*jsonObject{t}
	}
	switch kind {
	case KindChat, KindSim:
		var msgs []*jsonObject
		if p.System != "" {
			msgs = append(msgs, message("system", p.System))
		}
		msgs = append(msgs, message("user", p.User))
		body.setString("model", p.Model)
		body.setArray("messages", msgs)
		err := setParams(body, nil)
		return body, "chat/completions", err
	case KindResponses:
		body.setString("model", p.Model)
		if p.System != "" {
			body.setString("instructions", p.System)
		}
		body.setString("input", p.User)
		err := setParams(body, map[string]string{"max_tokens": "max_output_tokens"})
		return body, "responses", err
	case KindAnthropic:
		body.setString("model", p.Model)
		if p.System != "" {
			body.setString("system", p.System)
		}
		body.setArray("messages", []*jsonObject{message("user", p.User)})
		if err := setParams(body, nil); err != nil {
			return nil, "", err
		}
		if !body.has("max_tokens") {
			body.set("max_tokens", strconv.AppendInt(nil, DefaultMaxTokens, 10))
		}
		return body, "messages", nil
	case KindGemini:
		if strings.ContainsAny(p.Model, "/:?#") {
			return nil, "", fmt.Errorf("gemini model name %q has a path character", p.Model)
		}
		if p.System != "" {
			si := &jsonObject{enc: enc}
			si.setArray("parts", parts(p.System))
			body.setObject("systemInstruction", si)
		}
		c := &jsonObject{enc: enc}
		c.setArray("parts", parts(p.User))
		c.setString("role", "user")
		body.setArray("contents", []*jsonObject{c})
		if len(p.Params) > 0 {
			gc := &jsonObject{enc: enc}
			if err := setParams(gc, map[string]string{
				"max_tokens": "maxOutputTokens", "top_p": "topP", "top_k": "topK", "stop": "stopSequences",
			}); err != nil {
				return nil, "", err
			}
			body.setObject("generationConfig", gc)
		}
		return body, "models/" + p.Model + ":generateContent", nil
	}
	return nil, "", fmt.Errorf("unknown provider kind %q", kind)
}

// isASCII reports whether s is ASCII.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// modelOf returns the requested model of a request object.
func modelOf(kind Kind, r *Request) string {
	if r.model != "" {
		return r.model
	}
	if kind == KindGemini {
		m, _ := strings.CutPrefix(r.Endpoint, "models/")
		m, _, _ = strings.Cut(m, ":")
		return m
	}
	var b struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(r.Body, &b) // a body without a model gives ""; callers report that
	return b.Model
}

// setAuth sets the provider's authentication headers for key.
func setAuth(h http.Header, kind Kind, key string) {
	switch kind {
	case KindAnthropic:
		h.Set("anthropic-version", "2023-06-01")
		if key != "" {
			h.Set("x-api-key", key)
		}
	case KindGemini:
		if key != "" {
			h.Set("x-goog-api-key", key)
		}
	default:
		if key != "" {
			h.Set("Authorization", "Bearer "+key)
		}
	}
}

// An output is what an adapter reads from a successful response body.
type output struct {
	Text          string
	Model         string // reported model
	InputTokens   int
	OutputTokens  int
	Refusal       bool
	RefusalReason string
	// APIError is the error object of a body that carries one.
	APIError string
	// Calls says the answer asks for tool or function calls; Unfinished
	// that it is a background response still queued or in progress. Either
	// is an answer without text that the proxy stores (see checkAnswer).
	Calls, Unfinished bool
}

// errMalformed marks a response body that is not the provider's shape.
var errMalformed = errors.New("malformed response")

// parseOutput reads a response body of the given kind.
func parseOutput(kind Kind, body []byte) (*output, error) {
	var r response
	switch kind {
	case KindChat, KindSim:
		r = new(chatResponse)
	case KindResponses:
		r = new(responsesResponse)
	case KindAnthropic:
		r = new(anthropicResponse)
	case KindGemini:
		r = new(geminiResponse)
	default:
		return nil, fmt.Errorf("unknown provider kind %q", kind)
	}
	if err := unmarshalObject(body, r); err != nil {
		return nil, err
	}
	if e := r.apiError(body); e != "" {
		return &output{APIError: e}, nil
	}
	return r.output()
}

// A response is a provider's response body, decoded.
type response interface {
	// apiError is the error the body carries, or "".
	apiError(body []byte) string
	// output is what the body says.
	output() (*output, error)
}

// An errorMember is the "error" member every provider's schema has.
type errorMember struct {
	Error jsontext.Value `json:"error"`
}

func (e *errorMember) apiError([]byte) string {
	if len(e.Error) == 0 || string(e.Error) == "null" {
		return ""
	}
	return Snippet(e.Error)
}

// tokenUsage is the usage member of the Responses and Anthropic schemas.
type tokenUsage struct {
	Input  int `json:"input_tokens"`
	Output int `json:"output_tokens"`
}

// A textPart is a piece of a reply's text, of a type.
type textPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// joinText joins the texts of the parts of type typ.
func joinText(parts []textPart, typ string) string {
	var sb strings.Builder
	for _, p := range parts {
		if p.Type == typ {
			sb.WriteString(p.Text)
		}
	}
	return sb.String()
}

type chatResponse struct {
	errorMember
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content   *string        `json:"content"`
			Refusal   *string        `json:"refusal"`
			ToolCalls jsontext.Value `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		Prompt     int `json:"prompt_tokens"`
		Completion int `json:"completion_tokens"`
	} `json:"usage"`
}

func (r *chatResponse) output() (*output, error) {
	if len(r.Choices) == 0 {
		return nil, fmt.Errorf("%w: no choices", errMalformed)
	}
	c := r.Choices[0]
	o := &output{Model: r.Model, InputTokens: r.Usage.Prompt, OutputTokens: r.Usage.Completion,
		Calls: nonEmpty(c.Message.ToolCalls)}
	if c.Message.Content != nil {
		o.Text = *c.Message.Content
	}
	switch {
	case c.Message.Refusal != nil && *c.Message.Refusal != "":
		o.Refusal, o.RefusalReason = true, *c.Message.Refusal
	case c.FinishReason == "content_filter":
		o.Refusal, o.RefusalReason = true, "finish_reason content_filter"
	}
	return o, nil
}

type responsesResponse struct {
	errorMember
	Model  string `json:"model"`
	Status string `json:"status"`
	Output []struct {
		Type    string `json:"type"`
		Content []struct {
			textPart
			Refusal string `json:"refusal"`
		} `json:"content"`
	} `json:"output"`
	Usage tokenUsage `json:"usage"`
}

func (r *responsesResponse) output() (*output, error) {
	if r.Output == nil {
		return nil, fmt.Errorf("%w: no output", errMalformed)
	}
	o := &output{Model: r.Model, InputTokens: r.Usage.Input, OutputTokens: r.Usage.Output,
		Unfinished: r.Status == "queued" || r.Status == "in_progress"}
	var parts []textPart
	for _, it := range r.Output {
		if strings.HasSuffix(it.Type, "_call") { // function_call, web_search_call, ...
			o.Calls = true
		}
		if it.Type != "message" {
			continue
		}
		for _, c := range it.Content {
			parts = append(parts, c.textPart)
			if c.Type == "refusal" {
				o.Refusal, o.RefusalReason = true, c.Refusal
			}
		}
	}
	o.Text = joinText(parts, "output_text")
	if r.Status == "failed" {
		return nil, fmt.Errorf("%w: status failed", errMalformed)
	}
	return o, nil
}

type anthropicResponse struct {
	errorMember
	Type       string     `json:"type"`
	Model      string     `json:"model"`
	Content    []textPart `json:"content"`
	StopReason string     `json:"stop_reason"`
	Usage      tokenUsage `json:"usage"`
}

// apiError is the body's error member, or the whole body when its type
// is "error".
func (r *anthropicResponse) apiError(body []byte) string {
	if e := r.errorMember.apiError(body); e != "" || r.Type != "error" {
		return e
	}
	return Snippet(body)
}

func (r *anthropicResponse) output() (*output, error) {
	if r.Type != "message" {
		return nil, fmt.Errorf("%w: type %q, want \"message\"", errMalformed, r.Type)
	}
	o := &output{Model: r.Model, InputTokens: r.Usage.Input, OutputTokens: r.Usage.Output, Text: joinText(r.Content, "text"),
		Calls: slices.ContainsFunc(r.Content, func(p textPart) bool { return p.Type == "tool_use" || p.Type == "server_tool_use" })}
	if r.StopReason == "refusal" {
		o.Refusal, o.RefusalReason = true, "stop_reason refusal"
	}
	return o, nil
}

type geminiResponse struct {
	errorMember
	ModelVersion string `json:"modelVersion"`
	Candidates   []struct {
		Content struct {
			Parts []struct {
				Text         string         `json:"text"`
				Thought      bool           `json:"thought"`
				FunctionCall jsontext.Value `json:"functionCall"`
			} `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	PromptFeedback struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	Usage struct {
		Prompt     int `json:"promptTokenCount"`
		Candidates int `json:"candidatesTokenCount"`
	} `json:"usageMetadata"`
}

func (r *geminiResponse) output() (*output, error) {
	o := &output{Model: r.ModelVersion, InputTokens: r.Usage.Prompt, OutputTokens: r.Usage.Candidates}
	if r.PromptFeedback.BlockReason != "" {
		o.Refusal, o.RefusalReason = true, "prompt blocked: "+r.PromptFeedback.BlockReason
		return o, nil
	}
	if len(r.Candidates) == 0 {
		return nil, fmt.Errorf("%w: no candidates", errMalformed)
	}
	c := r.Candidates[0]
	var sb strings.Builder
	for _, p := range c.Content.Parts {
		if !p.Thought {
			sb.WriteString(p.Text)
		}
		o.Calls = o.Calls || nonEmpty(p.FunctionCall)
	}
	o.Text = sb.String()
	switch c.FinishReason {
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII":
		o.Refusal, o.RefusalReason = true, "finishReason "+c.FinishReason
	}
	return o, nil
}

// nonEmpty reports whether a JSON value is there and neither null nor [].
func nonEmpty(v jsontext.Value) bool {
	s := strings.Join(strings.Fields(string(v)), "")
	return s != "" && s != "null" && s != "[]"
}

// unmarshalObject decodes a JSON object body, tolerating unknown fields
// (providers add them all the time) but nothing else.
func unmarshalObject(body []byte, v any) error {
	if b := bytes.TrimSpace(body); len(b) == 0 || b[0] != '{' {
		return fmt.Errorf("%w: not a JSON object", errMalformed)
	}
	if err := jsonv2.Unmarshal(body, v, cache.DecodeOptions); err != nil {
		return fmt.Errorf("%w: %v", errMalformed, err)
	}
	return nil
}
