package hisrubric

// Judge batches and replies are the bulk of the benchmark's JSON. They
// are written and, in their usual form, read here by hand, without
// reflection; the bytes are those of encoding/json, which reads every
// reply the fast reader declines (fast_test.go fuzzes both against it).

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// writeBatch writes b as encoding/json's Marshal does.
func writeBatch(w *strings.Builder, b *Batch) {
	w.WriteString(`{"stage":`)
	writeJSONString(w, string(b.Stage))
	w.WriteString(`,"company":`)
	writeJSONString(w, b.Company)
	w.WriteString(`,"language":`)
	writeJSONString(w, b.Language)
	w.WriteString(`,"items":`)
	if b.Items == nil {
		w.WriteString("null}")
		return
	}
	w.WriteByte('[')
	for i := range b.Items {
		it := &b.Items[i]
		if i > 0 {
			w.WriteByte(',')
		}
		writeItemHead(w, it)
		if it.Prediction != "" {
			w.WriteString(`,"prediction":`)
			writeJSONString(w, it.Prediction)
		}
		writeItemTail(w, it)
	}
	w.WriteString("]}")
}

// writeItemHead writes a batch item up to its prediction: the id, the
// question and the truth.
func writeItemHead(w *strings.Builder, it *BatchItem) {
	w.WriteString(`{"id":`)
	writeJSONString(w, it.ID)
	w.WriteString(`,"question":`)
	writeJSONString(w, it.Question)
	if it.Truth != "" {
		w.WriteString(`,"truth":`)
		writeJSONString(w, it.Truth)
	}
}

// writeItemTail writes a batch item after its prediction: the claims,
// the criterion and the closing brace.
func writeItemTail(w *strings.Builder, it *BatchItem) {
	if len(it.Claims) > 0 {
		w.WriteString(`,"claims":[`)
		for k, c := range it.Claims {
			if k > 0 {
				w.WriteByte(',')
			}
			writeJSONString(w, c)
		}
		w.WriteByte(']')
	}
	if len(it.Criterion) > 0 {
		w.WriteString(`,"criterion":[`)
		for k, p := range it.Criterion {
			if k > 0 {
				w.WriteByte(',')
			}
			w.WriteString(`{"point":`)
			writeJSONString(w, p.Point)
			w.WriteString(`,"max":`)
			writeJSONFloat(w, p.Max)
			w.WriteByte('}')
		}
		w.WriteByte(']')
	}
	w.WriteByte('}')
}

const hexDigits = "0123456789abcdef"

// jsonPlain[c] is true for the bytes of valid UTF-8 text that
// writeJSONString copies as they are, but 0xE2, which starts U+2028 and
// U+2029.
var jsonPlain = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' && c != 0xE2
	}
	return t
}()

// isLineSep reports whether s[i:] starts with U+2028 or U+2029.
func isLineSep(s string, i int) bool {
	return i+2 < len(s) && s[i] == 0xE2 && s[i+1] == 0x80 && s[i+2]&^1 == 0xA8
}

// jsonStringLen is the length of s as writeJSONString writes it.
func jsonStringLen(s string) int {
	if !utf8.ValidString(s) {
		var w strings.Builder
		writeJSONString(&w, s)
		return w.Len()
	}
	n := len(s) + 2
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case jsonPlain[c]:
		case c == 0xE2:
			if isLineSep(s, i) {
				n += 3
				i += 2
			}
		case c == '\\' || c == '"' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
			n++
		default:
			n += 5
		}
	}
	return n
}

// writeJSONString writes s quoted as encoding/json does: HTML
// characters, U+2028 and U+2029 escaped, invalid UTF-8 as U+FFFD.
func writeJSONString(w *strings.Builder, s string) {
	if !utf8.ValidString(s) {
		writeJSONStringSlow(w, s)
		return
	}
	w.WriteByte('"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if jsonPlain[c] || c == 0xE2 && !isLineSep(s, i) {
			continue
		}
		w.WriteString(s[start:i])
		switch c {
		case 0xE2:
			w.WriteString(`\u202`)
			w.WriteByte(hexDigits[s[i+2]&0xF])
			i += 2
		default:
			writeEscape(w, c)
		}
		start = i + 1
	}
	w.WriteString(s[start:])
	w.WriteByte('"')
}

// writeEscape writes the JSON escape of ASCII byte c.
func writeEscape(w *strings.Builder, c byte) {
	switch c {
	case '\\', '"':
		w.WriteByte('\\')
		w.WriteByte(c)
	case '\b':
		w.WriteString(`\b`)
	case '\f':
		w.WriteString(`\f`)
	case '\n':
		w.WriteString(`\n`)
	case '\r':
		w.WriteString(`\r`)
	case '\t':
		w.WriteString(`\t`)
	default:
		w.WriteString(`\u00`)
		w.WriteByte(hexDigits[c>>4])
		w.WriteByte(hexDigits[c&0xF])
	}
}

// writeJSONStringSlow is writeJSONString for any s, valid UTF-8 or not.
func writeJSONStringSlow(w *strings.Builder, s string) {
	w.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			w.WriteString(s[start:i])
			writeEscape(w, b)
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			w.WriteString(s[start:i])
			w.WriteString(`\ufffd`)
		case c == '\u2028' || c == '\u2029':
			w.WriteString(s[start:i])
			w.WriteString(`\u202`)
			w.WriteByte(hexDigits[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	w.WriteString(s[start:])
	w.WriteByte('"')
}

// writeJSONFloat writes a finite f as encoding/json does: like %g but
// with ES6's exponent cutoffs.
func writeJSONFloat(w *strings.Builder, f float64) {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	var buf [32]byte
	b := strconv.AppendFloat(buf[:0], f, format, -1, 64)
	if format == 'e' {
		// e-09 is written e-9.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	w.Write(b)
}

// A replyReader reads the usual form of a judge reply: one object with
// an "items" array of objects with the ReplyItem fields, each at most
// once, keys in lower case, no nulls. Anything else makes it fail, and
// encoding/json decides. Strings without escapes are slices of the
// reply.
type replyReader struct {
	s   string
	i   int
	bad bool
}

// readReply reads s, a JSON object from its first to its last byte; ok
// is false when s is not in the usual form.
func readReply(s string) (r *Reply, ok bool) {
	d := &replyReader{s: s}
	r = &Reply{}
	seen := false
	d.object(func(k string) {
		if k != "items" || seen {
			d.bad = true
			return
		}
		seen = true
		// Each item is an object: the count of braces is enough room.
		r.Items = make([]ReplyItem, 0, strings.Count(s, "{"))
		d.array(func() {
			r.Items = append(r.Items, ReplyItem{})
			d.item(&r.Items[len(r.Items)-1])
		})
	})
	d.space()
	if d.bad || d.i != len(s) || !seen {
		return nil, false
	}
	return r, true
}

func (d *replyReader) item(it *ReplyItem) {
	var seen [7]bool
	d.object(func(k string) {
		f := -1
		switch k {
		case "id":
			f, it.ID = 0, d.str()
		case "verdict":
			f, it.Verdict = 1, d.str()
		case "reason":
			f, it.Reason = 2, d.str()
		case "claims":
			f, it.Claims = 3, []string{}
			d.array(func() { it.Claims = append(it.Claims, d.str()) })
		case "criterion":
			f, it.Criterion = 4, []Point{}
			d.array(func() {
				var p Point
				var got [2]bool
				d.object(func(k string) {
					switch {
					case k == "point" && !got[0]:
						got[0], p.Point = true, d.str()
					case k == "max" && !got[1]:
						got[1], p.Max = true, d.num()
					default:
						d.bad = true
					}
				})
				it.Criterion = append(it.Criterion, p)
			})
		case "covered":
			f, it.Covered = 5, []bool{}
			d.array(func() { it.Covered = append(it.Covered, d.boolean()) })
		case "points":
			v := d.num()
			f, it.Points = 6, &v
		}
		if f < 0 || seen[f] {
			d.bad = true
			return
		}
		seen[f] = true
	})
}

// space skips JSON white space.
func (d *replyReader) space() {
	for d.i < len(d.s) && (d.s[d.i] == ' ' || d.s[d.i] == '\t' || d.s[d.i] == '\n' || d.s[d.i] == '\r') {
		d.i++
	}
}

// expect reads byte c after white space.
func (d *replyReader) expect(c byte) bool {
	d.space()
	if d.bad || d.i >= len(d.s) || d.s[d.i] != c {
		d.bad = true
		return false
	}
	d.i++
	return true
}

// peek reports whether the next byte after white space is c, and reads
// it if so.
func (d *replyReader) peek(c byte) bool {
	d.space()
	if !d.bad && d.i < len(d.s) && d.s[d.i] == c {
		d.i++
		return true
	}
	return false
}

// object reads an object, calling field after each key and its colon
// to read the value.
func (d *replyReader) object(field func(key string)) {
	if !d.expect('{') || d.peek('}') {
		return
	}
	for !d.bad {
		k := d.str()
		if !d.expect(':') {
			return
		}
		field(k)
		if d.peek('}') {
			return
		}
		d.expect(',')
	}
}

// array reads an array, calling elem to read each element.
func (d *replyReader) array(elem func()) {
	if !d.expect('[') || d.peek(']') {
		return
	}
	for !d.bad {
		elem()
		if d.peek(']') {
			return
		}
		d.expect(',')
	}
}

// str reads a string of valid UTF-8 with no escapes but \" \\ \/ \b \f
// \n \r \t and \u of a code point outside the surrogates.
func (d *replyReader) str() string {
	if !d.expect('"') {
		return ""
	}
	start := d.i
	n := strings.IndexByte(d.s[start:], '"')
	if n < 0 {
		d.bad = true
		return ""
	}
	v := d.s[start : start+n]
	for i := 0; i < len(v); i++ {
		if c := v[i]; c <= '\\' && (c == '\\' || c < 0x20) {
			if c < 0x20 {
				d.bad = true
				return ""
			}
			d.i = start + i
			return d.escaped(start)
		}
	}
	d.i = start + n + 1
	if !utf8.ValidString(v) {
		d.bad = true
	}
	return v
}

// escaped reads the rest of a string from its first backslash at d.i,
// the string's text starting at start.
func (d *replyReader) escaped(start int) string {
	b := []byte(d.s[start:d.i])
	for d.i < len(d.s) {
		c := d.s[d.i]
		switch {
		case c == '"':
			d.i++
			if !utf8.Valid(b) {
				d.bad = true
			}
			return string(b)
		case c < 0x20:
			d.bad = true
			return ""
		case c != '\\':
			b = append(b, c)
			d.i++
			continue
		}
		if d.i+1 >= len(d.s) {
			break
		}
		e := d.s[d.i+1]
		d.i += 2
		switch e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			if d.i+4 > len(d.s) {
				d.bad = true
				return ""
			}
			r, err := strconv.ParseUint(d.s[d.i:d.i+4], 16, 32)
			if err != nil || r >= 0xD800 && r < 0xE000 {
				d.bad = true
				return ""
			}
			b = utf8.AppendRune(b, rune(r))
			d.i += 4
		default:
			d.bad = true
			return ""
		}
	}
	d.bad = true
	return ""
}

// num reads a number in JSON's grammar that is a finite float64.
func (d *replyReader) num() float64 {
	d.space()
	start := d.i
	digits := func() int {
		n := 0
		for d.i < len(d.s) && d.s[d.i] >= '0' && d.s[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if d.i < len(d.s) && d.s[d.i] == '-' {
		d.i++
	}
	if d.i < len(d.s) && d.s[d.i] == '0' {
		d.i++
	} else if digits() == 0 {
		d.bad = true
		return 0
	}
	if d.i < len(d.s) && d.s[d.i] == '.' {
		d.i++
		if digits() == 0 {
			d.bad = true
			return 0
		}
	}
	if d.i < len(d.s) && (d.s[d.i] == 'e' || d.s[d.i] == 'E') {
		d.i++
		if d.i < len(d.s) && (d.s[d.i] == '+' || d.s[d.i] == '-') {
			d.i++
		}
		if digits() == 0 {
			d.bad = true
			return 0
		}
	}
	v, err := strconv.ParseFloat(d.s[start:d.i], 64)
	if err != nil {
		d.bad = true
	}
	return v
}

// boolean reads true or false.
func (d *replyReader) boolean() bool {
	d.space()
	switch {
	case len(d.s)-d.i >= 4 && d.s[d.i:d.i+4] == "true":
		d.i += 4
		return true
	case len(d.s)-d.i >= 5 && d.s[d.i:d.i+5] == "false":
		d.i += 5
		return false
	}
	d.bad = true
	return false
}
