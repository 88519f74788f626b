package cache

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"
)

// The reference encoder below builds every value's encoding on its own
// and joins them: slow, but simple enough to read as the rules. The
// encoder must agree with it on every input, error fields included.

type refParser struct{ parser }

func nfcRef(s string) string { return s } // parser.str returns NFC already

func refCanonical(request []byte) ([]byte, error) {
	if len(request) > MaxRequestBytes {
		return nil, &RequestError{"", fmt.Sprintf("larger than %d bytes", MaxRequestBytes)}
	}
	p := &refParser{parser{src: request}}
	p.space()
	v, err := p.value(0, "")
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.src) {
		return nil, p.errf("", "trailing data after JSON value")
	}
	return refCanonicalRequest(v)
}

// canonicalRequest checks a parsed request object and encodes it.
func refCanonicalRequest(v any) ([]byte, error) {
	obj, ok := v.(refObject)
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

// object is a parsed JSON object: members with their canonical encodings.
type refObject []refMember

type refMember struct {
	key string // NFC
	enc []byte // canonical encoding of the value
}

// value parses one value. The result is an object for objects (so that the
// caller can inspect the top level) and its []byte encoding otherwise.
func (p *refParser) value(depth int, path string) (any, error) {
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
		return appendString(nil, nfcRef(s)), nil
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

func (p *refParser) object(depth int, path string) (refObject, error) {
	p.i++ // '{'
	obj := refObject{}
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
		obj = append(obj, refMember{k, refEncode(v)})
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
	refSortMembers(obj)
	return obj, nil
}

// sortMembers sorts by the UTF-8 bytes of the keys (insertion sort for
// the usual small objects, else a library sort).
func refSortMembers(obj refObject) {
	for i := 1; i < len(obj); i++ {
		for j := i; j > 0 && obj[j].key < obj[j-1].key; j-- {
			obj[j], obj[j-1] = obj[j-1], obj[j]
		}
	}
}

func refEncode(v any) []byte {
	obj, ok := v.(refObject)
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

func (p *refParser) array(depth int, path string) ([]byte, error) {
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
		out = append(out, refEncode(v)...)
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

func FuzzCanonicalReference(f *testing.F) {
	for _, s := range []string{
		`{"provider":"p","endpoint":"e","body":{"b":[1,{"z":"\u00e9\n","a":null}],"a":"x\/y\t"},"sample":3}`,
		`{"provider":"p","endpoint":"e","body":{"caf\u0065\u0301":"e\u0301\n"}}`,
		`{"provider":"p","endpoint":"e","body":{"a":1,"a":2}}`,
		`{"body":{"m":[[[]],{}],"n":-0.50e+2},"endpoint":"","provider":"p"}`,
		`{"provider":"p","endpoint":"e","body":{"x":"\ud83d\ude00 \"q\" \\ \u001f"}}`,
		`[1,2`, `{"a":`, `{"provider":"p","endpoint":"e","body":{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"ka":10,"kb":11,"kc":12,"kd":13,"ke":14,"kf":15,"kg":16,"k3":17}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want, werr := refCanonical(b)
		got, err := Canonical(b)
		if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
			t.Fatalf("error %v, reference %v", err, werr)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("got  %q\nwant %q", got, want)
		}
	})
}
