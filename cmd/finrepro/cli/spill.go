package cli

import (
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sync"
	"unsafe"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/site"
)

// A detailSpill holds the details of benchmark results (each system's
// output and judges' verdicts on each task, what task pages show) in a
// file instead of in memory: at full scale they are about half of what a
// run keeps, and they grow with the bundle. Each task's details are one
// record (see appendDetails). Of a result's details, the spill keeps
// their listing (site.Listing: each one's task, system and score, and
// each task's question as listed), which the site's other pages show,
// and the site loads a task's details when it writes the task's page
// (site.Input.TaskDetails).
//
// Records are appended to a buffer that goes to the file in one write
// when full (spillBuffer): a run spills about a hundred thousand small
// records, and a write each made them 4.5 % of its CPU time, mostly in
// the system call. A record is read from the buffer until then.
type detailSpill struct {
	f    spillFile
	name string // removed when the file is closed, if not at once
	mu   sync.Mutex
	size int64
	// buf holds the records from byte flushed on, not yet written.
	buf     []byte
	flushed int64
	at      map[[2]string][]span     // benchmark and task -> its records
	listed  map[string]*site.Listing // benchmark -> its details' listing
	err     error                    // the first failed write, Put or Get
}

// A spillFile is what a detailSpill needs of its file (an *os.File).
type spillFile interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
}

// spillBuffer is how many bytes of records a detailSpill holds before it
// writes them: large enough that a write costs little per record, small
// beside what a run holds.
const spillBuffer = 256 << 10

var _ analysis.TextStore = (*detailSpill)(nil)

// A span is where a record is in the spill file.
type span struct{ off, n int64 }

// newDetailSpill creates a spill file in dir, the output folder: the
// details can be as large as the bundle's texts, more than a temporary
// folder in memory should take. The file's name is removed at once where
// the system allows it, so that a crash leaves nothing behind.
func newDetailSpill(dir string) (*detailSpill, error) {
	f, err := os.CreateTemp(dir, ".finrepro-details-*")
	if err != nil {
		return nil, fmt.Errorf("details: %w", err)
	}
	sp := &detailSpill{f: f, name: f.Name(), at: map[[2]string][]span{}, listed: map[string]*site.Listing{}, buf: make([]byte, 0, spillBuffer)}
	if os.Remove(f.Name()) == nil { // an open file can be unlinked (not on Windows: removed by close)
		sp.name = ""
	}
	return sp, nil
}

// put writes the details of r (Details, or those LazyDetails yields) to
// the spill, a record per run of details of one task, keeps their
// listing for the site (see listings) and drops them from r.
func (sp *detailSpill) put(r *analysis.Result) error {
	var lr site.Lister        // copies what it keeps of the details' texts
	var run []analysis.Detail // details of one task, in a row
	var buf []byte
	flush := func() error {
		if len(run) == 0 {
			return nil
		}
		buf = appendDetails(buf[:0], run)
		err := sp.write(r.Benchmark, run[0].Task, buf)
		run = run[:0]
		return err
	}
	for d := range r.EachDetail() {
		if len(run) > 0 && run[0].Task != d.Task {
			if err := flush(); err != nil {
				return err
			}
		}
		run = append(run, d)
		lr.Add(d)
	}
	if err := flush(); err != nil {
		return err
	}
	l := lr.Listing()
	sp.mu.Lock()
	sp.listed[r.Benchmark] = l
	sp.mu.Unlock()
	r.Details, r.LazyDetails = nil, nil
	return nil
}

// listings returns the listings of the results put so far, by
// benchmark (site.Input.Listings).
func (sp *detailSpill) listings() map[string]*site.Listing {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return maps.Clone(sp.listed)
}

// write appends one record of a task.
func (sp *detailSpill) write(bench, task string, b []byte) error {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	off, err := sp.appendLocked(b)
	if err != nil {
		return err
	}
	k := [2]string{bench, task}
	sp.at[k] = append(sp.at[k], span{off, int64(len(b))})
	return nil
}

// appendLocked appends record b, through the buffer, and returns where it
// is; sp.mu is held. After a failed write every later one fails too: the
// records the buffer held are lost.
func (sp *detailSpill) appendLocked(b []byte) (int64, error) {
	if sp.err != nil {
		return 0, sp.err
	}
	if len(sp.buf)+len(b) > cap(sp.buf) {
		if err := sp.flushLocked(); err != nil {
			return 0, err
		}
	}
	off := sp.size
	if len(b) > cap(sp.buf) { // larger than the buffer: written as it is
		if _, err := sp.f.WriteAt(b, off); err != nil {
			sp.err = fmt.Errorf("details file: %w", err)
			return 0, sp.err
		}
		sp.flushed += int64(len(b))
	} else {
		sp.buf = append(sp.buf, b...)
	}
	sp.size += int64(len(b))
	return off, nil
}

// flushLocked writes the buffered records; sp.mu is held.
func (sp *detailSpill) flushLocked() error {
	if len(sp.buf) == 0 {
		return nil
	}
	if _, err := sp.f.WriteAt(sp.buf, sp.flushed); err != nil {
		sp.err = fmt.Errorf("details file: %w", err)
		return sp.err
	}
	sp.flushed += int64(len(sp.buf))
	sp.buf = sp.buf[:0]
	return nil
}

// read returns the record of n bytes at off: a copy of the buffer's
// bytes while it holds them, else the file's (a record is in one or the
// other, never in both, and the file's part is never written again).
func (sp *detailSpill) read(off, n int64) ([]byte, error) {
	return sp.readInto(nil, off, n)
}

// readInto is read appending the record to dst and returning dst then;
// on an error, dst as it was.
func (sp *detailSpill) readInto(dst []byte, off, n int64) ([]byte, error) {
	start := len(dst)
	if n < 0 {
		return dst, fmt.Errorf("no record of %d bytes at byte %d", n, off)
	}
	out := slices.Grow(dst, int(n))[:start+int(n)]
	b := out[start:]
	sp.mu.Lock()
	if off >= sp.flushed {
		if at := off - sp.flushed; at+n <= int64(len(sp.buf)) {
			copy(b, sp.buf[at:at+n])
			sp.mu.Unlock()
			return out, nil
		}
		sp.mu.Unlock()
		return dst, fmt.Errorf("no record of %d bytes at byte %d", n, off)
	}
	sp.mu.Unlock()
	if _, err := sp.f.ReadAt(b, off); err != nil {
		return dst, err
	}
	return out, nil
}

// Put appends texts, which a benchmark's collection keeps out of memory
// (analysis.TextStore), as a record; the first failure is kept (see
// failed) and the record is then one Get answers with nil.
func (sp *detailSpill) Put(texts []string) analysis.TextRef {
	bp := putBufs.Get().(*[]byte)
	defer putBufs.Put(bp)
	b := analysis.AppendTexts((*bp)[:0], texts)
	*bp = b
	sp.mu.Lock()
	defer sp.mu.Unlock()
	off, err := sp.appendLocked(b)
	if err != nil {
		return analysis.TextRef{}
	}
	return analysis.TextRef{Off: off, Len: int64(len(b))}
}

// putBufs holds the buffers Put encodes records in before they are
// copied into the spill's: a new one per record was a sixth of what
// reproduce allocated while collecting the full-scale demo (heap
// profile, alloc_space), records being encoded while the collections run.
var putBufs = sync.Pool{New: func() any { return new([]byte) }}

// Get reads the texts Put stored at ref; nil for the zero TextRef, and
// on a failure, which is kept (see failed).
func (sp *detailSpill) Get(ref analysis.TextRef) []string {
	if ref.Len == 0 {
		return nil
	}
	b, err := sp.read(ref.Off, ref.Len)
	var texts []string
	if err == nil {
		texts, err = analysis.DecodeTexts(bytesText(b))
	}
	if err != nil {
		sp.mu.Lock()
		if sp.err == nil {
			sp.err = fmt.Errorf("texts at byte %d: %w", ref.Off, err)
		}
		sp.mu.Unlock()
		return nil
	}
	return texts
}

// failed returns the first failure of a write, Put or Get, nil when
// none.
func (sp *detailSpill) failed() error {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.err
}

// loadInto returns the details of one task of a benchmark, in the order
// of its result's details, reading the records into buf's array from
// buf[:0] on, and the buffer that holds them: the details' texts are cut
// from it, and are only valid until it is reused. It is safe for
// concurrent use.
func (sp *detailSpill) loadInto(buf []byte, bench, task string) ([]analysis.Detail, []byte, error) {
	sp.mu.Lock()
	spans := sp.at[[2]string{bench, task}]
	sp.mu.Unlock()
	buf = buf[:0]
	if len(spans) == 0 {
		return nil, buf, fmt.Errorf("details: %s has no task %s", bench, task)
	}
	var out []analysis.Detail
	for _, s := range spans {
		// a record's texts stay where they are when a later one moves
		// the buffer: they are cut from the array they were read into
		start := len(buf)
		var err error
		if buf, err = sp.readInto(buf, s.off, s.n); err != nil {
			return nil, buf, fmt.Errorf("details: %s task %s: %w", bench, task, err)
		}
		ds, err := decodeDetails(bytesText(buf[start:]))
		if err != nil {
			return nil, buf, fmt.Errorf("details: %s task %s: %w", bench, task, err)
		}
		if len(spans) == 1 {
			return ds, buf, nil
		}
		out = append(out, ds...)
	}
	return out, buf, nil
}

// taskBufs holds the buffers the site's task pages load their details
// into, one per page being written, given back once it is written:
// reading each page's records into a new buffer was 151 MB, the most
// reproduce allocated of anything at full scale 1x (1.75 GB in all;
// heap profile at exit, alloc_space).
var taskBufs = sync.Pool{New: func() any { return new([]byte) }}

// taskDetails loads the details of one task for the site into a pooled
// buffer, which release gives back (site.Input.TaskDetails).
func (sp *detailSpill) taskDetails(bench, task string) (ds []analysis.Detail, release func(), err error) {
	bp := taskBufs.Get().(*[]byte)
	ds, *bp, err = sp.loadInto(*bp, bench, task)
	if err != nil {
		taskBufs.Put(bp)
		return nil, nil, err
	}
	return ds, func() { taskBufs.Put(bp) }, nil
}

// bytesText is b as a string, without a copy: the texts a record holds
// are cut from it, and b, read for the record alone, is never written
// again. A task's details can be megabytes, held twice for each page
// being written when copied.
func bytesText(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// close closes and removes the spill file.
func (sp *detailSpill) close() {
	sp.f.Close() // read and written by this run only: nothing to lose
	if sp.name != "" {
		os.Remove(sp.name) // best effort: a hidden temporary file
	}
}

// The records' encoding. A record is a list of details or of texts:
// a list is its length and its elements, a string its length and its
// bytes, a length a uvarint, an int a varint, in the order of the
// struct's fields (Detail: Task, System, Question, Output, Score,
// Verdicts, Call; Verdict: Judge, Verdict, Reasoning, Call; Call: Key,
// Sample, Model, Source). A *Call is a byte, 0 for nil, 1 followed by
// the Call, or 2 for the record's previous Call again: the verdicts read
// from one exchange share one Call, and come back sharing it. The
// encoding is canonical (a varint in its shortest form, nothing else
// accepted), so a record read and written again is the same bytes.
// TestSpillFields fails when Detail, Verdict or Call gains a field this
// does not write.

// Call markers of a record.
const (
	callNil  = 0
	callNew  = 1
	callLast = 2
)

// appendDetails appends the record of ds to b.
func appendDetails(b []byte, ds []analysis.Detail) []byte {
	var last *analysis.Call
	b = binary.AppendUvarint(b, uint64(len(ds)))
	for i := range ds {
		d := &ds[i]
		b = appendString(b, d.Task)
		b = appendString(b, d.System)
		b = appendString(b, d.Question)
		b = appendString(b, d.Output)
		b = appendString(b, d.Score)
		b = binary.AppendUvarint(b, uint64(len(d.Verdicts)))
		for j := range d.Verdicts {
			v := &d.Verdicts[j]
			b = appendString(b, v.Judge)
			b = appendString(b, v.Verdict)
			b = appendString(b, v.Reasoning)
			b = appendCall(b, v.Call, &last)
		}
		b = appendCall(b, d.Call, &last)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendCall appends c, the record's previous Call being *last.
func appendCall(b []byte, c *analysis.Call, last **analysis.Call) []byte {
	switch {
	case c == nil:
		return append(b, callNil)
	case c == *last:
		return append(b, callLast)
	}
	*last = c
	b = append(b, callNew)
	b = appendString(b, c.Key)
	b = binary.AppendVarint(b, int64(c.Sample))
	b = appendString(b, c.Model)
	return appendString(b, c.Source)
}

// A decoder reads a record from text; err is set at the first thing
// that does not fit, and everything read after it is zero. The strings
// it returns are cut from text.
type decoder struct {
	text string
	at   int
	err  error
	last *analysis.Call // the record's previous Call
}

// decodeDetails reads a record of details; the error is "record
// damaged" when rec is not one, whole.
func decodeDetails(rec string) ([]analysis.Detail, error) {
	d := decoder{text: rec}
	ds := d.details()
	if err := d.end(); err != nil {
		return nil, err
	}
	return ds, nil
}

// end returns the decoder's error, or one when bytes are left over.
func (d *decoder) end() error {
	if d.err == nil && d.at != len(d.text) {
		d.fail()
	}
	return d.err
}

func (d *decoder) details() []analysis.Detail {
	// a detail takes 7 bytes at least: five lengths, a count, a marker
	n := d.count(7)
	if n == 0 {
		return nil // nil, as a list with nothing in it reads
	}
	ds := make([]analysis.Detail, n)
	for i := range ds {
		x := &ds[i]
		x.Task = d.string()
		x.System = d.string()
		x.Question = d.string()
		x.Output = d.string()
		x.Score = d.string()
		if nv := d.count(4); nv > 0 { // three lengths and a marker
			x.Verdicts = make([]analysis.Verdict, nv)
			for j := range x.Verdicts {
				v := &x.Verdicts[j]
				v.Judge = d.string()
				v.Verdict = d.string()
				v.Reasoning = d.string()
				v.Call = d.call()
			}
		}
		x.Call = d.call()
		if d.err != nil {
			return nil
		}
	}
	return ds
}

// count reads the length of a list whose elements take min bytes at
// least, which bounds it by the bytes left before anything is made.
func (d *decoder) count(min int) int {
	n := d.uvarint()
	if n > uint64((len(d.text)-d.at)/min) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *decoder) string() string {
	n := d.uvarint()
	if n > uint64(len(d.text)-d.at) {
		d.fail()
		return ""
	}
	s := d.text[d.at : d.at+int(n)]
	d.at += int(n)
	return s
}

func (d *decoder) call() *analysis.Call {
	if d.at >= len(d.text) {
		d.fail()
		return nil
	}
	m := d.text[d.at]
	d.at++
	switch m {
	case callNil:
		return nil
	case callLast:
		if d.last == nil {
			d.fail()
		}
		return d.last
	case callNew:
		c := &analysis.Call{Key: d.string(), Sample: d.int(), Model: d.string(), Source: d.string()}
		if d.err != nil {
			return nil
		}
		d.last = c
		return c
	}
	d.at--
	d.fail()
	return nil
}

// int reads a varint (binary.Varint's zig-zag) that fits an int.
func (d *decoder) int() int {
	ux := d.uvarint()
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	if int64(int(x)) != x {
		d.fail()
		return 0
	}
	return int(x)
}

// uvarint reads a uvarint in its shortest form (binary.Uvarint's rules,
// on the string itself, without the longer forms of a number).
func (d *decoder) uvarint() uint64 {
	var x uint64
	for i, shift := 0, uint(0); i < binary.MaxVarintLen64 && d.at+i < len(d.text); i, shift = i+1, shift+7 {
		c := d.text[d.at+i]
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				break // overflow
			}
			if i > 0 && c == 0 {
				break // not the shortest form
			}
			d.at += i + 1
			return x | uint64(c)<<shift
		}
		x |= uint64(c&0x7f) << shift
	}
	d.fail()
	return 0
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = fmt.Errorf("record damaged at byte %d", d.at)
	}
	d.at = len(d.text)
}
