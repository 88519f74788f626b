package cli

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/report"
)

// itemRecords writes each benchmark's item records (json/BENCHMARK/
// items.jsonl and csv/BENCHMARK/items.csv) into the output folder as
// soon as the benchmark is scored: they are generated from its
// collection, which can then be freed before the next benchmark is
// collected, instead of being kept until every output is written.
//
// A record of synthetic data says so, and data is synthetic when the
// bundle or any benchmark's replies are: a benchmark written before a
// later one turned out synthetic gets the field added to its JSONL
// records by finish.
type itemRecords struct {
	o    *outputFolder
	prov report.Provenance // Synthetic: the bundle's, or any result's written so far
	sums []report.FileSum
	// plain are the JSONL files written without the synthetic field.
	plain []string
}

// newItemRecords prepares the output folder o for the records: its
// folders are made and the SHA256SUMS of an earlier run removed (it must
// not vouch for a half-written folder). prov is the run's provenance
// before any result (see provenance).
func newItemRecords(o *outputFolder, prov report.Provenance) (*itemRecords, error) {
	if err := unvouch(o.dir); err != nil {
		return nil, err
	}
	return &itemRecords{o: o, prov: prov}, nil
}

// write writes the item records of r, when it has any, and lists them in
// the folder's marker at once, so that a run that fails later (a request
// missing from the cache) leaves a folder the next run writes into.
func (ir *itemRecords) write(r *analysis.Result) error {
	if r.Items == nil {
		return nil
	}
	ir.prov.Synthetic = ir.prov.Synthetic || r.Synthetic
	sums, err := report.WriteItemsHashed(ir.o.dir, []*analysis.Result{r}, ir.prov)
	if err != nil {
		return err
	}
	for _, s := range sums {
		if !ir.prov.Synthetic && strings.HasSuffix(s.Path, ".jsonl") {
			ir.plain = append(ir.plain, s.Path)
		}
	}
	ir.sums = append(ir.sums, sums...)
	return ir.o.note(report.Paths(sums))
}

// finish adds the synthetic field to the JSONL records written without
// it when any of res is synthetic, as report.WriteItemsJSONL writes it
// for synthetic data.
func (ir *itemRecords) finish(res []*analysis.Result) error {
	if !slices.ContainsFunc(res, func(r *analysis.Result) bool { return r.Synthetic }) {
		return nil
	}
	for _, rel := range ir.plain {
		sum, err := markSynthetic(filepath.Join(ir.o.dir, filepath.FromSlash(rel)))
		if err != nil {
			return err
		}
		for i := range ir.sums {
			if ir.sums[i].Path == rel {
				ir.sums[i].Sum = sum
			}
		}
	}
	ir.plain = nil
	return nil
}

// syntheticField is what report.WriteItemsJSONL appends to every record
// of synthetic data, before its closing brace.
const syntheticField = `,"synthetic":true`

// markSynthetic rewrites the JSONL item records at path, each a line
// that ends with "}", with syntheticField before that brace, through a
// temporary file renamed into place, and returns the new file's SHA-256.
func markSynthetic(path string) (sum [sha256.Size]byte, err error) {
	in, err := os.Open(path)
	if err != nil {
		return sum, err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-")
	if err != nil {
		return sum, err
	}
	defer os.Remove(tmp.Name()) // best effort; gone after the rename
	// readable by all, as report writes its files
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return sum, err
	}
	h := sha256.New()
	w := bufio.NewWriterSize(io.MultiWriter(tmp, h), 256<<10)
	r := bufio.NewReaderSize(in, 256<<10)
	for n := 1; ; n++ {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// a record longer than the buffer: read it whole (the
			// buffer's part copied before the next read reuses it)
			head := bytes.Clone(line)
			rest, rerr := r.ReadBytes('\n')
			line, err = append(head, rest...), rerr
		}
		if len(line) == 0 && errors.Is(err, io.EOF) {
			break
		}
		if err != nil && !errors.Is(err, io.EOF) {
			tmp.Close()
			return sum, err
		}
		body, ok := bytes.CutSuffix(line, []byte("}\n"))
		if !ok {
			tmp.Close()
			return sum, fmt.Errorf("%s: line %d: not an item record", path, n)
		}
		w.Write(body) // a write error is kept and returned by Flush
		w.WriteString(syntheticField + "}\n")
	}
	err = w.Flush()
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return sum, err
	}
	h.Sum(sum[:0])
	return sum, os.Rename(tmp.Name(), path)
}

// note adds written, relative slash-separated paths, to the files o's
// marker lists, and writes the marker; it is safe for concurrent use.
func (o *outputFolder) note(written []string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.listed = append(o.listed, written...)
	slices.Sort(o.listed)
	o.listed = slices.Compact(o.listed)
	return writeMarker(o.dir, o.listed)
}
