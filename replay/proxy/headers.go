package proxy

import (
	"net/http"
	"slices"
	"strings"
)

// hopByHop reports whether a header belongs to one connection only.
func hopByHop(name string) bool {
	switch http.CanonicalHeaderKey(name) {
	case "Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer",
		"Transfer-Encoding", "Upgrade", "Proxy-Connection":
		return true
	}
	return false
}

// copyRequestHeaders copies the client's headers to an upstream request,
// credentials included, except the connection's own, the proxy's and
// Accept-Encoding (the transport negotiates compression itself, so that
// the bytes stored are the bytes meant).
func copyRequestHeaders(dst, src http.Header) {
	for k, vs := range src {
		switch {
		case hopByHop(k), strings.EqualFold(k, "Host"), strings.EqualFold(k, "Content-Length"),
			strings.EqualFold(k, "Accept-Encoding"), strings.HasPrefix(http.CanonicalHeaderKey(k), "X-Finrepro-"):
			continue
		}
		dst[k] = slices.Clone(vs)
	}
}

// provenanceHeaders are the response headers kept in an exchange's meta
// and replayed with it: its type, request ids, processing time and the
// rate limits reported. Nothing else (no cookie, no organisation id).
var provenanceHeaders = []string{"Content-Type", "X-Request-Id", "Request-Id", "Openai-Processing-Ms", "Openai-Version", "Anthropic-Version"}

// provenancePrefixes extend provenanceHeaders by name prefix.
var provenancePrefixes = []string{"X-Ratelimit-", "Anthropic-Ratelimit-"}

// provenance returns the provenance headers of h as "name: value" lines
// sorted by name, with the names in lower case.
func provenance(h http.Header) string {
	var lines []string
	for k, vs := range h {
		ck := http.CanonicalHeaderKey(k)
		keep := slices.Contains(provenanceHeaders, ck)
		for _, p := range provenancePrefixes {
			keep = keep || strings.HasPrefix(ck, p)
		}
		if !keep || len(vs) == 0 {
			continue
		}
		v := strings.Map(func(r rune) rune {
			if r == '\r' || r == '\n' {
				return ' '
			}
			return r
		}, vs[0])
		lines = append(lines, strings.ToLower(ck)+": "+v)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// setHeaders sets the headers of provenance lines on h.
func setHeaders(h http.Header, lines string) {
	for line := range strings.SplitSeq(lines, "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok {
			h.Set(k, v)
		}
	}
}
