package cache

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"

	"github.com/finrepro/finrepro/cache/reqkey"
)

// The usual JSONL line, {"request": ..., "response": ..., "meta": ...}
// with plain names, is split by a scanner of its own before the token
// decoder: on the random corpus with one core the decoder's reading of
// the request and response values was about a tenth of a load's CPU
// (perf of GOMAXPROCS=1 finrepro cache load; BenchmarkParseLine). The
// scanner only ever takes a line the decoder takes the same way: whatever
// it does not accept (a bad line, a name written with escapes, a
// repeated or unknown name, a nesting it does not follow) goes to the
// decoder, which reports the error.

// scanMaxDepth is the deepest nesting the scanner follows, well under the
// decoder's limit (10,000), so that what it takes the decoder takes.
const scanMaxDepth = 512

// parseLineFast splits b as parseLine does and reports whether it could:
// false leaves b to parseLine's decoder.
func parseLineFast(b []byte) (*Exchange, []byte, bool) {
	i := skipSpace(b, 0)
	if i == len(b) || b[i] != '{' {
		return nil, nil, false
	}
	var x Exchange
	var canon, meta []byte
	for i = skipSpace(b, i+1); ; i = skipSpace(b, i+1) {
		name, j, ok := scanName(b, i)
		if !ok {
			return nil, nil, false
		}
		if j = skipSpace(b, j); j == len(b) || b[j] != ':' {
			return nil, nil, false
		}
		start := skipSpace(b, j+1)
		end, ok := skipValue(b, start, 1)
		if !ok {
			return nil, nil, false
		}
		raw := b[start:end:end]
		switch {
		case name == "request" && canon == nil:
			c, err := reqkey.CanonicalField("request", raw)
			if err != nil {
				return nil, nil, false
			}
			canon, x.Request = c, raw
		case name == "response" && x.Response == nil && utf8.Valid(raw):
			x.Response = raw
		case name == "meta" && meta == nil && utf8.Valid(raw):
			meta = raw
		default:
			return nil, nil, false
		}
		if i = skipSpace(b, end); i == len(b) {
			return nil, nil, false
		}
		if b[i] == '}' {
			break
		}
		if b[i] != ',' {
			return nil, nil, false
		}
	}
	if skipSpace(b, i+1) != len(b) || canon == nil || x.Response == nil {
		return nil, nil, false
	}
	if finishLine(&x, canon, meta) != nil {
		return nil, nil, false
	}
	return &x, canon, true
}

// scanName reads the object member name at b[i] when it is a string
// without escapes, and returns it and the position after it.
func scanName(b []byte, i int) (string, int, bool) {
	if i == len(b) || b[i] != '"' {
		return "", 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return string(b[i+1 : j]), j + 1, true
		case c == '\\' || c < 0x20:
			return "", 0, false
		}
	}
	return "", 0, false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value at b[i], which lies at
// nesting depth depth, and whether it is valid JSON (as RFC 8259 has
// it, but for UTF-8, which it does not check: a lone surrogate escape
// passes, as in the decoder's lenient mode).
func skipValue(b []byte, i, depth int) (int, bool) {
	if i == len(b) {
		return 0, false
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{' || c == '[':
		if depth >= scanMaxDepth {
			return 0, false
		}
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == closing {
			return i + 1, true
		}
		for {
			if c == '{' {
				var ok bool
				if i, ok = skipString(b, i); !ok {
					return 0, false
				}
				if i = skipSpace(b, i); i == len(b) || b[i] != ':' {
					return 0, false
				}
				i = skipSpace(b, i+1)
			}
			var ok bool
			if i, ok = skipValue(b, i, depth+1); !ok {
				return 0, false
			}
			if i = skipSpace(b, i); i == len(b) {
				return 0, false
			}
			switch b[i] {
			case closing:
				return i + 1, true
			case ',':
				i = skipSpace(b, i+1)
			default:
				return 0, false
			}
		}
	case c == 't':
		return skipLiteral(b, i, "true")
	case c == 'f':
		return skipLiteral(b, i, "false")
	case c == 'n':
		return skipLiteral(b, i, "null")
	default:
		return skipNumber(b, i)
	}
}

func skipLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// skipString returns the end of the string at b[i].
func skipString(b []byte, i int) (int, bool) {
	if i == len(b) || b[i] != '"' {
		return 0, false
	}
	for i++; i < len(b); i++ {
		for i+8 <= len(b) {
			if m := strStops(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
			i += 8
		}
		if i == len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return 0, false
		case c == '\\':
			if i+1 == len(b) {
				return 0, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if len(b)-i < 6 || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return 0, false
				}
				i += 5
			default:
				return 0, false
			}
		}
	}
	return 0, false
}

// strStops flags (with bit 7) the bytes of w, eight bytes of a string,
// that the string scanner must look at: '"', '\\' and those below 0x20.
// Bytes above the lowest flagged one may be flagged wrongly; the lowest
// is right. Byte by byte, the scan of strings was a third of the
// scanner's time (BenchmarkParseLine).
func strStops(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	return zero(w^'"'*ones) | zero(w^'\\'*ones) | (w-0x20*ones)&^w&highs
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// skipNumber returns the end of the number at b[i]:
// -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
func skipNumber(b []byte, i int) (int, bool) {
	digits := func(i int) (int, bool) {
		j := i
		for j < len(b) && '0' <= b[j] && b[j] <= '9' {
			j++
		}
		return j, j > i
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i == len(b):
		return 0, false
	case b[i] == '0':
		i++
	default:
		var ok bool
		if i, ok = digits(i); !ok {
			return 0, false
		}
	}
	if i < len(b) && b[i] == '.' {
		var ok bool
		if i, ok = digits(i + 1); !ok {
			return 0, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		var ok bool
		if i, ok = digits(i); !ok {
			return 0, false
		}
	}
	return i, true
}
