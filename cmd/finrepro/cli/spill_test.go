package cli

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/analysis"
)

// filled returns a Detail with every field, and every field of each of
// its verdicts, set to a value that differs from the zero value and
// from n's neighbours, found by reflection: a field added to Detail or
// Verdict is spilled and checked without a change to this test.
func filled(n int) analysis.Detail {
	var d analysis.Detail
	fill(reflect.ValueOf(&d).Elem(), n)
	return d
}

func fill(v reflect.Value, n int) {
	switch v.Kind() {
	case reflect.String:
		// invalid UTF-8, a NUL and a newline must come back as they were
		v.SetString(v.Type().Name() + "\xff\x00\n" + strings.Repeat("x", n))
	case reflect.Bool:
		v.SetBool(n%2 == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(-n - 1))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(n + 300))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(n) + 0.25)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), n%3+1, n%3+1)
		for i := range s.Len() {
			fill(s.Index(i), n+i)
		}
		v.Set(s)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n+i)
			}
		}
	case reflect.Pointer: // nil for even n, so that both come back
		if n%2 == 1 {
			p := reflect.New(v.Type().Elem())
			fill(p.Elem(), n)
			v.Set(p)
		}
	}
}

// TestDetailSpill checks that details come back from the spill as they
// went in (every field, hostile bytes included), per benchmark and task,
// a task's details in their order even when the task comes back later
// in the list; that the result keeps only what the site lists; and
// that a damaged record is an error, not a wrong page.
func TestDetailSpill(t *testing.T) {
	sp, err := newDetailSpill(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer sp.close()
	var ds []analysis.Detail
	for i, task := range []string{"t1", "t1", "t2", "t1"} { // t1 comes back after t2
		d := filled(i)
		d.Task = task
		ds = append(ds, d)
	}
	ds[1].Verdicts = nil // no verdicts reads as none
	r := &analysis.Result{Benchmark: "b", Details: ds}
	other := &analysis.Result{Benchmark: "c", Details: []analysis.Detail{{Task: "t1", System: "s"}}}
	want := append([]analysis.Detail(nil), ds...)
	for _, res := range []*analysis.Result{r, other} {
		if err := sp.put(res); err != nil {
			t.Fatal(err)
		}
	}
	for i, d := range r.Details {
		if !reflect.DeepEqual(d, analysis.Detail{Task: want[i].Task, System: want[i].System, Question: want[i].Question, Score: want[i].Score}) {
			t.Errorf("detail %d kept as %+v", i, d)
		}
	}
	got, err := sp.load("b", "t1")
	if err != nil {
		t.Fatal(err)
	}
	if wantT1 := []analysis.Detail{want[0], want[1], want[3]}; !reflect.DeepEqual(got, wantT1) {
		t.Errorf("t1 loaded\n%+v\nwant\n%+v", got, wantT1)
	}
	if got, err := sp.load("c", "t1"); err != nil || !reflect.DeepEqual(got, []analysis.Detail{{Task: "t1", System: "s"}}) {
		t.Errorf("c/t1 loaded %+v, %v", got, err)
	}
	if _, err := sp.load("b", "t9"); err == nil {
		t.Error("a task never spilled loaded")
	}
	// damage the record of b/t2, written out: a length that runs past its end
	sp.mu.Lock()
	if err := sp.flushLocked(); err != nil {
		t.Fatal(err)
	}
	sp.mu.Unlock()
	s := sp.at[[2]string{"b", "t2"}][0]
	if _, err := sp.f.WriteAt([]byte{0xff, 0xff, 0xff, 0x0f}, s.off); err != nil {
		t.Fatal(err)
	}
	if _, err := sp.load("b", "t2"); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("damaged record: err = %v", err)
	}
}

// FuzzDetailRecord checks that reading any bytes as a spilled record
// never panics and takes no more memory than the bytes allow, and that
// what a record reads as is spilled back to the same bytes.
func FuzzDetailRecord(f *testing.F) {
	f.Add(string(appendValue(nil, reflect.ValueOf([]analysis.Detail{filled(1), filled(2)}))))
	f.Add("")
	f.Add("\x01\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01")
	f.Fuzz(func(t *testing.T, rec string) {
		var ds []analysis.Detail
		d := decoder{text: rec}
		d.value(reflect.ValueOf(&ds).Elem())
		if d.err != nil || d.at != len(rec) {
			return
		}
		if back := string(appendValue(nil, reflect.ValueOf(ds))); back != rec {
			// the same details, spilled again, give a record that reads back to them
			var again []analysis.Detail
			d2 := decoder{text: back}
			d2.value(reflect.ValueOf(&again).Elem())
			if d2.err != nil || !reflect.DeepEqual(again, ds) {
				t.Fatalf("%q reads as %+v, which spills to %q", rec, ds, back)
			}
		}
	})
}

// TestRecordVarints checks the record's integers against encoding/binary
// at the edges of their ranges, and that an overlong or cut varint is
// damage.
func TestRecordVarints(t *testing.T) {
	for _, x := range []uint64{0, 1, 127, 128, 16383, 16384, 1<<63 - 1, 1 << 63, ^uint64(0)} {
		b := binary.AppendUvarint(nil, x)
		d := decoder{text: string(b)}
		if got := d.uvarint(); got != x || d.err != nil || d.at != len(b) {
			t.Errorf("uvarint %d read as %d (%v, at %d of %d)", x, got, d.err, d.at, len(b))
		}
	}
	for _, x := range []int64{0, -1, 1, -64, 64, math.MinInt64, math.MaxInt64} {
		var n int64
		d := decoder{text: string(binary.AppendVarint(nil, x))}
		d.value(reflect.ValueOf(&n).Elem())
		if n != x || d.err != nil {
			t.Errorf("varint %d read as %d (%v)", x, n, d.err)
		}
	}
	for _, bad := range []string{"", "\x80", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"} {
		d := decoder{text: bad}
		if d.uvarint(); d.err == nil {
			t.Errorf("%q read as a varint", bad)
		}
	}
}

// TestDetailsFileLeavesNothing checks that reproduce and site, whose
// task pages are written from a details file in the output folder,
// leave no such file there, and that the task pages hold the outputs
// the file kept (a hostile system's script tag, escaped).
func TestDetailsFileLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("reproduces the built-in demo")
	}
	for _, cmd := range []string{"reproduce", "site"} {
		out := filepath.Join(t.TempDir(), "out")
		if code, stdout, stderr := run(t, cmd, "--out", out); code != 0 {
			t.Fatalf("%s exit %d\nstdout:\n%s\nstderr:\n%s", cmd, code, stdout, stderr)
		}
		left, err := filepath.Glob(filepath.Join(out, ".finrepro-details-*"))
		if err != nil || len(left) > 0 {
			t.Errorf("%s left %v (%v)", cmd, left, err)
		}
		pages, err := filepath.Glob(filepath.Join(out, "site", "tasks", "findeepresearch", "*.html"))
		if err != nil || len(pages) == 0 {
			t.Fatalf("%s: no FinDeepResearch task pages (%v)", cmd, err)
		}
		b, err := os.ReadFile(pages[0])
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "Output</h3>") || !strings.Contains(string(b), "structure check") {
			t.Errorf("%s: %s lacks the outputs and verdicts", cmd, pages[0])
		}
	}
}

// A countedFile is a spill's file that counts its writes and, once fail
// is set, fails them.
type countedFile struct {
	*os.File
	writes int
	fail   bool
}

func (f *countedFile) WriteAt(b []byte, off int64) (int, error) {
	if f.fail {
		return 0, errors.New("disk full")
	}
	f.writes++
	return f.File.WriteAt(b, off)
}

// TestSpillWritesBuffered checks that many small records cost a write per
// buffer of them, not one each, that one larger than the buffer goes
// whole, and that every record reads back the same from the buffer, from
// the file, and across the two.
func TestSpillWritesBuffered(t *testing.T) {
	sp, err := newDetailSpill(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer sp.close()
	f := &countedFile{File: sp.f.(*os.File)}
	sp.f = f
	var refs []analysis.TextRef
	var want [][]string
	total := 0
	for i := range 10000 {
		texts := []string{fmt.Sprintf("record %d", i), strings.Repeat("x", i%200)}
		if i == 5000 {
			texts = []string{strings.Repeat("big", spillBuffer)} // 3x the buffer
		}
		ref := sp.Put(texts)
		refs, want = append(refs, ref), append(want, texts)
		total += int(ref.Len)
		if i%1000 == 0 { // read back while buffered or just written
			if got := sp.Get(ref); !reflect.DeepEqual(got, texts) {
				t.Fatalf("record %d read back as %.40q", i, got)
			}
		}
	}
	// about 1.8 MB of small records and 0.8 MB in one: a write per 256 KiB
	// buffer filled (at most total/spillBuffer + 2 with the big one and the
	// buffer it flushed), not 10,000
	if max := total/spillBuffer + 2; f.writes > max {
		t.Errorf("%d writes for %d records of %d bytes, want at most %d", f.writes, len(refs), total, max)
	}
	for i, ref := range refs {
		if got := sp.Get(ref); !reflect.DeepEqual(got, want[i]) {
			t.Fatalf("record %d read back as %.40q", i, got)
		}
	}
	if err := sp.failed(); err != nil {
		t.Fatal(err)
	}
}

// TestSpillWriteFails checks that a write that fails is kept as the
// spill's failure, that records then read as nothing, and that details
// written after it fail too: no record is taken for written that was
// lost with the buffer.
func TestSpillWriteFails(t *testing.T) {
	sp, err := newDetailSpill(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer sp.close()
	f := &countedFile{File: sp.f.(*os.File), fail: true}
	sp.f = f
	sp.Put([]string{"held in the buffer, lost with it when the write fails"})
	if err := sp.failed(); err != nil {
		t.Fatalf("failed before any write: %v", err)
	}
	if ref := sp.Put([]string{strings.Repeat("y", spillBuffer)}); ref != (analysis.TextRef{}) {
		t.Errorf("a record whose write failed has ref %+v", ref)
	}
	err = sp.failed()
	if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "details file") {
		t.Fatalf("failed() = %v, want the write's error", err)
	}
	if err := sp.write("b", "t", []byte("x")); err == nil {
		t.Error("a detail written after a failed write succeeded")
	}
}
