package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// KeySchema is the first line of every canonical request encoding. It
// changes whenever the encoding rules change, so that keys of different
// schemas never collide. See docs/keys.md.
const KeySchema = "finrepro-key/1"

// MaxRequestBytes caps the size of a request object, so that a hostile
// input cannot make the encoder allocate without bound.
const MaxRequestBytes = 64 << 20

// maxDepth caps the nesting of JSON values in a request.
const maxDepth = 200

// maxExpDigits caps the digits of a number's exponent: larger exponents
// would make the normal form enormous.
const maxExpDigits = 6

// ParseKey parses a key in the 64-digit lower-case hex form String prints.
func ParseKey(s string) (Key, error) {
	var k Key
	if err := parseHex(k[:], s); err != nil {
		return k, fmt.Errorf("cache: parse key %q: %w", s, err)
	}
	return k, nil
}

// String returns the digest in hex.
func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// Str returns the first 8 hex digits, for messages.
func (d Digest) Str() string { return d.String()[:8] }

// ParseDigest parses a digest in the 64-digit lower-case hex form.
func ParseDigest(s string) (Digest, error) {
	var d Digest
	if err := parseHex(d[:], s); err != nil {
		return d, fmt.Errorf("cache: parse digest %q: %w", s, err)
	}
	return d, nil
}

func parseHex(dst []byte, s string) error {
	if len(s) != 2*len(dst) {
		return fmt.Errorf("want %d hex digits", 2*len(dst))
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return errors.New("not lower-case hex")
		}
	}
	_, err := hex.Decode(dst, []byte(s))
	return err
}

// KeyOf returns the key of a request object: the SHA-256 of Canonical.
func KeyOf(request []byte) (Key, error) {
	c, err := Canonical(request)
	if err != nil {
		return Key{}, err
	}
	return sha256.Sum256(c), nil
}

// A RequestError is a request object that has no canonical form. Field is
// the JSON path of the offending value ("body.messages[2].content"),
// empty when the whole object is at fault.
type RequestError struct {
	Field string
	Msg   string
}

func (e *RequestError) Error() string {
	if e.Field == "" {
		return "cache: request: " + e.Msg
	}
	return "cache: request: " + e.Field + ": " + e.Msg
}

// Canonical returns the versioned canonical encoding of a request object
// {"provider": ..., "endpoint": ..., "body": {...}, "sample": N}: the
// KeySchema line, a newline, then the object as JSON with sorted keys, no
// insignificant whitespace, numbers in one normal form, strings in Unicode
// NFC and "sample" always present. Other top-level fields are refused, so
// that headers, API keys, timeouts and base URLs never reach a key.
func Canonical(request []byte) ([]byte, error) {
	if len(request) > MaxRequestBytes {
		return nil, &RequestError{"", fmt.Sprintf("larger than %d bytes", MaxRequestBytes)}
	}
	p := &parser{src: request}
	p.space()
	v, err := p.value(0, "")
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.src) {
		return nil, p.errf("", "trailing data after JSON value")
	}
	return canonicalRequest(v)
}

// canonicalRequest checks a parsed request object and encodes it.
func canonicalRequest(v any) ([]byte, error) {
	obj, ok := v.(object)
	if !ok {
		return nil, &RequestError{"", "not a JSON object"}
	}
	var provider, endpoint, body, sample []byte
	for _, m := range obj {
		switch m.key {
		case "provider":
			provider = m.enc
			if !isString(m.enc) || len(m.enc) == 2 {
				return nil, &RequestError{"provider", "want a non-empty string"}
			}
		case "endpoint":
			endpoint = m.enc
			if !isString(m.enc) {
				return nil, &RequestError{"endpoint", "want a string"}
			}
		case "body":
			body = m.enc
			if m.enc[0] != '{' {
				return nil, &RequestError{"body", "want a JSON object"}
			}
		case "sample":
			sample = m.enc
			if n, err := strconv.ParseUint(string(m.enc), 10, 31); err != nil || len(m.enc) > 10 {
				return nil, &RequestError{"sample", "want an integer from 0 to 2147483647"}
			} else {
				sample = strconv.AppendUint(nil, n, 10)
			}
		default:
			return nil, &RequestError{m.key, "unknown field (a request holds provider, endpoint, body and sample only)"}
		}
	}
	switch {
	case provider == nil:
		return nil, &RequestError{"provider", "missing"}
	case endpoint == nil:
		return nil, &RequestError{"endpoint", "missing"}
	case body == nil:
		return nil, &RequestError{"body", "missing"}
	case sample == nil:
		sample = []byte("0")
	}
	out := make([]byte, 0, len(KeySchema)+len(body)+len(provider)+len(endpoint)+48)
	out = append(out, KeySchema...)
	out = append(out, "\n{\"body\":"...)
	out = append(out, body...)
	out = append(out, ",\"endpoint\":"...)
	out = append(out, endpoint...)
	out = append(out, ",\"provider\":"...)
	out = append(out, provider...)
	out = append(out, ",\"sample\":"...)
	out = append(out, sample...)
	out = append(out, '}')
	return out, nil
}

// canonicalJSON strips the KeySchema line of a canonical encoding.
func canonicalJSON(c []byte) ([]byte, bool) {
	return bytes.CutPrefix(c, []byte(KeySchema+"\n"))
}

func isString(enc []byte) bool { return len(enc) >= 2 && enc[0] == '"' }

// object is a parsed JSON object: members with their canonical encodings.
type object []member

type member struct {
	key string // NFC
	enc []byte // canonical encoding of the value
}

// parser is a strict JSON parser (RFC 8259) that produces the canonical
// encoding of each value as it goes.
type parser struct {
	src []byte
	i   int
}

func (p *parser) errf(field, format string, args ...any) error {
	return &RequestError{field, fmt.Sprintf("offset %d: ", p.i) + fmt.Sprintf(format, args...)}
}

func (p *parser) space() {
	for p.i < len(p.src) {
		switch p.src[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// value parses one value. The result is an object for objects (so that the
// caller can inspect the top level) and its []byte encoding otherwise.
func (p *parser) value(depth int, path string) (any, error) {
	if depth > maxDepth {
		return nil, p.errf(path, "nested deeper than %d", maxDepth)
	}
	if p.i >= len(p.src) {
		return nil, p.errf(path, "unexpected end of input")
	}
	switch c := p.src[p.i]; {
	case c == '{':
		return p.object(depth, path)
	case c == '[':
		return p.array(depth, path)
	case c == '"':
		s, err := p.str(path)
		if err != nil {
			return nil, err
		}
		return appendString(nil, s), nil
	case c == '-' || '0' <= c && c <= '9':
		return p.number(path)
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(p.src[p.i:], []byte(lit)) {
				p.i += len(lit)
				return []byte(lit), nil
			}
		}
		return nil, p.errf(path, "invalid character %q", c)
	}
}

func (p *parser) object(depth int, path string) (object, error) {
	p.i++ // '{'
	obj := object{}
	p.space()
	if p.i < len(p.src) && p.src[p.i] == '}' {
		p.i++
		return obj, nil
	}
	seen := map[string]bool{}
	for {
		p.space()
		if p.i >= len(p.src) || p.src[p.i] != '"' {
			return nil, p.errf(path, "want an object key")
		}
		k, err := p.str(path)
		if err != nil {
			return nil, err
		}
		sub := k
		if path != "" {
			sub = path + "." + k
		}
		if seen[k] {
			return nil, p.errf(sub, "duplicate key")
		}
		seen[k] = true
		p.space()
		if p.i >= len(p.src) || p.src[p.i] != ':' {
			return nil, p.errf(sub, "want ':'")
		}
		p.i++
		p.space()
		v, err := p.value(depth+1, sub)
		if err != nil {
			return nil, err
		}
		obj = append(obj, member{k, encode(v)})
		p.space()
		if p.i >= len(p.src) {
			return nil, p.errf(path, "unexpected end of input")
		}
		if p.src[p.i] == '}' {
			p.i++
			break
		}
		if p.src[p.i] != ',' {
			return nil, p.errf(path, "want ',' or '}'")
		}
		p.i++
	}
	sortMembers(obj)
	return obj, nil
}

// sortMembers sorts by the UTF-8 bytes of the keys (insertion sort for
// the usual small objects, else a library sort).
func sortMembers(obj object) {
	for i := 1; i < len(obj); i++ {
		for j := i; j > 0 && obj[j].key < obj[j-1].key; j-- {
			obj[j], obj[j-1] = obj[j-1], obj[j]
		}
	}
}

func encode(v any) []byte {
	obj, ok := v.(object)
	if !ok {
		return v.([]byte)
	}
	n := 2
	for _, m := range obj {
		n += len(m.key) + len(m.enc) + 4
	}
	out := make([]byte, 0, n)
	out = append(out, '{')
	for i, m := range obj {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendString(out, m.key)
		out = append(out, ':')
		out = append(out, m.enc...)
	}
	return append(out, '}')
}

func (p *parser) array(depth int, path string) ([]byte, error) {
	p.i++ // '['
	out := []byte{'['}
	p.space()
	if p.i < len(p.src) && p.src[p.i] == ']' {
		p.i++
		return append(out, ']'), nil
	}
	for n := 0; ; n++ {
		p.space()
		v, err := p.value(depth+1, fmt.Sprintf("%s[%d]", path, n))
		if err != nil {
			return nil, err
		}
		if n > 0 {
			out = append(out, ',')
		}
		out = append(out, encode(v)...)
		p.space()
		if p.i >= len(p.src) {
			return nil, p.errf(path, "unexpected end of input")
		}
		if p.src[p.i] == ']' {
			p.i++
			return append(out, ']'), nil
		}
		if p.src[p.i] != ',' {
			return nil, p.errf(path, "want ',' or ']'")
		}
		p.i++
	}
}

// str parses a string literal and returns its NFC value.
func (p *parser) str(path string) (string, error) {
	p.i++ // '"'
	start := p.i
	// Fast path: no escapes, ASCII or valid UTF-8 without control bytes.
	for p.i < len(p.src) {
		c := p.src[p.i]
		if c == '"' {
			s := p.src[start:p.i]
			p.i++
			if !utf8.Valid(s) {
				return "", p.errf(path, "invalid UTF-8 in string")
			}
			return nfc(s), nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		p.i++
	}
	buf := append([]byte(nil), p.src[start:p.i]...)
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch {
		case c == '"':
			p.i++
			if !utf8.Valid(buf) {
				return "", p.errf(path, "invalid UTF-8 in string")
			}
			return nfc(buf), nil
		case c < 0x20:
			return "", p.errf(path, "control character in string")
		case c != '\\':
			buf = append(buf, c)
			p.i++
			continue
		}
		p.i++
		if p.i >= len(p.src) {
			break
		}
		e := p.src[p.i]
		p.i++
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", p.errf(path, "bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				if r >= 0xdc00 || !bytes.HasPrefix(p.src[p.i:], []byte(`\u`)) {
					return "", p.errf(path, "lone surrogate in \\u escape")
				}
				p.i += 2
				r2, ok := p.hex4()
				if !ok {
					return "", p.errf(path, "bad \\u escape")
				}
				r = utf16.DecodeRune(r, r2)
				if r == utf8.RuneError {
					return "", p.errf(path, "lone surrogate in \\u escape")
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", p.errf(path, "bad escape \\%c", e)
		}
	}
	return "", p.errf(path, "unterminated string")
}

func (p *parser) hex4() (rune, bool) {
	if p.i+4 > len(p.src) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(p.src[p.i:p.i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(n), true
}

func nfc(b []byte) string {
	ascii := true
	for _, c := range b {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii || norm.NFC.IsNormal(b) {
		return string(b)
	}
	return string(norm.NFC.Bytes(b))
}

// appendString appends s as a JSON string: only '"', '\\' and control
// characters are escaped; control characters use the short escapes where
// JSON has them and \u00xx (lower-case hex) otherwise.
func appendString(out []byte, s string) []byte {
	const hexdig = "0123456789abcdef"
	out = append(out, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		out = append(out, s[start:i]...)
		switch c {
		case '"', '\\':
			out = append(out, '\\', c)
		case '\b':
			out = append(out, '\\', 'b')
		case '\f':
			out = append(out, '\\', 'f')
		case '\n':
			out = append(out, '\\', 'n')
		case '\r':
			out = append(out, '\\', 'r')
		case '\t':
			out = append(out, '\\', 't')
		default:
			out = append(out, '\\', 'u', '0', '0', hexdig[c>>4], hexdig[c&15])
		}
		start = i + 1
	}
	out = append(out, s[start:]...)
	return append(out, '"')
}

// number parses a JSON number and returns its normal form: the exact
// decimal value (no rounding) written without a fraction or exponent when
// it is an integer of at most 21 digits, as 0.000ddd or ddd.ddd when its
// decimal point falls within 6 places before the first digit or 21 after,
// and as d.ddde±x otherwise. Trailing fraction zeros, leading zeros and
// the sign of zero are dropped: 1, 1.0, 10e-1 and 0.1E1 all become "1".
func (p *parser) number(path string) ([]byte, error) {
	start := p.i
	neg := false
	if p.src[p.i] == '-' {
		neg = true
		p.i++
	}
	var digits []byte
	exp := 0
	switch {
	case p.i < len(p.src) && p.src[p.i] == '0':
		p.i++
	case p.i < len(p.src) && '1' <= p.src[p.i] && p.src[p.i] <= '9':
		for p.i < len(p.src) && '0' <= p.src[p.i] && p.src[p.i] <= '9' {
			digits = append(digits, p.src[p.i])
			p.i++
		}
	default:
		return nil, p.errf(path, "bad number")
	}
	if p.i < len(p.src) && p.src[p.i] == '.' {
		p.i++
		n := 0
		for p.i < len(p.src) && '0' <= p.src[p.i] && p.src[p.i] <= '9' {
			digits = append(digits, p.src[p.i])
			p.i++
			n++
		}
		if n == 0 {
			return nil, p.errf(path, "bad number")
		}
		exp -= n
	}
	if p.i < len(p.src) && (p.src[p.i] == 'e' || p.src[p.i] == 'E') {
		p.i++
		eneg := false
		if p.i < len(p.src) && (p.src[p.i] == '+' || p.src[p.i] == '-') {
			eneg = p.src[p.i] == '-'
			p.i++
		}
		es := p.i
		for p.i < len(p.src) && '0' <= p.src[p.i] && p.src[p.i] <= '9' {
			p.i++
		}
		ed := bytes.TrimLeft(p.src[es:p.i], "0")
		if p.i == es {
			return nil, p.errf(path, "bad number")
		}
		if len(ed) > maxExpDigits {
			return nil, p.errf(path, "number %s: exponent too large", p.src[start:p.i])
		}
		e, _ := strconv.Atoi("0" + string(ed)) // at most 6 digits: cannot fail
		if eneg {
			e = -e
		}
		exp += e
	}
	// Normalise the coefficient: no leading or trailing zeros.
	digits = bytes.TrimLeft(digits, "0")
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	if len(digits) == 0 {
		return []byte("0"), nil
	}
	var out []byte
	if neg {
		out = append(out, '-')
	}
	k := len(digits) + exp // position of the decimal point
	switch {
	case exp >= 0 && k <= 21:
		out = append(out, digits...)
		out = append(out, bytes.Repeat([]byte("0"), exp)...)
	case 0 < k && k <= 21:
		out = append(out, digits[:k]...)
		out = append(out, '.')
		out = append(out, digits[k:]...)
	case -6 < k && k <= 0:
		out = append(out, "0."...)
		out = append(out, bytes.Repeat([]byte("0"), -k)...)
		out = append(out, digits...)
	default:
		out = append(out, digits[0])
		if len(digits) > 1 {
			out = append(out, '.')
			out = append(out, digits[1:]...)
		}
		out = append(out, 'e')
		if k-1 >= 0 {
			out = append(out, '+')
		}
		out = strconv.AppendInt(out, int64(k-1), 10)
	}
	return out, nil
}

// skip checks one JSON value without encoding it.
func (p *parser) skip(depth int, path string) error {
	if depth > maxDepth {
		return p.errf(path, "nested deeper than %d", maxDepth)
	}
	if p.i >= len(p.src) {
		return p.errf(path, "unexpected end of input")
	}
	switch c := p.src[p.i]; {
	case c == '{' || c == '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		p.i++
		p.space()
		if p.i < len(p.src) && p.src[p.i] == end {
			p.i++
			return nil
		}
		for {
			p.space()
			if c == '{' {
				if p.i >= len(p.src) || p.src[p.i] != '"' {
					return p.errf(path, "want an object key")
				}
				if err := p.skipString(path); err != nil {
					return err
				}
				p.space()
				if p.i >= len(p.src) || p.src[p.i] != ':' {
					return p.errf(path, "want ':'")
				}
				p.i++
				p.space()
			}
			if err := p.skip(depth+1, path); err != nil {
				return err
			}
			p.space()
			if p.i >= len(p.src) {
				return p.errf(path, "unexpected end of input")
			}
			if p.src[p.i] == end {
				p.i++
				return nil
			}
			if p.src[p.i] != ',' {
				return p.errf(path, "want ',' or '%c'", end)
			}
			p.i++
		}
	case c == '"':
		return p.skipString(path)
	case c == '-' || '0' <= c && c <= '9':
		_, err := p.number(path)
		return err
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(p.src[p.i:], []byte(lit)) {
				p.i += len(lit)
				return nil
			}
		}
		return p.errf(path, "invalid character %q", c)
	}
}

// skipString checks a string literal: valid escapes, no control
// characters, valid UTF-8.
func (p *parser) skipString(path string) error {
	p.i++ // '"'
	start := p.i
	for p.i < len(p.src) {
		switch c := p.src[p.i]; {
		case c == '"':
			if !utf8.Valid(p.src[start:p.i]) {
				return p.errf(path, "invalid UTF-8 in string")
			}
			p.i++
			return nil
		case c < 0x20:
			return p.errf(path, "control character in string")
		case c == '\\':
			p.i++
			if p.i >= len(p.src) {
				return p.errf(path, "unterminated string")
			}
			switch p.src[p.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.i++
			case 'u':
				p.i++
				if _, ok := p.hex4(); !ok {
					return p.errf(path, "bad \\u escape")
				}
			default:
				return p.errf(path, "bad escape")
			}
		default:
			p.i++
		}
	}
	return p.errf(path, "unterminated string")
}
