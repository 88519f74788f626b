package reqkey

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/text/unicode/norm"
)

// Schema is the first line of every canonical request encoding. It
// changes whenever the encoding rules change, so that keys of different
// schemas never collide. See the package comment.
const Schema = "finrepro-key/1"

// MaxRequestBytes caps the size of a request object, so that a hostile
// input cannot make the encoder allocate without bound.
const MaxRequestBytes = 64 << 20

// maxDepth caps the nesting of JSON values in a request.
const maxDepth = 200

// maxExpDigits caps the digits of a number's exponent: larger exponents
// would make the normal form enormous.
const maxExpDigits = 6

// A Key identifies a request: the SHA-256 of its canonical encoding.
type Key [32]byte

// String returns the key in hex.
func (k Key) String() string { return hex.EncodeToString(k[:]) }

// Str returns the first 8 hex digits, for messages.
func (k Key) Str() string { return k.String()[:8] }

// Parse parses a key in the 64-digit lower-case hex form String prints.
func Parse(s string) (Key, error) {
	var k Key
	if err := parseHex(k[:], s); err != nil {
		return k, fmt.Errorf("cache: parse key %q: %w", s, err)
	}
	return k, nil
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

// Of returns the key of a request object: the SHA-256 of Canonical.
func Of(request []byte) (Key, error) {
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
// Schema line, a newline, then the object as JSON with sorted keys, no
// insignificant whitespace, numbers in one normal form, strings in Unicode
// NFC and "sample" always present. Other top-level fields are refused, so
// that headers, API keys, timeouts and base URLs never reach a key.
func Canonical(request []byte) ([]byte, error) {
	e, err := encodeWhole(request)
	if err != nil {
		return nil, err
	}
	return e.request()
}

// encodeWhole reads the JSON value b, of at most MaxRequestBytes, in
// canonical form (Canonical, Members).
func encodeWhole(b []byte) (*encoder, error) {
	if len(b) > MaxRequestBytes {
		return nil, &RequestError{"", fmt.Sprintf("larger than %d bytes", MaxRequestBytes)}
	}
	e := newEncoder(newDecoder(b), "", len(b))
	if err := e.whole(); err != nil {
		return nil, err
	}
	return e, nil
}

// CanonicalField is Canonical for a request object that is the field
// named field of a larger document (the "request" of a JSONL line), with
// no size limit of its own: every *RequestError names its path under
// field ("request.body.messages[2]"), and the endpoint must also pass
// CheckEndpoint.
func CanonicalField(field string, request []byte) ([]byte, error) {
	e := newEncoder(newDecoder(request), field, len(request))
	if err := e.whole(); err != nil {
		return nil, err
	}
	c, err := e.request()
	if err != nil {
		var re *RequestError
		if errors.As(err, &re) {
			return nil, &RequestError{JoinField(field, re.Field), re.Msg}
		}
		return nil, err
	}
	if err := e.checkEncodedEndpoint(); err != nil {
		return nil, &RequestError{JoinField(field, "endpoint"), err.Error()}
	}
	return c, nil
}

// A Member is a member of a JSON object read by Members: its name and
// value in canonical form, and its value as the input has it.
type Member struct {
	Name           string
	Canonical, Raw []byte
}

// Members reads the JSON object b by the rules of Canonical (strict JSON,
// valid UTF-8, no name twice, at most MaxRequestBytes) and returns its
// members in the order of their names: for a caller that takes a request
// apart and keys it (Build) without reading its body twice. Raw and
// Canonical are slices of b and of a new buffer.
func Members(b []byte) ([]Member, error) {
	e, err := encodeWhole(b)
	if err != nil {
		return nil, err
	}
	if e.out[e.val] != '{' {
		return nil, &RequestError{"", "not a JSON object"}
	}
	ms := make([]Member, len(e.members))
	for i, m := range e.members {
		// The input from the end of the name: the colon, then the
		// value, white space around either.
		raw := bytes.TrimLeft(b[m.rawStart:m.rawEnd], " \t\r\n")
		raw = bytes.TrimLeft(raw[1:], " \t\r\n")
		ms[i] = Member{Name: m.key, Canonical: e.out[m.val:m.end:m.end], Raw: raw}
	}
	return ms, nil
}

// JoinField joins a field path and a path under it ("request" and
// "body.model" give "request.body.model", "a" and "[2]" give "a[2]").
func JoinField(a, b string) string {
	if b == "" {
		return a
	}
	if strings.HasPrefix(b, "[") {
		return a + b
	}
	return a + "." + b
}

// newDecoder returns a strict JSON (RFC 8259) tokenizer of b: valid
// UTF-8, no lone surrogates. Duplicate names are the encoder's to find,
// after NFC. It reads b in place (a bytes.Buffer is not copied, as a
// bytes.Reader is, into the decoder's own buffer) and does not change it.
func newDecoder(b []byte) *jsontext.Decoder {
	return jsontext.NewDecoder(bytes.NewBuffer(b), jsontext.AllowDuplicateNames(true))
}

// whole encodes the one JSON value that makes up the source, with
// nothing but white space around it.
func (e *encoder) whole() error {
	if err := e.value(0); err != nil {
		return err
	}
	if _, err := e.dec.ReadToken(); err != io.EOF {
		return e.errf("trailing data after JSON value")
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

// JSON strips the Schema line of a canonical encoding.
func JSON(c []byte) ([]byte, bool) {
	return bytes.CutPrefix(c, []byte(Schema+"\n"))
}

func isString(enc []byte) bool { return len(enc) >= 2 && enc[0] == '"' }

// An encoder writes the canonical encoding of the JSON values a
// jsontext.Decoder reads into one buffer: every value is written in
// place, and an object whose keys are out of order is moved once, when
// it ends.
type encoder struct {
	dec     *jsontext.Decoder
	out     []byte
	val     int    // where the top-level value starts in out
	members []span // the members of the top-level object
	path    []step // where the value being read is
	root    string // the path of the top-level value
}

// A span is an object member written in out: `"key":value` at
// [start, end), its value from val; a member of the top-level object
// also has where its value is in the input, [rawStart, rawEnd).
type span struct {
	key              string
	start, val, end  int
	rawStart, rawEnd int64
}

// A step is one level of a path: an object key, or an array index when
// idx >= 0.
type step struct {
	key string
	idx int
}

// newEncoder returns an encoder of the next value dec reads, whose
// output starts with the Schema line; size is the input's length.
func newEncoder(dec *jsontext.Decoder, root string, size int) *encoder {
	e := &encoder{dec: dec, root: root, out: make([]byte, 0, len(Schema)+1+size+16)}
	e.out = append(e.out, Schema...)
	e.out = append(e.out, '\n')
	e.val = len(e.out)
	return e
}

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

// errf is an error at the value being read.
func (e *encoder) errf(format string, args ...any) error {
	return &RequestError{e.where(), fmt.Sprintf("offset %d: ", e.dec.InputOffset()) + fmt.Sprintf(format, args...)}
}

// fail is the error of the decoder, at the value being read.
func (e *encoder) fail(err error) error {
	return &RequestError{e.where(), DecodeErrorText(err)}
}

// DecodeErrorText describes an error of a jsontext.Decoder as the key
// rule reports it (offset and cause), for readers of larger documents
// that hold requests, such as cache load.
func DecodeErrorText(err error) string {
	var se *jsontext.SyntacticError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("offset %d: %v", se.ByteOffset, se.Err)
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
		return "unexpected end of input"
	}
	return err.Error()
}

// value encodes one value. The members of the top-level object stay in
// e.members.
func (e *encoder) value(depth int) error {
	if depth > maxDepth {
		return e.errf("nested deeper than %d", maxDepth)
	}
	if e.dec.PeekKind() == '"' {
		return e.str()
	}
	tok, err := e.dec.ReadToken()
	if err != nil {
		return e.fail(err)
	}
	switch tok.Kind() {
	case '{':
		return e.object(depth)
	case '[':
		return e.array(depth)
	case '0':
		n, err := number(tok.String())
		if err != nil {
			return e.errf("%v", err)
		}
		e.out = append(e.out, n...)
	default: // true, false, null
		e.out = append(e.out, tok.String()...)
	}
	return nil
}

// str encodes a string value. A string in NFC whose only escapes are
// the ones appendString writes (\", \\, \b, \f, \n, \r, \t; not \/ or
// \u) is copied as the decoder read it, quotes included: JSON has no raw
// '"', '\\' or control characters in a string, so appendString would write
// the same bytes. Unquoting each string into a new one and escaping it
// again was about a fifth of a load's CPU on the judge corpus
// (BenchmarkCanonical).
//
// The NFC check is made on the escaped text: an escape only puts ASCII
// before what follows it, where the text has a control character or one
// of '"' and '\\'; none of these composes with a following character,
// so text in NFC escaped is in NFC unescaped (the other way, a combining
// mark after "\n" is refused, and the string takes the long way).
func (e *encoder) str() error {
	v, err := e.dec.ReadValue()
	if err != nil {
		return e.fail(err)
	}
	// A view of v, valid until the decoder reads on; nothing keeps it.
	text := unsafe.String(unsafe.SliceData(v[1:]), len(v)-2)
	if copiedEscapes(text) && isNFC(text) {
		e.out = append(e.out, v...)
		return nil
	}
	u, _ := jsontext.AppendUnquote(nil, v) // v is valid: the decoder has checked it
	e.out = appendString(e.out, nfc(string(u)))
	return nil
}

// copiedEscapes reports whether every escape of text (the inside of a
// valid JSON string) is one appendString writes as it is.
func copiedEscapes(text string) bool {
	for {
		j := strings.IndexByte(text, '\\')
		if j < 0 {
			return true
		}
		if c := text[j+1]; c == 'u' || c == '/' {
			return false
		}
		text = text[j+2:]
	}
}

func (e *encoder) object(depth int) error {
	start := len(e.out)
	e.out = append(e.out, '{')
	var ms []span
	for e.dec.PeekKind() != '}' {
		tok, err := e.dec.ReadToken()
		if err != nil {
			return e.fail(err)
		}
		k := nfc(tok.String())
		e.path = append(e.path, step{key: k, idx: -1})
		if len(ms) > 0 {
			e.out = append(e.out, ',')
		}
		m := span{key: k, start: len(e.out), rawStart: e.dec.InputOffset()}
		e.out = appendString(e.out, k)
		e.out = append(e.out, ':')
		m.val = len(e.out)
		if err := e.value(depth + 1); err != nil {
			return err
		}
		m.end, m.rawEnd = len(e.out), e.dec.InputOffset()
		ms = append(ms, m)
		e.path = e.path[:len(e.path)-1]
	}
	if _, err := e.dec.ReadToken(); err != nil { // '}'
		return e.fail(err)
	}
	if dup, ok := e.order(start, ms); !ok {
		e.path = append(e.path, step{key: dup, idx: -1})
		return e.errf("duplicate key")
	}
	e.out = append(e.out, '}')
	if depth == 0 {
		e.members = ms
	}
	return nil
}

// order sorts the members ms of the object starting at start in out by
// the UTF-8 bytes of their keys, moving them when they are out of order.
// It reports a key found twice.
func (e *encoder) order(start int, ms []span) (dup string, ok bool) {
	if slices.IsSortedFunc(ms, func(a, b span) int { return strings.Compare(a.key, b.key) }) {
		for i := 1; i < len(ms); i++ {
			if ms[i-1].key == ms[i].key {
				return ms[i].key, false
			}
		}
		return "", true
	}
	off := start + 1
	tmp := slices.Clone(e.out[off:])
	slices.SortStableFunc(ms, func(a, b span) int { return strings.Compare(a.key, b.key) })
	e.out = e.out[:off]
	for j, m := range ms {
		if j > 0 {
			if ms[j-1].key == m.key {
				return m.key, false
			}
			e.out = append(e.out, ',')
		}
		at := len(e.out)
		e.out = append(e.out, tmp[m.start-off:m.end-off]...)
		ms[j] = span{key: m.key, start: at, val: at + m.val - m.start, end: len(e.out), rawStart: m.rawStart, rawEnd: m.rawEnd}
	}
	return "", true
}

func (e *encoder) array(depth int) error {
	e.out = append(e.out, '[')
	for n := 0; e.dec.PeekKind() != ']'; n++ {
		if n > 0 {
			e.out = append(e.out, ',')
		}
		e.path = append(e.path, step{idx: n})
		if err := e.value(depth + 1); err != nil {
			return err
		}
		e.path = e.path[:len(e.path)-1]
	}
	if _, err := e.dec.ReadToken(); err != nil { // ']'
		return e.fail(err)
	}
	e.out = append(e.out, ']')
	return nil
}

// nfc returns s (valid UTF-8) in Unicode NFC. Only what follows the
// settled prefix (see settledPrefix) is checked by the Unicode tables:
// checking whole strings was about 9 % of a load's CPU on the random
// corpus (English and Chinese text).
func nfc(s string) string {
	if isNFC(s) {
		return s
	}
	k := settledPrefix(s)
	return s[:k] + norm.NFC.String(s[k:])
}

// isNFC reports whether s (valid UTF-8) is in Unicode NFC.
func isNFC(s string) bool {
	k := settledPrefix(s)
	return k == len(s) || norm.NFC.IsNormalString(s[k:])
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

// number returns the normal form of the JSON number lit (valid, as the
// tokenizer read it): the exact decimal value (no rounding) written
// without a fraction or exponent when it is an integer of at most 21
// digits, as 0.000ddd or ddd.ddd when its decimal point falls within 6
// places before the first digit or 21 after, and as d.ddde±x otherwise.
// Trailing fraction zeros, leading zeros and the sign of zero are
// dropped: 1, 1.0, 10e-1 and 0.1E1 all become "1".
func number(lit string) ([]byte, error) {
	s, neg := strings.CutPrefix(lit, "-")
	mant, expPart, hasExp := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := []byte(intPart + frac)
	exp := -len(frac)
	if hasExp {
		ed := strings.TrimLeft(strings.TrimLeft(expPart, "+-"), "0")
		if len(ed) > maxExpDigits {
			return nil, fmt.Errorf("number %s: exponent too large", lit)
		}
		e, _ := strconv.Atoi("0" + ed) // at most 6 digits: cannot fail
		if strings.HasPrefix(expPart, "-") {
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
