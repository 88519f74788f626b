package report

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/xuri/excelize/v2"

	"github.com/finrepro/finrepro/analysis"
)

// A Provenance says where a set of results came from; workbooks carry it
// on their Provenance sheet.
type Provenance struct {
	// Bundle is the bundle's name; BundleSHA256 the hash of its manifest.
	Bundle, BundleSHA256 string
	// Producer and Version name the program that made the outputs.
	Producer, Version string
	// CacheDigest identifies the cache contents the results were read from.
	CacheDigest string
	// Synthetic is true when any result comes from simulated replies.
	Synthetic bool
	// Settings are knob=value pairs (configuration and sensitivity
	// settings); writers sort them.
	Settings [][2]string
}

// Workbook constants.
const (
	// docDate is the creation and modification date of every workbook: a
	// fixed date, because the clock would make two runs differ.
	docDate = "2000-01-01T00:00:00Z"
	// maxSheetName is Excel's limit on a sheet name, in UTF-16 units.
	maxSheetName = 31
	// Column widths, in characters, are the widest cell's display width
	// plus a margin, within these bounds.
	minColWidth, maxColWidth, colMargin = 8, 60, 2
	// syntheticBanner is the first row of the README and Provenance sheets of
	// a workbook holding synthetic data.
	syntheticBanner = SyntheticNote
	readmeSheet     = "README"
	provSheet       = "Provenance"
)

// WriteWorkbook writes an XLSX workbook titled title: a README sheet that
// lists every sheet with its table's title and caption (and every column
// with its description), a Provenance sheet from prov, and one sheet per
// table in order. A table sheet has the column headers in row 1 (frozen,
// with an autofilter) and the first column frozen, one row per table row, numbers stored as numbers
// (FormatNumber's value) shown with the column's decimals, undefined cells
// as the text "n/a", best values bold and second-best underlined, and the
// notes under the table after a blank row. Every text is stored as a
// string, never as a formula. Sheet names are the table names made valid
// and unique (see sheetNames). When prov.Synthetic, the first row of the
// README and Provenance sheets says the data is synthetic. The bytes
// depend only on the arguments.
func WriteWorkbook(w io.Writer, title string, tables []*analysis.Table, prov Provenance) error {
	return writeWorkbook(w, title, tables, prov, false)
}

// WriteCombinedWorkbook is WriteWorkbook for tables of several
// benchmarks: every sheet name is prefixed by its table's benchmark
// ("icbcbench.main_results"), so that a sheet's name says where it comes
// from whatever the other sheets.
func WriteCombinedWorkbook(w io.Writer, title string, tables []*analysis.Table, prov Provenance) error {
	return writeWorkbook(w, title, tables, prov, true)
}

func writeWorkbook(w io.Writer, title string, tables []*analysis.Table, prov Provenance, prefixed bool) error {
	for _, t := range tables {
		if err := check(t); err != nil {
			return fmt.Errorf("report: workbook %q: %w", title, err)
		}
	}
	f := excelize.NewFile()
	defer f.Close() // an in-memory file: Close only drops temporary state
	f.SetZipWriter(newSortedZip)
	if err := buildWorkbook(f, title, tables, prov, prefixed); err != nil {
		return fmt.Errorf("report: workbook %q: %w", title, err)
	}
	// The content types list extensions in map order once a part with a
	// new extension is added; sort them so the bytes are stable.
	d := f.ContentTypes.Defaults
	sort.Slice(d, func(i, j int) bool { return d[i].Extension < d[j].Extension })
	if err := f.Write(w); err != nil {
		return fmt.Errorf("report: workbook %q: %w", title, err)
	}
	return nil
}

// buildWorkbook fills the new file f. Every sheet is written through an
// excelize StreamWriter, which keeps a sheet as its XML text instead of
// excelize's cell structures (a per-task table of thousands of rows held
// as cells was most of the workbooks' 34 MB of live heap at the peak of an
// 8x reproduce; BenchmarkWorkbook measures the writer).
func buildWorkbook(f *excelize.File, title string, tables []*analysis.Table, prov Provenance, prefixed bool) error {
	if err := f.SetDocProps(&excelize.DocProperties{
		Created:        docDate,
		Modified:       docDate,
		Creator:        xmlText(prov.Producer),
		LastModifiedBy: xmlText(prov.Producer),
		Title:          xmlText(title),
		Version:        xmlText(prov.Version),
	}); err != nil {
		return err
	}
	if err := f.SetSheetName(f.GetSheetName(0), readmeSheet); err != nil {
		return err
	}
	st := &styles{f: f, ids: map[styleKey]int{}}
	names := sheetNames(tables, prefixed)
	if err := writeReadme(f, st, title, tables, names, prov.Synthetic); err != nil {
		return err
	}
	if _, err := f.NewSheet(provSheet); err != nil {
		return err
	}
	if err := writeProvenance(f, st, prov); err != nil {
		return err
	}
	for i, t := range tables {
		if _, err := f.NewSheet(names[i]); err != nil {
			return fmt.Errorf("sheet %q: %w", names[i], err)
		}
		if err := writeTable(f, st, names[i], t); err != nil {
			return fmt.Errorf("sheet %q: %w", names[i], err)
		}
	}
	// README, the new file's first sheet, is its active one: SetActiveSheet
	// would parse every stream sheet back into cells
	return st.err
}

// A sheetWriter writes rows to one sheet through a StreamWriter, in
// order, remembering errors.
type sheetWriter struct {
	sw    *excelize.StreamWriter
	row   int
	cells []any // the row being written, reused
	err   error
}

// newSheetWriter starts writing the empty sheet: its column widths (from
// column A) and panes (nil for none) come first, as the sheet's XML has
// them before the rows.
func newSheetWriter(f *excelize.File, sheet string, panes *excelize.Panes, widths ...float64) (*sheetWriter, error) {
	sw, err := f.NewStreamWriter(sheet)
	if err != nil {
		return nil, err
	}
	for j, w := range widths {
		if err := sw.SetColWidth(j+1, j+1, w); err != nil {
			return nil, err
		}
	}
	if panes != nil {
		if err := sw.SetPanes(panes); err != nil {
			return nil, err
		}
	}
	return &sheetWriter{sw: sw}, nil
}

// line writes texts to the next row, from column A, with style (0 for
// none); empty texts leave their cells empty.
func (s *sheetWriter) line(style int, texts ...string) {
	s.row++
	s.cells = s.cells[:0]
	for _, v := range texts {
		var c any
		if v != "" {
			c = excelize.Cell{StyleID: style, Value: xmlText(v)}
		}
		s.cells = append(s.cells, c)
	}
	s.put()
}

// put writes s.cells (nil for an empty cell) to row s.row, if any is set.
func (s *sheetWriter) put() {
	if s.err == nil && slices.ContainsFunc(s.cells, func(c any) bool { return c != nil }) {
		s.err = s.sw.SetRow(cellRef(0, s.row), s.cells)
	}
}

// flush ends the sheet.
func (s *sheetWriter) flush() error {
	if s.err != nil {
		return s.err
	}
	return s.sw.Flush()
}

func writeReadme(f *excelize.File, st *styles, title string, tables []*analysis.Table, names []string, synthetic bool) error {
	s, err := newSheetWriter(f, readmeSheet, nil, 32, 20, 28, 50, 12, 80)
	if err != nil {
		return err
	}
	bold := st.get(styleKey{kind: kindHeader})
	if synthetic {
		s.line(st.get(styleKey{kind: kindBanner}), syntheticBanner)
	}
	s.line(bold, title)
	s.row++
	s.line(bold, "Sheet", "Benchmark", "Table", "Title", "Caption")
	s.line(0, readmeSheet, "", "", "What every sheet and column is")
	s.line(0, provSheet, "", "", "Where the data come from: bundle, program version, cache and settings")
	for i, t := range tables {
		s.line(0, names[i], t.Benchmark, t.Name, t.Title, t.Caption)
	}
	s.row++
	s.line(0, "In table sheets the best value of each marked column is bold and the second best underlined; n/a marks an undefined value.")
	s.row++
	s.line(bold, "Sheet", "Column", "Header", "Unit", "Better", "Description")
	for i, t := range tables {
		for _, c := range t.Columns {
			s.line(0, names[i], c.Name, c.Header(), c.Unit, better(c.Better), c.Doc)
		}
	}
	return s.flush()
}

func writeProvenance(f *excelize.File, st *styles, prov Provenance) error {
	s, err := newSheetWriter(f, provSheet, nil, 24, 80)
	if err != nil {
		return err
	}
	bold := st.get(styleKey{kind: kindHeader})
	if prov.Synthetic {
		s.line(st.get(styleKey{kind: kindBanner}), syntheticBanner)
	}
	s.line(bold, "Provenance")
	s.row++
	synthetic := "no"
	if prov.Synthetic {
		synthetic = "yes"
	}
	s.line(bold, "Field", "Value")
	s.line(0, "Bundle", prov.Bundle)
	s.line(0, "Bundle SHA-256", prov.BundleSHA256)
	s.line(0, "Producer", prov.Producer)
	s.line(0, "Version", prov.Version)
	s.line(0, "Cache digest", prov.CacheDigest)
	s.line(0, "Synthetic data", synthetic)
	s.row++
	s.line(bold, "Setting", "Value")
	settings := slices.Clone(prov.Settings)
	slices.SortStableFunc(settings, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	for _, kv := range settings {
		s.line(0, kv[0], kv[1])
	}
	return s.flush()
}

func writeTable(f *excelize.File, st *styles, sheet string, t *analysis.Table) error {
	heads := make([]string, len(t.Columns))
	widths := make([]float64, len(t.Columns))
	for j, c := range t.Columns {
		heads[j] = header(c)
		widths[j] = float64(textWidth(heads[j]))
	}
	for _, r := range t.Rows {
		for j, c := range r {
			widths[j] = max(widths[j], float64(textWidth(c.Format(c.DecimalsIn(t.Columns[j])))))
		}
	}
	for j := range widths {
		widths[j] = min(max(widths[j]+colMargin, minColWidth), maxColWidth)
	}
	// The autofilter is set before the stream starts: the sheet's
	// properties it marks come first in the sheet's XML.
	last := cellRef(len(t.Columns)-1, len(t.Rows)+1)
	if err := f.AutoFilter(sheet, "A1:"+last, nil); err != nil {
		return err
	}
	// The header row and the first column (the row names) stay in view.
	panes := &excelize.Panes{Freeze: true, XSplit: 1, YSplit: 1, TopLeftCell: "B2", ActivePane: "bottomRight"}
	if len(t.Columns) == 1 {
		panes = &excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"}
	}
	s, err := newSheetWriter(f, sheet, panes, widths...)
	if err != nil {
		return err
	}
	s.line(st.get(styleKey{kind: kindHeader}), heads...)
	m, _ := marks(t)
	// styles are created in row order, which fixes their IDs
	for i, r := range t.Rows {
		s.row++
		s.cells = s.cells[:0]
		for j, c := range r {
			key := styleKey{decimals: c.DecimalsIn(t.Columns[j]), mark: m[j][i]}
			var v any
			switch {
			case c.Undef:
				key.kind = kindUndef
				v = "n/a"
			case c.IsNum:
				key.kind = kindNumber
				v = Value(c, c.DecimalsIn(t.Columns[j]))
			default:
				key = styleKey{kind: kindText, wrap: widths[j] >= maxColWidth}
				v = xmlText(c.Text)
			}
			s.cells = append(s.cells, excelize.Cell{StyleID: st.get(key), Value: v})
		}
		s.put()
	}
	if len(t.Notes) > 0 {
		s.row++
		for i, n := range t.Notes {
			s.line(0, fmt.Sprintf("(%d) %s", i+1, n))
		}
	}
	return s.flush()
}

// Kinds of cell style.
const (
	kindPlain = iota
	kindHeader
	kindBanner
	kindText
	kindNumber
	kindUndef
)

type styleKey struct {
	kind     int
	decimals int
	mark     analysis.Mark
	wrap     bool
}

// styles creates each distinct style once, in the order first asked
// for, so that style IDs are deterministic; an error is kept and returned
// by the next sheetWriter call through style ID 0.
type styles struct {
	f   *excelize.File
	ids map[styleKey]int
	err error
}

func (s *styles) get(k styleKey) int {
	if id, ok := s.ids[k]; ok {
		return id
	}
	var st excelize.Style
	switch k.kind {
	case kindPlain:
		return 0
	case kindHeader:
		st.Font = &excelize.Font{Bold: true}
		st.Border = []excelize.Border{{Type: "bottom", Color: "000000", Style: 1}}
	case kindBanner:
		st.Font = &excelize.Font{Bold: true, Color: "C00000"}
	case kindText:
		st.Alignment = &excelize.Alignment{Vertical: "top", WrapText: k.wrap}
	case kindNumber:
		fmtCode := "0"
		if k.decimals > 0 {
			fmtCode += "." + strings.Repeat("0", k.decimals)
		}
		st.CustomNumFmt = &fmtCode
		st.Alignment = &excelize.Alignment{Vertical: "top"}
	case kindUndef:
		st.Alignment = &excelize.Alignment{Horizontal: "right", Vertical: "top"}
	}
	switch k.mark {
	case analysis.Best:
		st.Font = &excelize.Font{Bold: true}
	case analysis.Second:
		st.Font = &excelize.Font{Underline: "single"}
	}
	id, err := s.f.NewStyle(&st)
	if err != nil {
		s.err = errors.Join(s.err, err)
		return 0
	}
	s.ids[k] = id
	return id
}

// sheetNames returns a valid, unique sheet name for every table, in
// order. A name is the table's name with the characters Excel forbids
// (: \ / ? * [ ]) and a leading or trailing apostrophe replaced by '_'.
// Tables whose names clash (Excel compares sheet names without case), or
// clash with README, Provenance or Excel's reserved History, are named
// benchmark.name instead. Names are cut to 31 UTF-16 units; a name still
// taken gets the suffix ~2, ~3, ... (cut to fit). With prefixed, every
// name is benchmark.name.
func sheetNames(tables []*analysis.Table, prefixed bool) []string {
	reserved := map[string]bool{strings.ToLower(readmeSheet): true, strings.ToLower(provSheet): true, "history": true}
	base := make([]string, len(tables))
	count := map[string]int{}
	for i, t := range tables {
		base[i] = sheetName(t.Name)
		count[strings.ToLower(base[i])]++
	}
	used := maps.Clone(reserved)
	names := make([]string, len(tables))
	for i, t := range tables {
		full := base[i]
		if l := strings.ToLower(full); prefixed || count[l] > 1 || reserved[l] {
			full = sheetName(t.Benchmark + "." + t.Name)
		}
		n := cutUTF16(full, maxSheetName)
		for k := 2; used[strings.ToLower(n)]; k++ {
			suffix := "~" + strconv.Itoa(k)
			n = cutUTF16(full, maxSheetName-len(suffix)) + suffix
		}
		used[strings.ToLower(n)] = true
		names[i] = n
	}
	return names
}

// sheetName replaces what Excel forbids in a sheet name.
func sheetName(s string) string {
	s = strings.Map(func(r rune) rune {
		switch r {
		case ':', '\\', '/', '?', '*', '[', ']':
			return '_'
		}
		return r
	}, oneLine(s))
	if strings.HasPrefix(s, "'") {
		s = "_" + s[1:]
	}
	if strings.HasSuffix(s, "'") {
		s = s[:len(s)-1] + "_"
	}
	if strings.TrimSpace(s) == "" {
		s = "table"
	}
	return s
}

// cutUTF16 cuts s to at most n UTF-16 units, on a rune boundary, and
// makes sure it does not end with an apostrophe.
func cutUTF16(s string, n int) string {
	units := 0
	for i, r := range s {
		units += utf16.RuneLen(r)
		if units > n {
			s = s[:i]
			break
		}
	}
	if strings.HasSuffix(s, "'") {
		s = s[:len(s)-1] + "_"
	}
	return s
}

// xmlText replaces what XML 1.0 cannot carry (control characters other
// than tab, newline and carriage return; U+FFFE, U+FFFF; invalid UTF-8)
// with U+FFFD, as the XML encoder would, so that a workbook read back
// gives exactly the text written.
func xmlText(s string) string {
	ok := func(r rune) bool {
		return r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
	}
	clean := utf8.ValidString(s)
	for _, r := range s {
		clean = clean && ok(r)
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n <= 1 {
				b.WriteRune(utf8.RuneError)
				continue
			}
		}
		if !ok(r) {
			r = utf8.RuneError
		}
		b.WriteRune(r)
	}
	return b.String()
}

// textWidth is the display width of s's widest line.
func textWidth(s string) int {
	w := 0
	for _, line := range strings.Split(s, "\n") {
		w = max(w, twwidth.WidthWithOptions(line, twwidth.Options{}))
	}
	return w
}

// cellRef is the A1 reference of zero-based column j in one-based row.
func cellRef(j, row int) string { return colName(j) + strconv.Itoa(row) }

// colName is the letter name of zero-based column j (A, ..., Z, AA, ...).
func colName(j int) string {
	var b []byte
	for j++; j > 0; j = (j - 1) / 26 {
		b = append(b, byte('A'+(j-1)%26))
	}
	slices.Reverse(b)
	return string(b)
}

// A sortedZip is an excelize ZipWriter that compresses every entry as it
// is written and writes the entries sorted by name at Close, because
// excelize creates some entries (the stream sheets) in map order. Only
// the compressed bytes are kept: a stream sheet's XML is not copied
// whole. Entries are written one after the other, as with a zip.Writer.
type sortedZip struct {
	w       io.Writer
	entries map[string]*zipEntry
	deflate *flate.Writer
	open    *zipEntry // the entry being written
}

// A zipEntry is one compressed entry of a sortedZip.
type zipEntry struct {
	z    *sortedZip
	name string
	data bytes.Buffer // the deflated bytes
	crc  uint32
	size uint64
}

func newSortedZip(w io.Writer) excelize.ZipWriter {
	return &sortedZip{w: w, entries: map[string]*zipEntry{}}
}

// Create ends the entry being written and starts entry name.
func (z *sortedZip) Create(name string) (io.Writer, error) {
	if _, ok := z.entries[name]; ok {
		return nil, fmt.Errorf("zip: duplicate entry %s", name)
	}
	if err := z.end(); err != nil {
		return nil, err
	}
	e := &zipEntry{z: z, name: name}
	z.entries[name] = e
	if z.deflate == nil {
		// the level archive/zip compresses with
		z.deflate, _ = flate.NewWriter(&e.data, 5)
	} else {
		z.deflate.Reset(&e.data)
	}
	z.open = e
	return e, nil
}

// Write compresses p into the entry.
func (e *zipEntry) Write(p []byte) (int, error) {
	if e.z.open != e {
		return 0, fmt.Errorf("zip: write to %s after the next entry was created", e.name)
	}
	e.crc = crc32.Update(e.crc, crc32.IEEETable, p)
	e.size += uint64(len(p))
	return e.z.deflate.Write(p)
}

// end finishes the entry being written, if any.
func (z *sortedZip) end() error {
	if z.open == nil {
		return nil
	}
	z.open = nil
	return z.deflate.Close()
}

// AddFS is not used by the workbook writer.
func (z *sortedZip) AddFS(fs.FS) error { return errors.New("zip: AddFS not supported") }

// Close writes the entries in name order, without timestamps.
func (z *sortedZip) Close() error {
	if err := z.end(); err != nil {
		return err
	}
	zw := zip.NewWriter(z.w)
	for _, n := range slices.Sorted(maps.Keys(z.entries)) {
		e := z.entries[n]
		w, err := zw.CreateRaw(&zip.FileHeader{Name: n, Method: zip.Deflate, CRC32: e.crc,
			CompressedSize64: uint64(e.data.Len()), UncompressedSize64: e.size})
		if err != nil {
			return err
		}
		if _, err := e.data.WriteTo(w); err != nil {
			return err
		}
	}
	return zw.Close()
}
