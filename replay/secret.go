package replay

import (
	"bytes"
	"cmp"
	"regexp"
	"slices"
	"strings"
)

// Redacted replaces a secret in every message.
const Redacted = "[REDACTED]"

// minSecret is the shortest key value treated as a secret: shorter values
// ("x", "none" for local servers) would redact ordinary text.
const minSecret = 8

// AddSecret adds a credential value (8 bytes or longer) to those the
// client removes from every message it writes.
func (c *Client) AddSecret(s string) { c.addSecret(s) }

// Redact removes the known credential values and key= query parameters
// from s.
func (c *Client) Redact(s string) string { return c.redact(s) }

func (c *Client) addSecret(s string) {
	if len(s) < minSecret {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !slices.Contains(c.secrets, s) {
		c.secrets = append(c.secrets, s)
	}
}

// findSecret reports whether a known key value appears in any of bs.
func (c *Client) findSecret(bs ...[]byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.secrets {
		for _, b := range bs {
			if bytes.Contains(b, []byte(s)) {
				return true
			}
		}
	}
	return false
}

var keyParam = regexp.MustCompile(`(?i)((?:api[_-]?)?key=)[^&\s"']+`)

// redact removes known key values and key= query parameters from s.
func (c *Client) redact(s string) string {
	c.mu.Lock()
	secrets := slices.Clone(c.secrets)
	c.mu.Unlock()
	for _, k := range secrets {
		s = strings.ReplaceAll(s, k, Redacted)
	}
	return keyParam.ReplaceAllString(s, "${1}"+Redacted)
}

// secretPatterns match the shapes of common provider API keys and of
// credentials in headers or URLs.
var secretPatterns = []*regexp.Regexp{
	regexp.MustCompile(`sk-(?:proj-|ant-|or-)?[A-Za-z0-9_\-]{20,}`), // OpenAI, Anthropic, OpenRouter, DeepSeek, Kimi
	regexp.MustCompile(`AIza[0-9A-Za-z_\-]{35}`),                    // Google
	regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9_\-\.=]{20,}`),     // Authorization header values
	regexp.MustCompile(`(?i)[?&]key=[A-Za-z0-9_\-]{20,}`),           // key= query parameters
}

// A SecretMatch is a likely credential found by ScanSecrets.
type SecretMatch struct {
	// Offset is the byte offset of the match.
	Offset int
	// Kind says which pattern or value matched; the secret itself is never
	// returned.
	Kind string
}

// ScanSecrets looks for the given key values and for strings shaped like
// provider API keys in b. Export and bundle creation refuse data with a
// match.
func ScanSecrets(b []byte, values ...string) []SecretMatch {
	var out []SecretMatch
	for _, v := range values {
		if len(v) < minSecret {
			continue
		}
		if i := bytes.Index(b, []byte(v)); i >= 0 {
			out = append(out, SecretMatch{Offset: i, Kind: "configured API key"})
		}
	}
	kinds := []string{"API key shape", "Google API key shape", "bearer token", "key= query parameter"}
	for i, re := range secretPatterns {
		if loc := re.FindIndex(b); loc != nil {
			out = append(out, SecretMatch{Offset: loc[0], Kind: kinds[i]})
		}
	}
	slices.SortFunc(out, func(a, b SecretMatch) int { return cmp.Or(a.Offset-b.Offset, strings.Compare(a.Kind, b.Kind)) })
	return out
}

// KeyValues returns the values of the API-key variables of providers (the
// defaults overridden by providers) that getenv knows, for ScanSecrets.
func KeyValues(getenv func(string) string, providers ...map[string]ProviderConfig) []string {
	var out []string
	for _, pc := range mergeProviders(providers...) {
		if pc.KeyEnv == "" {
			continue
		}
		if v := getenv(pc.KeyEnv); len(v) >= minSecret && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}
