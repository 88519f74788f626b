package icbc

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// A scanner reads the plain JSON judges usually write: an object of known
// keys, each once, with string, number, boolean and null values and
// arrays of such objects. It gives up (ok = false) on anything else
// (other keys, repeated keys, surrogate escapes, invalid UTF-8, bad
// syntax), and the caller then decodes with encoding/json, so both ways
// read every input the same.
type scanner struct {
	s  string
	i  int
	ok bool
}

func newScanner(s string) *scanner { return &scanner{s: s, ok: true} }

func (p *scanner) fail() { p.ok = false }

func (p *scanner) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// peek returns the next byte after white space, or 0 at the end.
func (p *scanner) peek() byte {
	p.space()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// expect reads byte c after white space.
func (p *scanner) expect(c byte) {
	if p.ok && p.peek() == c {
		p.i++
		return
	}
	p.fail()
}

// end reports whether the scan succeeded and used all of the input.
func (p *scanner) end() bool { return p.ok && p.peek() == 0 && p.i == len(p.s) }

// str reads a string.
func (p *scanner) str() string {
	if !p.ok || p.peek() != '"' {
		p.fail()
		return ""
	}
	p.i++
	start := p.i
	var b []byte // nil until the first escape
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			out := p.s[start:p.i]
			if b != nil {
				out = string(append(b, out...))
			}
			p.i++
			return out
		case c < 0x20:
			p.fail()
			return ""
		case c == '\\':
			b = append(b, p.s[start:p.i]...)
			if p.i+1 >= len(p.s) {
				p.fail()
				return ""
			}
			e := p.s[p.i+1]
			p.i += 2
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
				if p.i+4 > len(p.s) {
					p.fail()
					return ""
				}
				r, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
				if err != nil || 0xD800 <= r && r < 0xE000 {
					p.fail()
					return ""
				}
				b = utf8.AppendRune(b, rune(r))
				p.i += 4
			default:
				p.fail()
				return ""
			}
			start = p.i
		case c < utf8.RuneSelf:
			p.i++
		default:
			r, size := utf8.DecodeRuneInString(p.s[p.i:])
			if r == utf8.RuneError && size == 1 {
				p.fail()
				return ""
			}
			p.i += size
		}
	}
	p.fail()
	return ""
}

// num reads a number.
func (p *scanner) num() float64 {
	p.space()
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.s) && isDigit(p.s[p.i]) {
			p.i++
			n++
		}
		return n
	}
	if p.i < len(p.s) && p.s[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.s) && p.s[p.i] == '0':
		p.i++
	case digits() == 0:
		p.fail()
		return 0
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if digits() == 0 {
			p.fail()
			return 0
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			p.fail()
			return 0
		}
	}
	f, err := strconv.ParseFloat(p.s[start:p.i], 64)
	if err != nil {
		p.fail()
	}
	return f
}

// value reads a string, number, boolean or null as encoding/json decodes
// it into an any, and returns its text too.
func (p *scanner) value() (v any, raw string) {
	start := p.i
	switch c := p.peek(); {
	case !p.ok:
	case c == '"':
		start = p.i
		v = p.str()
	case c == '-' || isDigit(c):
		start = p.i
		v = p.num()
	case strings.HasPrefix(p.s[p.i:], "true"):
		start = p.i
		v = true
		p.i += 4
	case strings.HasPrefix(p.s[p.i:], "false"):
		start = p.i
		v = false
		p.i += 5
	case strings.HasPrefix(p.s[p.i:], "null"):
		start = p.i
		p.i += 4
	default:
		p.fail()
	}
	return v, p.s[start:p.i]
}

// object reads an object whose keys are among keys, each at most once,
// calling field for every key; field reads the value.
func (p *scanner) object(keys []string, field func(k int)) {
	p.expect('{')
	if p.ok && p.peek() == '}' {
		p.i++
		return
	}
	seen := uint64(0)
	for p.ok {
		key := p.str()
		k := -1
		for j, name := range keys {
			if key == name {
				k = j
			}
		}
		if k < 0 || seen&(1<<k) != 0 {
			p.fail()
			return
		}
		seen |= 1 << k
		p.expect(':')
		if !p.ok {
			return
		}
		field(k)
		if p.ok && p.peek() == ',' {
			p.i++
			continue
		}
		p.expect('}')
		return
	}
}

// array reads an array, calling elem for every element.
func (p *scanner) array(elem func()) {
	p.expect('[')
	if p.ok && p.peek() == ']' {
		p.i++
		return
	}
	for p.ok {
		elem()
		if p.ok && p.peek() == ',' {
			p.i++
			continue
		}
		p.expect(']')
		return
	}
}
