package replay

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/finrepro/finrepro/cache"
)

// A bodyEncoding writes the strings and parameter values of a request
// body: as sent to a provider (wire), or in the canonical form its key
// hashes (keyed), which saves encoding the body and parsing it again to
// key it.
type bodyEncoding struct {
	str func(dst []byte, s string) []byte
	val func(v any) ([]byte, error)
}

var (
	wire  = &bodyEncoding{str: appendJSONString, val: jsonValue}
	keyed = &bodyEncoding{str: cache.AppendCanonicalString, val: keyedValue}
)

// keyedValue returns the canonical encoding of parameter value v. The
// encodings of numbers and booleans are kept: every call of a run
// repeats the same few parameters.
func keyedValue(v any) ([]byte, error) {
	switch v.(type) {
	case float64, int, bool:
		if b, ok := keyedScalars.Load(v); ok {
			return b.([]byte), nil
		}
	}
	b, err := jsonValue(v)
	if err != nil {
		return nil, err
	}
	if b, err = cache.AppendCanonicalValue(nil, b); err != nil {
		return nil, err
	}
	switch v.(type) {
	case float64, int, bool:
		if keyedStored.Add(1) <= maxKeyedScalars {
			keyedScalars.Store(v, b)
		}
	}
	return b, nil
}

// keyedScalars maps up to maxKeyedScalars numbers and booleans to their
// canonical encodings; keyedStored counts the stores.
var (
	keyedScalars    sync.Map
	keyedStored     atomic.Int64
	maxKeyedScalars int64 = 4096
)

// A jsonObject is a JSON object under construction. encode writes its
// members sorted by name, as encoding/json writes a map (and as the
// canonical form sorts them, for ASCII names), so a wire body built here
// has the bytes an encoding/json Encoder without HTML escaping gives the
// same map without reflection over maps of any (request building is
// part of what BenchmarkReplay/answer times). Leaving <, > and & as they are also keeps
// most prompts in their canonical form.
type jsonObject struct {
	enc     *bodyEncoding
	members []jsonMember
}

// A jsonMember is a name and what writes its value: encoded bytes, a
// string, an object or an array of objects.
type jsonMember struct {
	name  string
	value []byte
	str   string
	obj   *jsonObject
	arr   []*jsonObject
	kind  byte // 'v', 's', 'o' or 'a'
}

// has reports whether the object has a member name.
func (o *jsonObject) has(name string) bool {
	return slices.ContainsFunc(o.members, func(m jsonMember) bool { return m.name == name })
}

// set adds member name with an encoded value.
func (o *jsonObject) set(name string, value []byte) {
	o.members = append(o.members, jsonMember{name: name, value: value, kind: 'v'})
}

// setString adds member name with a string value.
func (o *jsonObject) setString(name, s string) {
	o.members = append(o.members, jsonMember{name: name, str: s, kind: 's'})
}

// setObject adds member name with an object value.
func (o *jsonObject) setObject(name string, v *jsonObject) {
	o.members = append(o.members, jsonMember{name: name, obj: v, kind: 'o'})
}

// setArray adds member name with an array of objects.
func (o *jsonObject) setArray(name string, vs []*jsonObject) {
	o.members = append(o.members, jsonMember{name: name, arr: vs, kind: 'a'})
}

// appendTo appends the object's JSON to dst, members sorted by name, in
// one pass: the strings are escaped straight into dst.
func (o *jsonObject) appendTo(dst []byte) []byte {
	slices.SortFunc(o.members, func(a, b jsonMember) int { return strings.Compare(a.name, b.name) })
	dst = append(dst, '{')
	for i, m := range o.members {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = o.enc.str(dst, m.name)
		dst = append(dst, ':')
		switch m.kind {
		case 'v':
			dst = append(dst, m.value...)
		case 's':
			dst = o.enc.str(dst, m.str)
		case 'o':
			dst = m.obj.appendTo(dst)
		case 'a':
			dst = append(dst, '[')
			for j, v := range m.arr {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = v.appendTo(dst)
			}
			dst = append(dst, ']')
		}
	}
	return append(dst, '}')
}

// jsonValue encodes v with encoding/json, without HTML escaping
// (parameters: small values of any type).
func jsonValue(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}

// appendJSONString appends s as a JSON string with exactly the escapes of
// an encoding/json Encoder without HTML escaping: \" \\ \b \f \n \r \t,
// \u00XX for other control characters, \u2028 and \u2029, and U+FFFD for
// each byte of invalid UTF-8.
func appendJSONString(out []byte, s string) []byte {
	out = slices.Grow(out, len(s)+2)
	out = append(out, '"')
	// In valid UTF-8 only a quote, a backslash, a control character and
	// the lead byte of U+2028 and U+2029 (0xE2) need a look; copy runs of
	// everything else at once.
	plain := &plainASCII
	if utf8.ValidString(s) {
		plain = &plainValid
	}
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if plain[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			out = append(out, s[start:i]...)
			out = appendEscape(out, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			out = append(out, s[start:i]...)
			out = append(out, `\ufffd`...)
			start = i + size
		case r == '\u2028' || r == '\u2029':
			out = append(out, s[start:i]...)
			out = append(out, '\\', 'u', '2', '0', '2', "0123456789abcdef"[r&0xf])
			start = i + size
		}
		i += size
	}
	out = append(out, s[start:]...)
	return append(out, '"')
}

// plainASCII marks the bytes appendJSONString copies as they are in any
// string: printable ASCII but the quote and the backslash. plainValid
// adds the bytes of multi-byte UTF-8 sequences, but 0xE2 (which starts
// U+2028 and U+2029), for strings known to be valid UTF-8.
var plainASCII, plainValid = func() (ascii, valid [256]bool) {
	for c := range 256 {
		ascii[c] = c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\'
		valid[c] = ascii[c] || c >= utf8.RuneSelf && c != 0xE2
	}
	return ascii, valid
}()

// appendEscape appends the JSON escape of ASCII byte c.
func appendEscape(out []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(out, '\\', c)
	case '\b':
		return append(out, '\\', 'b')
	case '\f':
		return append(out, '\\', 'f')
	case '\n':
		return append(out, '\\', 'n')
	case '\r':
		return append(out, '\\', 'r')
	case '\t':
		return append(out, '\\', 't')
	}
	return append(out, '\\', 'u', '0', '0', "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
}
