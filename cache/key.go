package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
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
	e := newEncoder(request, 0, "")
	defer e.free()
	if err := e.whole(); err != nil {
		return nil, err
	}
	return e.request()
}

// whole encodes the one JSON value that makes up the source, with
// nothing but white space around it.
func (e *encoder) whole() error {
	e.space()
	if err := e.value(0); err != nil {
		return err
	}
	e.space()
	if e.i != len(e.src) {
		return e.errf("", "trailing data after JSON value")
	}
	return nil
}

// request checks that the value just encoded is a request object and
// returns its canonical encoding.
func (e *encoder) request() ([]byte, error) {
	if e.out[e.val] != '{' {
		return nil, &RequestError{"", "not a JSON object"}
	}
	var provider, endpoint, body, sample bool
	for _, m := range e.members {
		enc := e.out[m.val:m.end]
		switch m.key {
		case "provider":
			provider = true
			if !isString(enc) || len(enc) == 2 {
				return nil, &RequestError{"provider", "want a non-empty string"}
			}
		case "endpoint":
			endpoint = true
			if !isString(enc) {
				return nil, &RequestError{"endpoint", "want a string"}
			}
		case "body":
			body = true
			if enc[0] != '{' {
				return nil, &RequestError{"body", "want a JSON object"}
			}
		case "sample":
			// A number's canonical form is its digits alone when it is
			// an integer, so the check is on the form itself.
			sample = true
			if _, err := strconv.ParseUint(string(enc), 10, 31); err != nil || len(enc) > 10 {
				return nil, &RequestError{"sample", "want an integer from 0 to 2147483647"}
			}
		default:
			return nil, &RequestError{m.key, "unknown field (a request holds provider, endpoint, body and sample only)"}
		}
	}
	switch {
	case !provider:
		return nil, &RequestError{"provider", "missing"}
	case !endpoint:
		return nil, &RequestError{"endpoint", "missing"}
	case !body:
		return nil, &RequestError{"body", "missing"}
	case !sample:
		// "sample" sorts after the other three fields: it goes last.
		e.out = append(e.out[:len(e.out)-1], `,"sample":0}`...)
	}
	return e.out, nil
}

// canonicalJSON strips the KeySchema line of a canonical encoding.
func canonicalJSON(c []byte) ([]byte, bool) {
	return bytes.CutPrefix(c, []byte(KeySchema+"\n"))
}

func isString(enc []byte) bool { return len(enc) >= 2 && enc[0] == '"' }

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

// An encoder is a strict JSON parser (RFC 8259) that writes the
// canonical encoding of what it reads into one buffer: every value is
// written in place, and an object whose keys are out of order is moved
// once, when it ends. Paths for errors are built only on an error.
type encoder struct {
	parser
	out     []byte
	val     int    // where the top-level value starts in out
	buf     []byte // a string's decoded bytes
	tmp     []byte // an object's members while they are put in order
	members []span // the members of the objects being read, innermost last
	path    []step // where the value being read is
	root    string // the path of the top-level value
}

// A span is an object member written in out: `"key":value` at
// [start, end), its value from val.
type span struct {
	key             string
	start, val, end int
}

// A step is one level of a path: an object key, or an array index when
// idx >= 0.
type step struct {
	key string
	idx int
}

// newEncoder returns an encoder reading src from offset i, whose output
// starts with the KeySchema line.
func newEncoder(src []byte, i int, root string) *encoder {
	e := encoders.Get().(*encoder)
	e.parser, e.root = parser{src: src, i: i}, root
	e.out = make([]byte, 0, len(KeySchema)+1+len(src)-i+16)
	e.out = append(e.out, KeySchema...)
	e.out = append(e.out, '\n')
	e.val = len(e.out)
	return e
}

// encoders keeps encoders with their scratch buffers between requests.
var encoders = sync.Pool{New: func() any { return new(encoder) }}

// free returns e to the pool; the output stays with the caller.
func (e *encoder) free() {
	if cap(e.buf) > maxScratch || cap(e.tmp) > maxScratch {
		return // a huge request's buffers are not worth keeping
	}
	*e = encoder{buf: e.buf[:0], tmp: e.tmp[:0], members: e.members[:0], path: e.path[:0]}
	encoders.Put(e)
}

// maxScratch is the largest scratch buffer an encoder keeps for reuse.
const maxScratch = 4 << 20

// where returns the path of the value being read.
func (e *encoder) where() string {
	p := e.root
	for _, s := range e.path {
		switch {
		case s.idx >= 0:
			p = fmt.Sprintf("%s[%d]", p, s.idx)
		case p == "":
			p = s.key
		default:
			p += "." + s.key
		}
	}
	return p
}

// at sets the path of an error from the parser, which has none.
func (e *encoder) at(err error) error {
	var re *RequestError
	if errors.As(err, &re) {
		re.Field = e.where()
	}
	return err
}

// value encodes one value. The members of the top-level object stay in
// e.members.
func (e *encoder) value(depth int) error {
	if depth > maxDepth {
		return e.errf(e.where(), "nested deeper than %d", maxDepth)
	}
	if e.i >= len(e.src) {
		return e.errf(e.where(), "unexpected end of input")
	}
	switch c := e.src[e.i]; {
	case c == '{':
		return e.object(depth)
	case c == '[':
		return e.array(depth)
	case c == '"':
		return e.str()
	case c == '-' || '0' <= c && c <= '9':
		n, err := e.number("")
		if err != nil {
			return e.at(err)
		}
		e.out = append(e.out, n...)
		return nil
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(e.src[e.i:], []byte(lit)) {
				e.i += len(lit)
				e.out = append(e.out, lit...)
				return nil
			}
		}
		return e.errf(e.where(), "invalid character %q", c)
	}
}

// manyMembers is the member count from which duplicate keys are found
// with a map rather than by a scan.
const manyMembers = 16

func (e *encoder) object(depth int) error {
	e.i++ // '{'
	start := len(e.out)
	e.out = append(e.out, '{')
	e.space()
	if e.i < len(e.src) && e.src[e.i] == '}' {
		e.i++
		e.out = append(e.out, '}')
		return nil
	}
	base := len(e.members)
	var seen map[string]bool
	for {
		e.space()
		if e.i >= len(e.src) || e.src[e.i] != '"' {
			return e.errf(e.where(), "want an object key")
		}
		k, err := e.parser.str("")
		if err != nil {
			return e.at(err)
		}
		e.path = append(e.path, step{key: k, idx: -1})
		if e.dup(base, k, &seen) {
			return e.errf(e.where(), "duplicate key")
		}
		e.space()
		if e.i >= len(e.src) || e.src[e.i] != ':' {
			return e.errf(e.where(), "want ':'")
		}
		e.i++
		e.space()
		if len(e.members) > base {
			e.out = append(e.out, ',')
		}
		m := span{key: k, start: len(e.out)}
		e.out = appendString(e.out, k)
		e.out = append(e.out, ':')
		m.val = len(e.out)
		if err := e.value(depth + 1); err != nil {
			return err
		}
		m.end = len(e.out)
		e.members = append(e.members, m)
		e.path = e.path[:len(e.path)-1]
		e.space()
		if e.i >= len(e.src) {
			return e.errf(e.where(), "unexpected end of input")
		}
		if e.src[e.i] == '}' {
			e.i++
			break
		}
		if e.src[e.i] != ',' {
			return e.errf(e.where(), "want ',' or '}'")
		}
		e.i++
	}
	e.order(start, e.members[base:])
	e.out = append(e.out, '}')
	if depth > 0 {
		e.members = e.members[:base]
	}
	return nil
}

// dup reports whether key k was already read in the object whose members
// start at base.
func (e *encoder) dup(base int, k string, seen *map[string]bool) bool {
	ms := e.members[base:]
	if len(ms) < manyMembers {
		for _, m := range ms {
			if m.key == k {
				return true
			}
		}
		return false
	}
	if *seen == nil {
		*seen = make(map[string]bool, 2*len(ms))
		for _, m := range ms {
			(*seen)[m.key] = true
		}
	}
	if (*seen)[k] {
		return true
	}
	(*seen)[k] = true
	return false
}

// order sorts the members ms of the object starting at start in out by
// the UTF-8 bytes of their keys, moving them when they are out of order.
func (e *encoder) order(start int, ms []span) {
	sorted := true
	for i := 1; i < len(ms) && sorted; i++ {
		sorted = ms[i-1].key < ms[i].key
	}
	if sorted {
		return
	}
	off := start + 1
	e.tmp = append(e.tmp[:0], e.out[off:]...)
	slices.SortFunc(ms, func(a, b span) int { return strings.Compare(a.key, b.key) })
	e.out = e.out[:off]
	for j, m := range ms {
		if j > 0 {
			e.out = append(e.out, ',')
		}
		at := len(e.out)
		e.out = append(e.out, e.tmp[m.start-off:m.end-off]...)
		ms[j] = span{key: m.key, start: at, val: at + m.val - m.start, end: len(e.out)}
	}
}

func (e *encoder) array(depth int) error {
	e.i++ // '['
	e.out = append(e.out, '[')
	e.space()
	if e.i < len(e.src) && e.src[e.i] == ']' {
		e.i++
		e.out = append(e.out, ']')
		return nil
	}
	for n := 0; ; n++ {
		e.space()
		if n > 0 {
			e.out = append(e.out, ',')
		}
		e.path = append(e.path, step{idx: n})
		if err := e.value(depth + 1); err != nil {
			return err
		}
		e.path = e.path[:len(e.path)-1]
		e.space()
		if e.i >= len(e.src) {
			return e.errf(e.where(), "unexpected end of input")
		}
		if e.src[e.i] == ']' {
			e.i++
			e.out = append(e.out, ']')
			return nil
		}
		if e.src[e.i] != ',' {
			return e.errf(e.where(), "want ',' or ']'")
		}
		e.i++
	}
}

// plain scans the string literal whose content starts at start and
// reports where its closing quote is when the literal is ASCII and holds
// only the escapes appendString writes, except \u00xx.
func (e *encoder) plain(start int) (end int, ok bool) {
	for j := start; j < len(e.src); j++ {
		switch c := e.src[j]; {
		case c == '"':
			return j, true
		case c < 0x20 || c >= 0x80:
			return 0, false
		case c == '\\':
			if j+1 >= len(e.src) {
				return 0, false
			}
			switch e.src[j+1] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
				j++
			default:
				return 0, false
			}
		}
	}
	return 0, false
}

// str encodes a string literal: its NFC value, escaped as appendString
// does. A literal that is already in that form is copied as it is.
func (e *encoder) str() error {
	e.i++ // '"'
	start := e.i
	for e.i < len(e.src) {
		c := e.src[e.i]
		if c == '"' {
			s := e.src[start:e.i]
			e.i++
			if !utf8.Valid(s) {
				return e.errf(e.where(), "invalid UTF-8 in string")
			}
			if isNFC(s) {
				// no quote, backslash or control character to escape
				e.out = append(e.out, '"')
				e.out = append(e.out, s...)
				e.out = append(e.out, '"')
			} else {
				e.out = appendString(e.out, norm.NFC.String(string(s)))
			}
			return nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		e.i++
	}
	// An ASCII literal whose escapes are all ones appendString writes is
	// its own canonical form: no need to decode it.
	if end, ok := e.plain(start); ok {
		e.out = append(e.out, e.src[start-1:end+1]...)
		e.i = end + 1
		return nil
	}
	// canon: every escape so far is the one appendString writes
	canon := true
	buf := append(e.buf[:0], e.src[start:e.i]...)
	defer func() { e.buf = buf[:0] }()
	for e.i < len(e.src) {
		j := e.i
		for j < len(e.src) && e.src[j] >= 0x20 && e.src[j] != '"' && e.src[j] != '\\' {
			j++
		}
		buf = append(buf, e.src[e.i:j]...)
		e.i = j
		if e.i >= len(e.src) {
			break
		}
		switch c := e.src[e.i]; {
		case c == '"':
			lit := e.src[start:e.i]
			e.i++
			if !utf8.Valid(buf) {
				return e.errf(e.where(), "invalid UTF-8 in string")
			}
			switch {
			case !isNFC(buf):
				e.out = appendString(e.out, norm.NFC.String(string(buf)))
			case canon:
				e.out = append(e.out, '"')
				e.out = append(e.out, lit...)
				e.out = append(e.out, '"')
			default:
				e.out = appendString(e.out, string(buf))
			}
			return nil
		case c < 0x20:
			return e.errf(e.where(), "control character in string")
		}
		e.i++ // '\\'
		if e.i >= len(e.src) {
			break
		}
		x := e.src[e.i]
		e.i++
		switch x {
		case '"', '\\':
			buf = append(buf, x)
		case '/':
			buf, canon = append(buf, x), false
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
			canon = false
			r, ok := e.hex4()
			if !ok {
				return e.errf(e.where(), "bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				if r >= 0xdc00 || !bytes.HasPrefix(e.src[e.i:], []byte(`\u`)) {
					return e.errf(e.where(), "lone surrogate in \\u escape")
				}
				e.i += 2
				r2, ok := e.hex4()
				if !ok {
					return e.errf(e.where(), "bad \\u escape")
				}
				r = utf16.DecodeRune(r, r2)
				if r == utf8.RuneError {
					return e.errf(e.where(), "lone surrogate in \\u escape")
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return e.errf(e.where(), "bad escape \\%c", x)
		}
	}
	return e.errf(e.where(), "unterminated string")
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
	if isNFC(b) {
		return string(b)
	}
	return string(norm.NFC.Bytes(b))
}

// isNFC reports whether b, valid UTF-8, is in Unicode NFC.
func isNFC(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return norm.NFC.IsNormal(b)
		}
	}
	return true
}

// needsEscape reports the bytes appendString escapes.
var needsEscape = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// appendString appends s as a JSON string: only '"', '\\' and control
// characters are escaped; control characters use the short escapes where
// JSON has them and \u00xx (lower-case hex) otherwise. Byte-slice callers
// convert: they are the rare strings that need normalising or re-escaping.
func appendString(out []byte, s string) []byte {
	const hexdig = "0123456789abcdef"
	out = append(out, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !needsEscape[c] {
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
