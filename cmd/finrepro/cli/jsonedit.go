package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// A member is one member of a JSON object, its value as written.
type member struct {
	key string
	val json.RawMessage
}

// readMembers decodes a JSON object keeping its members in file order,
// so that an edit of one member leaves the others as they were.
func readMembers(b []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string) // object keys are strings
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out = append(out, member{k, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after JSON value")
	}
	return out, nil
}

// writeMembers encodes members as a JSON object, indented by two spaces,
// with a final newline.
func writeMembers(ms []member) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key) // a string always encodes
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.val)
	}
	b.WriteByte('}')
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// get returns the value of key, or nil.
func get(ms []member, key string) json.RawMessage {
	for _, m := range ms {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

// set replaces the value of key, or appends the member.
func set(ms []member, key string, v json.RawMessage) []member {
	for i := range ms {
		if ms[i].key == key {
			ms[i].val = v
			return ms
		}
	}
	return append(ms, member{key, v})
}

// objectOf encodes ordered members (key, value pairs) as a compact JSON
// object; values are encoded with encoding/json.
func objectOf(kv ...any) (json.RawMessage, error) {
	var ms []member
	for i := 0; i+1 < len(kv); i += 2 {
		v, err := json.Marshal(kv[i+1])
		if err != nil {
			return nil, err
		}
		ms = append(ms, member{kv[i].(string), v})
	}
	b, err := writeMembers(ms)
	if err != nil {
		return nil, err
	}
	var c bytes.Buffer
	if err := json.Compact(&c, b); err != nil {
		return nil, err
	}
	return c.Bytes(), nil
}
