package replay

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/finrepro/finrepro/cache/reqkey"
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
	keyed = &bodyEncoding{str: reqkey.AppendCanonicalString, val: keyedValue}
)

// keyedValue returns the canonical encoding of parameter value v.
func keyedValue(v any) ([]byte, error) {
	b, err := jsonValue(v)
	if err != nil {
		return nil, err
	}
	return reqkey.AppendCanonicalValue(nil, b)
}

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

// appendJSONString appends s as an encoding/json Encoder without HTML
// escaping writes it. It runs for recordings and misses only, and is 0.9 %
// of the CPU of "finrepro demo --scale full" (BenchmarkAppendJSONString:
// 170-320 MB/s): the plain library call is kept.
func appendJSONString(out []byte, s string) []byte {
	b, _ := jsonValue(s) // a string always encodes
	return append(out, b...)
}
