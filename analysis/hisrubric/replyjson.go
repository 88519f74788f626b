package hisrubric

// The judge-reply reader: the one hand-written JSON reader of the
// benchmark. Judge replies are FinDeepResearch's bulk of JSON; in a CPU
// profile of a full-scale reproduce (about 3.2 CPU-s) reading them with
// encoding/json took 0.13 s. This reader is about 3x faster on a
// 60-item reply (BenchmarkParseReply in replyjson_test.go: 56 us against
// 171 us for encoding/json on a shared 2-core machine). It reads only the usual form and declines anything
// else (ok false), which encoding/json then reads; FuzzReadReply checks
// that whatever it accepts, encoding/json reads the same.

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

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
