package cli

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"strings"
	"sync"
	"unsafe"

	"github.com/finrepro/finrepro/analysis"
)

// A detailSpill holds the details of benchmark results (each system's
// output and judges' verdicts on each task, what task pages show) in a
// file instead of in memory: at full scale they are about half of what a
// run keeps, and they grow with the bundle. Each task's details are one
// record (see appendValue); a result keeps only its details' task,
// system, question and score, which the site's other pages show, and the
// site loads a task's details when it writes the task's page
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
	at      map[[2]string][]span // benchmark and task -> its records
	err     error                // the first failed write, Put or Get
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
	sp := &detailSpill{f: f, name: f.Name(), at: map[[2]string][]span{}, buf: make([]byte, 0, spillBuffer)}
	if os.Remove(f.Name()) == nil { // an open file can be unlinked (not on Windows: removed by close)
		sp.name = ""
	}
	return sp, nil
}

// put writes the details of r (Details, or those LazyDetails yields) to
// the spill, a record per run of details of one task, and cuts r's
// details to what the site lists (see detailSpill).
func (sp *detailSpill) put(r *analysis.Result) error {
	// the listed texts are copied, once per text, so that they keep
	// nothing larger alive (a question cut from a file's text)
	texts := map[string]string{}
	own := func(s string) string {
		c, ok := texts[s]
		if !ok {
			c = strings.Clone(s)
			texts[s] = c
		}
		return c
	}
	var listed []analysis.Detail
	var run []analysis.Detail // details of one task, in a row
	var buf []byte
	flush := func() error {
		if len(run) == 0 {
			return nil
		}
		buf = appendValue(buf[:0], reflect.ValueOf(run))
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
		listed = append(listed, analysis.Detail{Task: own(d.Task), System: own(d.System), Question: own(d.Question), Score: own(d.Score)})
	}
	if err := flush(); err != nil {
		return err
	}
	r.Details, r.LazyDetails = listed, nil
	return nil
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
	b := make([]byte, n)
	sp.mu.Lock()
	if off >= sp.flushed {
		if at := off - sp.flushed; at+n <= int64(len(sp.buf)) {
			copy(b, sp.buf[at:at+n])
			sp.mu.Unlock()
			return b, nil
		}
		sp.mu.Unlock()
		return nil, fmt.Errorf("no record of %d bytes at byte %d", n, off)
	}
	sp.mu.Unlock()
	if _, err := sp.f.ReadAt(b, off); err != nil {
		return nil, err
	}
	return b, nil
}

// Put appends texts, which a benchmark's collection keeps out of memory
// (analysis.TextStore), as a record; the first failure is kept (see
// failed) and the record is then one Get answers with nil.
func (sp *detailSpill) Put(texts []string) analysis.TextRef {
	b := appendValue(nil, reflect.ValueOf(texts))
	sp.mu.Lock()
	defer sp.mu.Unlock()
	off, err := sp.appendLocked(b)
	if err != nil {
		return analysis.TextRef{}
	}
	return analysis.TextRef{Off: off, Len: int64(len(b))}
}

// Get reads the texts Put stored at ref; nil for the zero TextRef, and
// on a failure, which is kept (see failed).
func (sp *detailSpill) Get(ref analysis.TextRef) []string {
	if ref.Len == 0 {
		return nil
	}
	b, err := sp.read(ref.Off, ref.Len)
	var texts []string
	if err == nil {
		d := decoder{text: bytesText(b)}
		d.value(reflect.ValueOf(&texts).Elem())
		if d.err != nil || d.at != len(d.text) {
			err = errors.New("record damaged")
		}
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

// load returns the details of one task of a benchmark, in the order of
// its result's details; safe for concurrent use.
func (sp *detailSpill) load(bench, task string) ([]analysis.Detail, error) {
	sp.mu.Lock()
	spans := sp.at[[2]string{bench, task}]
	sp.mu.Unlock()
	if len(spans) == 0 {
		return nil, fmt.Errorf("details: %s has no task %s", bench, task)
	}
	var out []analysis.Detail
	for _, s := range spans {
		b, err := sp.read(s.off, s.n)
		if err != nil {
			return nil, fmt.Errorf("details: %s task %s: %w", bench, task, err)
		}
		var ds []analysis.Detail
		d := decoder{text: bytesText(b)}
		d.value(reflect.ValueOf(&ds).Elem())
		if d.err != nil || d.at != len(d.text) {
			return nil, fmt.Errorf("details: %s task %s: record damaged", bench, task)
		}
		out = append(out, ds...)
	}
	return out, nil
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

// appendValue appends v, a value made of strings, booleans, integers,
// floats, slices, structs (their exported fields, in order) and pointers
// to them to b: a string or slice as its length (uvarint) and its
// contents, a number as a varint or its IEEE 754 bits, a pointer as 0 for
// nil or 1 and what it points to (pointers shared by several values come
// back as copies). Detail and Verdict gain fields without
// a change here; a kind it does not know panics, which the spill test
// catches.
func appendValue(b []byte, v reflect.Value) []byte {
	switch v.Kind() {
	case reflect.String:
		b = binary.AppendUvarint(b, uint64(v.Len()))
		return append(b, v.String()...)
	case reflect.Bool:
		if v.Bool() {
			return append(b, 1)
		}
		return append(b, 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return binary.AppendVarint(b, v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return binary.AppendUvarint(b, v.Uint())
	case reflect.Float32, reflect.Float64:
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(v.Float()))
	case reflect.Slice:
		b = binary.AppendUvarint(b, uint64(v.Len()))
		for i := range v.Len() {
			b = appendValue(b, v.Index(i))
		}
		return b
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				b = appendValue(b, v.Field(i))
			}
		}
		return b
	case reflect.Pointer:
		if v.IsNil() {
			return append(b, 0)
		}
		return appendValue(append(b, 1), v.Elem())
	}
	panic("details: cannot spill a " + v.Type().String())
}

// A decoder reads what appendValue wrote from text; err is set at the
// first thing that does not fit.
type decoder struct {
	text string
	at   int
	err  error
}

func (d *decoder) uvarint() uint64 {
	// binary.Uvarint's rules, on the string itself
	var x uint64
	for i, shift := 0, uint(0); i < binary.MaxVarintLen64 && d.at+i < len(d.text); i, shift = i+1, shift+7 {
		c := d.text[d.at+i]
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				break // overflow
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

// value sets v, which must be settable, from the record.
func (d *decoder) value(v reflect.Value) {
	if d.err != nil {
		return
	}
	switch v.Kind() {
	case reflect.String:
		n := d.uvarint()
		if n > uint64(len(d.text)-d.at) {
			d.fail()
			return
		}
		v.SetString(d.text[d.at : d.at+int(n)])
		d.at += int(n)
	case reflect.Bool:
		if d.at >= len(d.text) || d.text[d.at] > 1 {
			d.fail()
			return
		}
		v.SetBool(d.text[d.at] == 1)
		d.at++
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		ux := d.uvarint() // binary.Varint's zig-zag
		x := int64(ux >> 1)
		if ux&1 != 0 {
			x = ^x
		}
		v.SetInt(x)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(d.uvarint())
	case reflect.Float32, reflect.Float64:
		if len(d.text)-d.at < 8 {
			d.fail()
			return
		}
		v.SetFloat(math.Float64frombits(binary.LittleEndian.Uint64([]byte(d.text[d.at : d.at+8]))))
		d.at += 8
	case reflect.Slice:
		n := d.uvarint()
		if n > uint64(len(d.text)-d.at) { // every element takes a byte at least
			d.fail()
			return
		}
		if n == 0 {
			return // nil, as a slice with nothing in it reads
		}
		s := reflect.MakeSlice(v.Type(), int(n), int(n))
		for i := range int(n) {
			d.value(s.Index(i))
		}
		v.Set(s)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				d.value(v.Field(i))
			}
		}
	case reflect.Pointer:
		if d.at >= len(d.text) || d.text[d.at] > 1 {
			d.fail()
			return
		}
		d.at++
		if d.text[d.at-1] == 1 {
			p := reflect.New(v.Type().Elem())
			d.value(p.Elem())
			v.Set(p)
		}
	default:
		d.err = fmt.Errorf("cannot read a %s", v.Type())
	}
}
