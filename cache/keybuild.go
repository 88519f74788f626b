package cache

import (
	"crypto/sha256"
	"fmt"
	"strconv"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The functions here build a canonical request encoding from values
// instead of parsing JSON, for callers that make requests themselves: a
// request built with them has exactly the key KeyOf gives its JSON, at a
// fraction of the cost (the replay tests hold the two together).

// AppendCanonicalString appends to dst the canonical encoding of the JSON
// string that a JSON encoder writes for s: s with each byte of invalid
// UTF-8 replaced by U+FFFD (as encoding/json replaces it), in NFC, with
// the escapes Canonical writes.
func AppendCanonicalString(dst []byte, s string) []byte {
	if !utf8.ValidString(s) {
		b := make([]byte, 0, len(s)+8)
		for i := 0; i < len(s); {
			r, size := utf8.DecodeRuneInString(s[i:])
			b = utf8.AppendRune(b, r) // RuneError for an invalid byte
			i += size
		}
		s = string(b)
	}
	if !isNFCString(s) {
		s = norm.NFC.String(s)
	}
	return appendString(dst, s)
}

// AppendCanonicalValue appends to dst the canonical encoding of the JSON
// value v.
func AppendCanonicalValue(dst, v []byte) ([]byte, error) {
	e := newEncoder(v, 0, "")
	defer e.free()
	if err := e.whole(); err != nil {
		return nil, err
	}
	return append(dst, e.out[e.val:]...), nil
}

// RequestKey returns the key of the request {"provider": provider,
// "endpoint": endpoint, "body": ..., "sample": sample}, where body appends
// the canonical encoding of a JSON object (built with
// AppendCanonicalString and AppendCanonicalValue, members sorted by the
// bytes of their names) to its argument. It checks what Canonical checks
// of the fields, and reuses its buffers between calls.
func RequestKey(provider, endpoint string, sample int, body func(dst []byte) []byte) (Key, error) {
	switch {
	case provider == "":
		return Key{}, &RequestError{"provider", "want a non-empty string"}
	case sample < 0 || sample > 1<<31-1:
		return Key{}, &RequestError{"sample", "want an integer from 0 to 2147483647"}
	}
	bp := keyBuffers.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= maxScratch {
			keyBuffers.Put(bp)
		}
	}()
	b := append((*bp)[:0], KeySchema+"\n"+`{"body":`...)
	at := len(b)
	b = body(b)
	if len(b) == at || b[at] != '{' {
		return Key{}, &RequestError{"body", "want a JSON object"}
	}
	b = append(b, `,"endpoint":`...)
	b = AppendCanonicalString(b, endpoint)
	b = append(b, `,"provider":`...)
	b = AppendCanonicalString(b, provider)
	b = append(b, `,"sample":`...)
	b = strconv.AppendInt(b, int64(sample), 10)
	b = append(b, '}')
	*bp = b
	if len(b) > MaxRequestBytes {
		return Key{}, &RequestError{"", fmt.Sprintf("larger than %d bytes", MaxRequestBytes)}
	}
	return sha256.Sum256(b), nil
}

// keyBuffers keeps RequestKey's buffers between calls.
var keyBuffers = sync.Pool{New: func() any { return new([]byte) }}

// isNFCString is isNFC for a string.
func isNFCString(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return norm.NFC.IsNormalString(s)
		}
	}
	return true
}
