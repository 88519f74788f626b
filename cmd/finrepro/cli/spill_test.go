package cli

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

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
	if r.Details != nil || r.LazyDetails != nil {
		t.Errorf("the result keeps its details: %+v", r.Details)
	}
	// listed by task, then by system (filled(i)'s system is its name and
	// i+1 x's), each with its task's question (that of its detail with
	// the first system) with its newline as a space
	listed := func(task string, i, q int) analysis.Detail {
		return analysis.Detail{Task: task, System: want[i].System, Question: strings.ReplaceAll(want[q].Question, "\n", " "), Score: want[i].Score}
	}
	wantListed := map[string][]analysis.Detail{
		"b": {listed("t1", 0, 0), listed("t1", 1, 0), listed("t1", 3, 0), listed("t2", 2, 2)},
		"c": {{Task: "t1", System: "s"}},
	}
	if got := sp.listings(); len(got) != len(wantListed) {
		t.Errorf("listings of %d benchmarks, want %d", len(got), len(wantListed))
	}
	for bench, w := range wantListed {
		if l := sp.listings()[bench]; l == nil || !reflect.DeepEqual(slices.Collect(l.All()), w) {
			t.Errorf("%s listed\n%+v\nwant\n%+v", bench, l, w)
		}
	}
	got, err := loadTask(sp, "b", "t1")
	if err != nil {
		t.Fatal(err)
	}
	if wantT1 := []analysis.Detail{want[0], want[1], want[3]}; !reflect.DeepEqual(got, wantT1) {
		t.Errorf("t1 loaded\n%+v\nwant\n%+v", got, wantT1)
	}
	if got, err := loadTask(sp, "c", "t1"); err != nil || !reflect.DeepEqual(got, []analysis.Detail{{Task: "t1", System: "s"}}) {
		t.Errorf("c/t1 loaded %+v, %v", got, err)
	}
	if _, err := loadTask(sp, "b", "t9"); err == nil {
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
	if _, err := loadTask(sp, "b", "t2"); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("damaged record: err = %v", err)
	}
}

// TestSpillTaskDetails: the site's loads, through buffers given back and
// reused, give each task's details as they went in, a task spilled in
// two records (t1) included, while the details of another task are held
// (loaded, not yet given back) and after.
func TestSpillTaskDetails(t *testing.T) {
	sp, err := newDetailSpill(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer sp.close()
	var ds []analysis.Detail
	for i, task := range []string{"t1", "t2", "t1", "t3", "t3"} { // t1 in two records
		d := filled(i)
		d.Task, d.Output = task, strings.Repeat(task+" output ", 200*(i+1))
		ds = append(ds, d)
	}
	r := &analysis.Result{Benchmark: "b", Details: slices.Clone(ds)}
	if err := sp.put(r); err != nil {
		t.Fatal(err)
	}
	want := map[string][]analysis.Detail{"t1": {ds[0], ds[2]}, "t2": {ds[1]}, "t3": {ds[3], ds[4]}}
	tests := []struct{ held, task string }{
		{"t1", "t2"}, {"t2", "t1"}, {"t3", "t1"}, {"t1", "t3"}, {"t3", "t3"},
	}
	for _, tc := range tests {
		t.Run(tc.held+" held, "+tc.task, func(t *testing.T) {
			h, releaseH, err := sp.taskDetails("b", tc.held)
			if err != nil {
				t.Fatal(err)
			}
			for range 3 { // loaded, given back, loaded again into the same buffer
				got, release, err := sp.taskDetails("b", tc.task)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want[tc.task]) {
					t.Fatalf("%s loaded\n%+v\nwant\n%+v", tc.task, got, want[tc.task])
				}
				release()
			}
			if !reflect.DeepEqual(h, want[tc.held]) {
				t.Errorf("%s, held, changed to\n%+v", tc.held, h)
			}
			releaseH()
		})
	}
	if _, release, err := sp.taskDetails("b", "t9"); err == nil || release != nil {
		t.Errorf("a task never spilled: %v", err)
	}
}

// TestSpillFields checks that every field of Detail, Verdict and Call
// comes back from a record: each struct is filled by reflection, every
// field with a value of its own, and a field the record does not write
// comes back zero. A field of a kind fill does not know, or not
// exported, fails here too, so that no field is dropped without a change
// to the record's encoding.
func TestSpillFields(t *testing.T) {
	var ds []analysis.Detail
	for i := range 4 {
		ds = append(ds, filled(i))
	}
	for i := range ds {
		checkFilled(t, reflect.ValueOf(ds[i]), fmt.Sprintf("detail %d", i))
	}
	// a Call in every place (fill leaves some nil)
	call := func(n int) *analysis.Call {
		var c analysis.Call
		fill(reflect.ValueOf(&c).Elem(), n)
		checkFilled(t, reflect.ValueOf(c), "Call")
		return &c
	}
	ds[0].Call = call(7)
	ds[0].Verdicts[0].Call = call(8)
	got, err := decodeDetails(string(appendDetails(nil, ds)))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, ds) {
		t.Errorf("details came back as\n%+v\nwant\n%+v", got, ds)
	}
}

// checkFilled fails unless every field of struct v, and of the structs
// in it, is exported and not zero.
func checkFilled(t *testing.T, v reflect.Value, where string) {
	t.Helper()
	for i := range v.NumField() {
		f, ft := v.Field(i), v.Type().Field(i)
		at := where + "." + ft.Name
		if !ft.IsExported() {
			t.Errorf("%s is not exported: the spill writes exported fields only", at)
			continue
		}
		if f.Kind() == reflect.Pointer && f.IsNil() {
			continue // fill leaves every other pointer nil
		}
		if f.IsZero() {
			t.Errorf("%s is zero after fill: a kind fill does not know", at)
			continue
		}
		switch f.Kind() {
		case reflect.Struct:
			checkFilled(t, f, at)
		case reflect.Pointer:
			if f.Elem().Kind() == reflect.Struct {
				checkFilled(t, f.Elem(), at)
			}
		case reflect.Slice:
			for j := range f.Len() {
				if e := f.Index(j); e.Kind() == reflect.Struct {
					checkFilled(t, e, fmt.Sprintf("%s[%d]", at, j))
				}
			}
		}
	}
}

// TestSpillSharesCalls checks that the verdicts read from one exchange,
// which share a Call, come back sharing one (not a copy each), that the
// record writes such a Call once, and that Calls equal but not shared
// come back apart.
func TestSpillSharesCalls(t *testing.T) {
	c := &analysis.Call{Key: strings.Repeat("ab", 32), Sample: 2, Model: "m", Source: "api"}
	twin := *c
	var vs []analysis.Verdict
	for i := range 100 {
		vs = append(vs, analysis.Verdict{Judge: "j", Verdict: fmt.Sprint(i), Call: c})
	}
	vs = append(vs, analysis.Verdict{Judge: "j", Call: &twin})
	ds := []analysis.Detail{{Task: "t", Verdicts: vs, Call: &twin}}
	rec := appendDetails(nil, ds)
	// the key twice (c, then twin): not once per verdict
	if n := strings.Count(string(rec), c.Key); n != 2 {
		t.Errorf("the record holds the key %d times, want 2", n)
	}
	got, err := decodeDetails(string(rec))
	if err != nil || !reflect.DeepEqual(got, ds) {
		t.Fatalf("came back as %+v, %v", got, err)
	}
	g := got[0].Verdicts
	for i := 1; i < 100; i++ {
		if g[i].Call != g[0].Call {
			t.Fatalf("verdict %d has a Call of its own", i)
		}
	}
	if g[100].Call == g[0].Call || got[0].Call != g[100].Call {
		t.Error("the twin Call came back as the shared one, or the detail's not as the twin")
	}
}

// FuzzDetailRecord checks that reading any bytes as a spilled record
// (details or texts) never panics and takes no more memory than the
// bytes allow, and that any record read without an error is written
// back to the same bytes: the encoding is canonical.
func FuzzDetailRecord(f *testing.F) {
	f.Add(string(appendDetails(nil, []analysis.Detail{filled(1), filled(2)})))
	f.Add(string(analysis.AppendTexts(nil, []string{"a", "", "\xff\x00"})))
	f.Add("")
	f.Add("\x01\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01")
	f.Add("\x01\x00\x00\x00\x00\x00\x01\x00\x00\x00\x02\x02")
	f.Fuzz(func(t *testing.T, rec string) {
		if ds, err := decodeDetails(rec); err == nil {
			if back := string(appendDetails(nil, ds)); back != rec {
				t.Fatalf("%q reads as %+v, which is written as %q", rec, ds, back)
			}
		} else if ds != nil || !strings.Contains(err.Error(), "record damaged") {
			t.Fatalf("%q: %+v, %v", rec, ds, err)
		}
		if texts, err := analysis.DecodeTexts(rec); err == nil {
			if back := string(analysis.AppendTexts(nil, texts)); back != rec {
				t.Fatalf("%q reads as texts %q, which are written as %q", rec, texts, back)
			}
		} else if texts != nil || !strings.Contains(err.Error(), "record damaged") {
			t.Fatalf("%q: texts %q, %v", rec, texts, err)
		}
	})
}

// FuzzDetailRoundTrip checks that details made from any strings and
// numbers, with Calls nil, shared and apart in any pattern, come back
// from their record as they were, and texts too.
func FuzzDetailRoundTrip(f *testing.F) {
	f.Add("task", "an output\x00\xff", "key", int64(-3), uint64(0x1234), uint8(5))
	f.Add("", "", "", int64(math.MinInt64), uint64(math.MaxUint64), uint8(0))
	f.Fuzz(func(t *testing.T, a, b, key string, sample int64, shape uint64, n uint8) {
		calls := []*analysis.Call{nil, {Key: key, Sample: int(sample), Model: a, Source: b}, {Key: b, Sample: -int(sample), Model: key}}
		pick := func() *analysis.Call { // by two bits of shape at a time
			c := calls[shape%4%3]
			shape = shape>>2 | shape<<62
			return c
		}
		var ds []analysis.Detail
		for i := range int(n % 8) {
			d := analysis.Detail{Task: a, System: b, Question: key, Output: a + b, Score: fmt.Sprint(i), Call: pick()}
			for j := range i {
				d.Verdicts = append(d.Verdicts, analysis.Verdict{Judge: b, Verdict: a[:min(j, len(a))], Reasoning: key, Call: pick()})
			}
			ds = append(ds, d)
		}
		got, err := decodeDetails(string(appendDetails(nil, ds)))
		if err != nil || !reflect.DeepEqual(got, ds) {
			t.Fatalf("%+v came back as %+v, %v", ds, got, err)
		}
		texts := []string{a, b, key}[:n%4]
		if len(texts) == 0 {
			texts = nil // no texts read as nil
		}
		back, err := analysis.DecodeTexts(string(analysis.AppendTexts(nil, texts)))
		if err != nil || !reflect.DeepEqual(back, texts) {
			t.Fatalf("%q came back as %q, %v", texts, back, err)
		}
	})
}

// TestRecordVarints checks the record's integers against encoding/binary
// at the edges of their ranges, and that an overlong, cut or longer than
// shortest varint is damage.
func TestRecordVarints(t *testing.T) {
	for _, x := range []uint64{0, 1, 127, 128, 16383, 16384, 1<<63 - 1, 1 << 63, ^uint64(0)} {
		b := binary.AppendUvarint(nil, x)
		d := decoder{text: string(b)}
		if got := d.uvarint(); got != x || d.err != nil || d.at != len(b) {
			t.Errorf("uvarint %d read as %d (%v, at %d of %d)", x, got, d.err, d.at, len(b))
		}
	}
	for _, x := range []int64{0, -1, 1, -64, 64, math.MinInt64, math.MaxInt64} {
		d := decoder{text: string(binary.AppendVarint(nil, x))}
		if n := d.int(); int64(n) != x || d.err != nil {
			t.Errorf("varint %d read as %d (%v)", x, n, d.err)
		}
	}
	for _, bad := range []string{"", "\x80", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", "\x80\x00", "\x81\x80\x00"} {
		d := decoder{text: bad}
		if d.uvarint(); d.err == nil {
			t.Errorf("%q read as a varint", bad)
		}
	}
}

// TestDamagedRecords checks records cut at every byte, and with counts
// and markers out of range, read as damaged, with nothing made.
func TestDamagedRecords(t *testing.T) {
	rec := string(appendDetails(nil, []analysis.Detail{filled(1), filled(2), filled(3)}))
	for i := range len(rec) {
		if ds, err := decodeDetails(rec[:i]); err == nil || ds != nil {
			t.Fatalf("cut at %d of %d: %d details, %v", i, len(rec), len(ds), err)
		}
	}
	for name, bad := range map[string]string{
		"a count past the end":        "\xff\xff\xff\xff\x0f",
		"7 bytes for two details":     "\x02\x00\x00\x00\x00\x00\x00\x00",
		"a marker of 3":               "\x01\x00\x00\x00\x00\x00\x00\x03",
		"the previous Call, none yet": "\x01\x00\x00\x00\x00\x00\x00\x02",
		"a byte left over":            "\x01\x00\x00\x00\x00\x00\x00\x00\x00",
	} {
		if ds, err := decodeDetails(bad); err == nil || ds != nil || !strings.Contains(err.Error(), "record damaged") {
			t.Errorf("%s: %+v, %v", name, ds, err)
		}
	}
	if _, err := decodeDetails("\x01\x00\x00\x00\x00\x00\x00\x00"); err != nil {
		t.Errorf("one empty detail: %v", err)
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

// BenchmarkDetailSpill spills and loads a task like FinDeepResearch's at
// full scale: 240 details (a system's report each) of 4 KB outputs with
// 150 verdicts each (an item's answer and grade), a judge's exchange
// shared by 10, and a Put and Get of each report's texts.
func BenchmarkDetailSpill(b *testing.B) {
	var ds []analysis.Detail
	question := strings.Repeat("What was the company's operating margin? ", 20)
	for i := range 240 {
		d := analysis.Detail{
			Task: "task-0042", System: fmt.Sprintf("system-%02d", i%12), Question: question,
			Output: strings.Repeat(fmt.Sprintf("report %d, ", i), 400), Score: "58.0/100",
			Call: &analysis.Call{Key: strings.Repeat("0f", 32), Sample: i % 3, Model: "gpt-4o", Source: "api"},
		}
		var c *analysis.Call
		for j := range 150 {
			if j%10 == 0 {
				c = &analysis.Call{Key: fmt.Sprintf("%064x", i*60+j), Model: "judge-model", Source: "batch"}
			}
			d.Verdicts = append(d.Verdicts, analysis.Verdict{Judge: "judge", Verdict: "correct", Reasoning: fmt.Sprintf("answer %d matches the truth", j), Call: c})
		}
		ds = append(ds, d)
	}
	texts := []string{ds[0].Output, "answer one", "answer two", strings.Repeat("reason ", 40)}
	sp, err := newDetailSpill(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer sp.close()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r := &analysis.Result{Benchmark: "findeepresearch", Details: append([]analysis.Detail(nil), ds...)}
		for j := range ds {
			r.Details[j].Task = fmt.Sprint("task-", i)
		}
		if err := sp.put(r); err != nil {
			b.Fatal(err)
		}
		got, err := loadTask(sp, "findeepresearch", fmt.Sprint("task-", i))
		if err != nil || len(got) != len(ds) {
			b.Fatal(len(got), err)
		}
		for range 240 {
			if got := sp.Get(sp.Put(texts)); len(got) != len(texts) {
				b.Fatal(got)
			}
		}
	}
}

// loadTask is detailSpill.loadInto into a buffer of its own.
func loadTask(sp *detailSpill, bench, task string) ([]analysis.Detail, error) {
	ds, _, err := sp.loadInto(nil, bench, task)
	return ds, err
}

// TestSpillListKeepsNoSource: while put reads a benchmark's details,
// what it keeps of them (the site's listing, and the maps of texts
// already copied it makes it with) holds none of the buffers their texts were cut from,
// such as the record of a task's outputs a benchmark read back from the
// spill: at 8x the full-scale demo, those records were tens of MB of
// the run's peak. Each task's question and score are cut from a large
// buffer that a cleanup watches. Before the last task's details are
// yielded, put still holds the previous task's (a run not yet written),
// so the buffers of all tasks but the last two must be collectable; once
// put returns, all of them.
func TestSpillListKeepsNoSource(t *testing.T) {
	sp, err := newDetailSpill(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer sp.close()
	const tasks = 8
	var freed atomic.Int32
	collect := func(want int32) int32 {
		for range 20 {
			runtime.GC()
			if freed.Load() >= want {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		return freed.Load()
	}
	var during int32
	lazy := func(yield func(analysis.Detail) bool) {
		for i := range tasks {
			if i == tasks-1 {
				// put still reads (so whatever it keeps is live); the
				// last task's details it has are the previous task's
				during = collect(tasks - 2)
			}
			src := make([]byte, 1<<20) // a task's record of outputs
			copy(src, fmt.Sprintf("question %d|score %d", i, i%3))
			runtime.AddCleanup(&src[0], func(n *atomic.Int32) { n.Add(1) }, &freed)
			text := unsafe.String(&src[0], len(src))
			q, score := text[:len("question 0")], text[len("question 0|"):len("question 0|score 0")]
			for _, sys := range []string{"a", "b"} {
				if !yield(analysis.Detail{Task: fmt.Sprint("t", i), System: sys, Question: q, Score: score}) {
					return
				}
			}
		}
	}
	r := &analysis.Result{Benchmark: "b", LazyDetails: lazy}
	if err := sp.put(r); err != nil {
		t.Fatal(err)
	}
	if during < tasks-2 {
		t.Errorf("%d of %d earlier tasks' source buffers freed while put read the details", during, tasks-2)
	}
	if n := collect(tasks); n != tasks {
		t.Errorf("%d of %d source buffers freed after put; the listed details keep the rest", n, tasks)
	}
	l := slices.Collect(sp.listings()["b"].All())
	if len(l) != 2*tasks || l[2*tasks-1].Question != fmt.Sprint("question ", tasks-1) || l[5].Score != "score 2" {
		t.Errorf("listed details: %+v", l)
	}
	runtime.KeepAlive(sp)
}
