package cache

import (
	"bytes"
	"testing"
)

// TestLoadRepeatAcrossPacks loads every exchange twice in a row, with
// packs so small that each exchange fills one: each repeat arrives while
// the pack holding its first occurrence may still be written in the
// background. Each repeat must count
// as present and be recorded once, in one pack, and every exchange must
// read back.
func TestLoadRepeatAcrossPacks(t *testing.T) {
	defer func(v int) { packTarget = v }(packTarget)
	packTarget = 1
	data := synthLines(t, 40, 2)
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	var in bytes.Buffer
	for i := range lines {
		in.Write(lines[i])
		in.WriteByte('\n')
		in.Write(lines[i])
		in.WriteByte('\n')
	}
	dir := t.TempDir()
	s := openTest(t, dir, Options{NoCompact: true, Verify: true})
	st, err := s.Load(&in, LoadOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.Added != len(lines) || st.Present != len(lines) || st.Bad != 0 {
		t.Fatalf("stats %+v, want %d added and %d present", st, len(lines), len(lines))
	}
	s.Close()
	s = verifyClean(t, dir)
	if n := len(s.packs); n != len(lines) {
		t.Errorf("%d packs, want one per exchange (%d)", n, len(lines))
	}
	keys, err := s.Keys()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if n := len(s.recsOf(k)); n != 1 {
			t.Errorf("key %s recorded %d times", k.Str(), n)
		}
	}
	checkReadsBack(t, s, data)
}
