// Package cache is finrepro's content-addressed, zstd-compressed store of
// recorded exchanges, so that benchmark runs replay offline byte for byte.
//
// An exchange is found by the Key of its request: the SHA-256 of the
// request's canonical encoding (package cache/reqkey). Its request and
// response are objects named by the Digest (SHA-256) of their uncompressed
// bytes; identical responses are stored once (in format 2, once per pack
// until gc or a merge joins the packs). Objects and records live in
// immutable pack files written with temp file, fsync, rename and fsync of
// the folder, so several processes can write one store without a lock and
// a crash leaves whole files only. Reads re-hash every object, but those
// of packs whose whole file has just been checked against its name (unless
// in verify mode): corrupt data is reported (ErrCorrupt) and never served.
// docs/cache.md specifies the
// layout byte by byte.
package cache

import (
	"encoding/json"
	"errors"

	"github.com/finrepro/finrepro/cache/reqkey"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// A Key identifies a request: the SHA-256 of its canonical encoding, by
// the rule of package reqkey.
type Key = reqkey.Key

// A Digest identifies stored content: the SHA-256 of the uncompressed object.
type Digest [32]byte

// String returns the digest in hex.
func (d Digest) String() string { return Key(d).String() }

// Str returns the first 8 hex digits, for messages.
func (d Digest) Str() string { return d.String()[:8] }

// Meta is what is known about an exchange besides request and response.
type Meta struct {
	Provider      string  `json:"provider"`
	Model         string  `json:"model"`                    // requested model
	ReportedModel string  `json:"reported_model,omitempty"` // what the provider said it ran
	InputTokens   int     `json:"input_tokens,omitempty"`
	OutputTokens  int     `json:"output_tokens,omitempty"`
	CostUSD       float64 `json:"cost_usd,omitempty"`
	LatencyMS     int64   `json:"latency_ms,omitempty"`
	RecordedAt    string  `json:"recorded_at,omitempty"` // RFC 3339, UTC
	Attempts      int     `json:"attempts,omitempty"`
	Source        string  `json:"source"` // "api", "batch", "import" or "sim"
	// Headers are provenance response headers (request ids, processing
	// time, rate limits) as "name: value" lines sorted by name; never
	// credentials, and never part of the key.
	Headers string `json:"headers,omitempty"`
	// BatchID is the provider's id of the batch an exchange of source
	// "batch" was recorded in.
	BatchID string `json:"batch_id,omitempty"`
}

// An Exchange is one request, its response and metadata.
type Exchange struct {
	Request  json.RawMessage `json:"request"`
	Response json.RawMessage `json:"response"`
	Meta     Meta            `json:"meta"`
}

// ErrNotFound is returned by Get for a key that is not stored.
var ErrNotFound = errors.New("cache: not found")

// DecodeOptions make go-json-experiment's Unmarshal read what
// encoding/json reads (names match regardless of case but not of
// underscores, a repeated name keeps the last value, invalid UTF-8
// becomes U+FFFD): the options of every stored meta and response
// finrepro decodes.
var DecodeOptions = jsonv2.JoinOptions(
	jsonv2.MatchCaseInsensitiveNames(true),
	jsonv1.MatchCaseSensitiveDelimiter(true),
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
)

// decodeMeta decodes the JSON of a meta into m.
func decodeMeta(b []byte, m *Meta) error { return jsonv2.Unmarshal(b, m, DecodeOptions) }
