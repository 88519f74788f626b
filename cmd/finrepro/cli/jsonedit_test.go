package cli

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestMembersKeepOrder: an object indented by two spaces, as the
// benchmarks' configurations are, is written back byte for byte, and set
// changes one member in place.
func TestMembersKeepOrder(t *testing.T) {
	in := []byte("{\n  \"zeta\": 1,\n  \"alpha\": [\n    {\n      \"b\": 2,\n      \"a\": \"x\"\n    }\n  ],\n  \"mid\": null\n}\n")
	ms, err := readMembers(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := writeMembers(ms)
	if err != nil || !bytes.Equal(out, in) {
		t.Fatalf("round trip: %v\n%s", err, out)
	}
	out, _ = writeMembers(set(ms, "alpha", json.RawMessage(`[]`)))
	if want := "{\n  \"zeta\": 1,\n  \"alpha\": [],\n  \"mid\": null\n}\n"; string(out) != want {
		t.Errorf("set: %s", out)
	}
	for _, bad := range []string{`[]`, `{"a":1} x`, `{"a":}`, `{"a":1`} {
		if _, err := readMembers([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzReadMembers: whatever readMembers accepts, writeMembers writes as
// valid JSON that reads back to the same members.
func FuzzReadMembers(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":[1,2,{"c":null}]}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"a":"\u00e9","a":2}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ms, err := readMembers(b)
		if err != nil {
			return
		}
		out, err := writeMembers(ms)
		if err != nil {
			t.Fatalf("write: %v", err)
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON written: %s", out)
		}
		again, err := readMembers(out)
		if err != nil || len(again) != len(ms) {
			t.Fatalf("read back: %v, %d members, want %d", err, len(again), len(ms))
		}
		for i := range ms {
			var x, y bytes.Buffer
			json.Compact(&x, ms[i].val)
			json.Compact(&y, again[i].val)
			if again[i].key != ms[i].key || !bytes.Equal(x.Bytes(), y.Bytes()) {
				t.Fatalf("member %d: %q=%s, read back %q=%s", i, ms[i].key, x.Bytes(), again[i].key, y.Bytes())
			}
		}
	})
}
