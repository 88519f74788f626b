package proxy

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// ParseStream parses a stored stream (the JSON of docs/proxy.md),
// accepting only the format's version and at least one frame: each
// member once, none unknown, nothing after the object, strings valid
// UTF-8 without control characters, as strict JSON decoding would. It
// reads the JSON in one pass and unquotes every frame into one buffer
// the size of b: replaying a 1 MB stream of 2,000 frames spent half of
// its time in ParseStream when it decoded with go-json-experiment into a
// string per frame, and still a third token by token
// (BenchmarkStreamReplay).
func ParseStream(b []byte) (*Stream, error) {
	return parseStream(b, make([]byte, 0, len(b)))
}

// parseStreamInPlace is ParseStream unquoting the frames over b itself,
// which it overwrites whether it succeeds or not; the frames slice b.
// serveStored parses the response it has just read from the store this
// way, without a second buffer as large (see responseBuffers).
func parseStreamInPlace(b []byte) (*Stream, error) {
	return parseStream(b, b[:0])
}

func parseStream(b, buf []byte) (*Stream, error) {
	p := streamParser{b: b, buf: buf}
	s, err := p.stream()
	if err != nil {
		return nil, fmt.Errorf("proxy: stored stream: %w", err)
	}
	return s, nil
}

// A streamParser reads a stored stream's JSON from b at i. A frame's
// bytes are never longer than their JSON text (unquoting and base64
// decoding only shorten), so buf, made with the capacity len(b), never
// grows and frames slice it. For the same reason buf may be b itself:
// len(buf) never passes i, and what is appended comes from b at i or
// after (a base64 text is copied before it is decoded).
type streamParser struct {
	b   []byte
	i   int
	buf []byte
}

func (p *streamParser) errorf(format string, args ...any) error {
	return fmt.Errorf("offset %d: "+format, append([]any{p.i}, args...)...)
}

func (p *streamParser) stream() (*Stream, error) {
	s := &Stream{}
	var haveVersion, haveFrames bool
	err := p.object(streamMembers, func(k int) error {
		var err error
		switch streamMembers[k] {
		case "finrepro_stream":
			var v int64
			v, err = p.integer()
			s.Version, haveVersion = int(v), true
			if err == nil && v != StreamVersion {
				return fmt.Errorf("version %d, want %d", v, StreamVersion)
			}
		case "content_type":
			start := len(p.buf)
			if err = p.str(); err == nil {
				s.ContentType = string(p.buf[start:])
				p.buf = p.buf[:start]
			}
		case "frames":
			haveFrames = true
			err = p.array(func() error {
				var f Frame
				if err := p.frame(&f); err != nil {
					return fmt.Errorf("frame %d: %w", len(s.Frames), err)
				}
				s.Frames = append(s.Frames, f)
				return nil
			})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if p.space(); p.i < len(p.b) {
		return nil, p.errorf("data after the stream's object")
	}
	switch {
	case !haveVersion:
		return nil, errors.New("no finrepro_stream version")
	case !haveFrames || len(s.Frames) == 0:
		return nil, errors.New("no frames")
	}
	return s, nil
}

// The members of a stream and of a frame.
var (
	streamMembers = []string{"finrepro_stream", "content_type", "frames"}
	frameMembers  = []string{"at_us", "data", "b64"}
)

// frame reads one frame object into f.
func (p *streamParser) frame(f *Frame) error {
	start := len(p.buf)
	var haveData, haveB64 bool
	err := p.object(frameMembers, func(k int) error {
		switch frameMembers[k] {
		case "at_us":
			v, err := p.integer()
			f.AtUS = v
			return err
		case "data":
			haveData = true
			return p.str()
		}
		haveB64 = true
		at := len(p.buf)
		if err := p.str(); err != nil {
			return err
		}
		// The decoded bytes replace the text (a copy: frames that are not
		// UTF-8 are rare).
		text := bytes.Clone(p.buf[at:])
		var err error
		if p.buf, err = base64.StdEncoding.AppendDecode(p.buf[:at], text); err != nil {
			return fmt.Errorf("b64: %w", err)
		}
		return nil
	})
	switch {
	case err != nil:
		return err
	case haveData == haveB64:
		return errors.New("want exactly one of data and b64")
	case f.AtUS < 0:
		return errors.New("negative at_us")
	}
	f.Bytes = p.buf[start:len(p.buf):len(p.buf)]
	return nil
}

// space skips JSON white space.
func (p *streamParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// expect skips white space and the byte c.
func (p *streamParser) expect(c byte) error {
	if p.space(); p.i == len(p.b) || p.b[p.i] != c {
		return p.errorf("want %q", c)
	}
	p.i++
	return nil
}

// next skips white space and reports whether the byte c comes next,
// skipping it if so.
func (p *streamParser) next(c byte) bool {
	if p.space(); p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// object reads an object whose members are among names (at most 64),
// each at most once, calling member with the index in names of each
// member's name before its value, which member reads.
func (p *streamParser) object(names []string, member func(k int) error) error {
	if err := p.expect('{'); err != nil {
		return err
	}
	if p.next('}') {
		return nil
	}
	var seen uint64
	for {
		start := len(p.buf)
		if err := p.str(); err != nil {
			return err
		}
		name := p.buf[start:]
		k := slices.IndexFunc(names, func(n string) bool { return n == string(name) })
		switch {
		case k < 0:
			return p.errorf("unknown member %q", name)
		case seen&(1<<k) != 0:
			return p.errorf("duplicate member %q", name)
		}
		seen |= 1 << k
		p.buf = p.buf[:start]
		if err := p.expect(':'); err != nil {
			return err
		}
		if err := member(k); err != nil {
			return err
		}
		if p.next('}') {
			return nil
		}
		if err := p.expect(','); err != nil {
			return err
		}
	}
}

// array reads an array, calling elem for each element, which elem reads.
func (p *streamParser) array(elem func() error) error {
	if err := p.expect('['); err != nil {
		return err
	}
	if p.next(']') {
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		if p.next(']') {
			return nil
		}
		if err := p.expect(','); err != nil {
			return err
		}
	}
}

// integer reads a JSON number that is an int64 written without fraction
// or exponent.
func (p *streamParser) integer() (int64, error) {
	p.space()
	start := p.i
	if p.i < len(p.b) && p.b[p.i] == '-' {
		p.i++
	}
	digits := p.i
	for p.i < len(p.b) && '0' <= p.b[p.i] && p.b[p.i] <= '9' {
		p.i++
	}
	text := string(p.b[start:p.i])
	if p.i == digits || p.b[digits] == '0' && p.i > digits+1 {
		return 0, p.errorf("want an integer, not %q", text)
	}
	if p.i < len(p.b) && (p.b[p.i] == '.' || p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		return 0, p.errorf("want an integer without fraction or exponent")
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return 0, p.errorf("integer %s out of range", text)
	}
	return n, nil
}

// str reads a JSON string and appends its unquoted bytes to p.buf.
func (p *streamParser) str() error {
	if err := p.expect('"'); err != nil {
		return err
	}
	// Plain ASCII is copied eight bytes at a time while a word holds no
	// byte that stops a run, else byte by byte, into buf at j (no call
	// per run: a stored chunk escapes a quote every few bytes); each
	// word is loaded before it is stored, and j never passes i, so buf
	// may be b itself. The loop keeps its offsets in locals, not p.i,
	// which it would store every byte. With a byte loop appending each
	// run instead, parsing BenchmarkStreamReplay's stream in place took
	// 1.5 times the CPU (about 1.1 ms against 0.7), and the replay 1.07
	// times the time (4 paired rounds: 4.0-5.1 ms against 3.8-4.0).
	b, i := p.b, p.i
	buf, j := p.buf[:cap(p.buf)], len(p.buf)
	for {
		for i+8 <= len(b) {
			w := binary.LittleEndian.Uint64(b[i:])
			if stopsWord(w) {
				break
			}
			binary.LittleEndian.PutUint64(buf[j:], w)
			i, j = i+8, j+8
		}
		for i < len(b) && !stopsRun[b[i]] {
			buf[j] = b[i]
			i, j = i+1, j+1
		}
		if i == len(b) {
			p.i = i
			return p.errorf("unterminated string")
		}
		switch c := b[i]; {
		case c == '"':
			p.buf, p.i = buf[:j], i+1
			return nil
		case c == '\\' && i+1 < len(b) && simpleEscapes[b[i+1]] != 0:
			buf[j] = simpleEscapes[b[i+1]]
			i, j = i+2, j+1
		case c == '\\':
			p.buf, p.i = buf[:j], i
			if err := p.escape(); err != nil {
				return err
			}
			i, j = p.i, len(p.buf)
		case c < 0x20:
			p.i = i
			return p.errorf("control character in string")
		default: // the first byte of a UTF-8 sequence, or not UTF-8
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				p.i = i
				return p.errorf("string not valid UTF-8")
			}
			j += copy(buf[j:], b[i:i+n])
			i += n
		}
	}
}

// stopsWord reports whether one of the eight bytes of w stops a run (see
// stopsRun). Where w has none, every byte is in 0x20-0x7f and neither a
// quote nor a backslash, so no byte of w, w - 0x20 or of w xor a quote
// or a backslash, less one, has its high bit set, nor borrows. Where it
// has one, the lowest either has its high bit set in w or wraps below
// zero in one of the differences, which the bytes below it do not
// disturb (they borrow nothing).
func stopsWord(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q, bs := w^('"'*ones), w^('\\'*ones)
	return (w|(w-0x20*ones)|(q-ones)|(bs-ones))&highs != 0
}

// escape reads the escape sequence at p.i (a backslash) and appends what
// it stands for to p.buf.
func (p *streamParser) escape() error {
	b := p.b
	if p.i+1 >= len(b) {
		return p.errorf("unterminated string")
	}
	c := b[p.i+1]
	if simple := simpleEscapes[c]; simple != 0 {
		p.buf = append(p.buf, simple)
		p.i += 2
		return nil
	}
	if c != 'u' {
		return p.errorf("invalid escape \\%c", c)
	}
	r, ok := p.hex4(p.i + 2)
	if !ok {
		return p.errorf("invalid escape \\u")
	}
	p.i += 6
	if utf16.IsSurrogate(r) {
		var r2 rune = -1
		if p.i+1 < len(b) && b[p.i] == '\\' && b[p.i+1] == 'u' {
			r2, ok = p.hex4(p.i + 2)
		}
		if r = utf16.DecodeRune(r, r2); r == utf8.RuneError || !ok {
			return p.errorf("invalid surrogate escape")
		}
		p.i += 6
	}
	p.buf = utf8.AppendRune(p.buf, r)
	return nil
}

// stopsRun marks the bytes that end a string's run of plain ASCII: the
// quote, the backslash, control characters and bytes of 0x80 or more.
var stopsRun = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c < 0x20 || c == '"' || c == '\\' || c >= 0x80
	}
	return t
}()

// simpleEscapes maps the letter after a backslash to the byte it stands
// for, 0 for none (stored streams escape a quote in every few bytes).
var simpleEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// hex4 reads four hex digits at b[at:].
func (p *streamParser) hex4(at int) (rune, bool) {
	if at+4 > len(p.b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(p.b[at:at+4]), 16, 16)
	return rune(n), err == nil
}
