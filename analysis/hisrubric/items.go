package hisrubric

import (
	"fmt"
	"io/fs"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/finrepro/finrepro/results"
)

// A Capability is what a grading item tests.
type Capability string

// The four capabilities, in the paper's order.
const (
	Recognition    Capability = "recognition"
	Calculation    Capability = "calculation"
	Abstraction    Capability = "abstraction"
	Interpretation Capability = "interpretation"
)

// Capabilities lists the capabilities in display order.
var Capabilities = []Capability{Recognition, Calculation, Abstraction, Interpretation}

// A Protocol is how a judge grades an item.
type Protocol string

// The three grading protocols.
const (
	// Accuracy: the judge says whether the prediction matches; 1 or 0.
	Accuracy Protocol = "accuracy"
	// Claim: the judge extracts 3-5 claims from the ground truth, then
	// says which the prediction covers; score = share covered.
	Claim Protocol = "claim"
	// Criterion: the judge writes a 10-point criterion from the ground
	// truth, then awards points; score = points / 10.
	Criterion Protocol = "criterion"
)

// An Item is one grading item: a cell of a report table, what it tests
// and how it is graded.
type Item struct {
	ID         string `json:"id"`
	Subsection string `json:"subsection"` // "2.1"
	// Row is the table's row field; in a free-row table "@N" stands for
	// the row the company's ground truth names.
	Row string `json:"row"`
	// Column is a template column name (placeholders allowed).
	Column     string     `json:"column"`
	Capability Capability `json:"capability"`
	Protocol   Protocol   `json:"protocol"`
	// Numeric items also get the deterministic numeric comparison.
	Numeric bool `json:"numeric,omitempty"`
	// Facet says which part of a cell is graded when one cell carries
	// several items ("date", "summary", "judgement").
	Facet string `json:"facet,omitempty"`
}

// FreeRow reports whether the item's row is named by the ground truth.
func (it *Item) FreeRow() bool { return strings.HasPrefix(it.Row, "@") }

// A Company is one researched company.
type Company struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Ticker   string `json:"ticker"`
	Exchange string `json:"exchange"`
	Market   string `json:"market"`   // US UK CN HK AU SG MY ID
	Language string `json:"language"` // en zh-CN zh-HK id
	Industry string `json:"industry"`
	FY       int    `json:"fy"` // latest fiscal year
	CY       int    `json:"cy"` // latest calendar year of market data
	// ValuationDate is the date of the P/E valuation, YYYY-MM-DD.
	ValuationDate string `json:"valuation_date"`
}

// Params are the company's structure parameters.
func (c *Company) Params() Params { return Params{FY: c.FY, CY: c.CY, Date: c.ValuationDate} }

// A Truth is the ground truth of one item for one company.
type Truth struct {
	Company string `json:"company"`
	Item    string `json:"item"`
	Answer  string `json:"answer"`
	// Row names the row of a free-row item (a board member).
	Row string `json:"row,omitempty"`
}

// ConfigVersion is the version line of config.json.
const ConfigVersion = "findeepresearch-config/1"

// A Config names the evaluated systems and the judge.
type Config struct {
	Version string  `json:"version"`
	Systems []Agent `json:"systems"`
	Judge   Agent   `json:"judge"`
}

// An Agent is a system or judge and how to call it.
type Agent struct {
	Name     string         `json:"name"`
	Group    string         `json:"group,omitempty"` // thinking, thinking+search, deep-research
	Provider string         `json:"provider"`
	Model    string         `json:"model"`
	Params   map[string]any `json:"params,omitempty"`
}

// Languages in display order, with the names used in prompts.
var (
	Languages     = []string{"en", "zh-CN", "zh-HK", "id"}
	languageNames = map[string]string{"en": "English", "zh-CN": "Simplified Chinese", "zh-HK": "Traditional Chinese", "id": "Bahasa Indonesia"}
	// Markets in the paper's order.
	Markets = []string{"US", "UK", "CN", "HK", "AU", "SG", "MY", "ID"}
)

var (
	idRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	dateRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
)

// Inputs are a benchmark's loaded and cross-checked inputs.
type Inputs struct {
	Config    *Config
	Structure *Structure
	Items     []Item
	Companies []Company
	// truth holds the ground truth of every company and item (see
	// Truth).
	truth truthTable
}

// A truthTable holds the ground truth of item i for company ci as entry
// k = ci*len(Items)+i: its answer is text[at[2k]:at[2k+1]] and its row
// (free-row items) text[at[2k+1]:at[2k+2]]. One string and 8 bytes an
// entry, not maps of strings: at 8 times full scale (126,464 truths)
// the maps held 40 MB while the run scored, this 7.9 MB.
type truthTable struct {
	text string
	at   []uint32
}

// Truth returns company ci's ground truth of item i (indexes of
// Companies and Items).
func (in *Inputs) Truth(ci, i int) Truth {
	k := 2 * (ci*len(in.Items) + i)
	t, at := in.truth.text, in.truth.at
	return Truth{Company: in.Companies[ci].ID, Item: in.Items[i].ID, Answer: t[at[k]:at[k+1]], Row: t[at[k+1]:at[k+2]]}
}

// answer is company ci's ground truth answer of item i.
func (in *Inputs) answer(ci, i int) string {
	k := 2 * (ci*len(in.Items) + i)
	return in.truth.text[in.truth.at[k]:in.truth.at[k+1]]
}

// Input file names.
const (
	ConfigFile    = "config.json"
	StructureFile = "structure.json"
	ItemsFile     = "items.jsonl"
	CompaniesFile = "companies.jsonl"
	TruthFile     = "truth.jsonl"
)

// Load reads and cross-checks the inputs in fsys.
func Load(fsys fs.FS) (*Inputs, error) {
	in := &Inputs{}
	var err error
	if in.Config, err = loadConfig(fsys); err != nil {
		return nil, err
	}
	if in.Structure, err = LoadStructure(fsys, StructureFile); err != nil {
		return nil, err
	}
	if in.Items, err = loadItems(fsys, in.Structure); err != nil {
		return nil, err
	}
	if in.Companies, err = loadCompanies(fsys); err != nil {
		return nil, err
	}
	if err := in.loadTruth(fsys); err != nil {
		return nil, err
	}
	return in, nil
}

// byID returns the indexes 0, ..., n-1 in the order of id(i), which are
// distinct.
func byID(n int, id func(i int) string) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return id(order[a]) < id(order[b]) })
	return order
}

func open(fsys fs.FS, name string, fn func(f fs.File) error) error {
	f, err := fsys.Open(name)
	if err != nil {
		return fmt.Errorf("hisrubric: %w", err)
	}
	defer f.Close()
	return fn(f)
}

func loadConfig(fsys fs.FS) (*Config, error) {
	var c Config
	err := open(fsys, ConfigFile, func(f fs.File) error { return results.ReadJSON(f, ConfigFile, &c) })
	if err != nil {
		return nil, err
	}
	if c.Version != ConfigVersion {
		return nil, results.Errorf(ConfigFile, 0, "version", "got %q, want %q", c.Version, ConfigVersion)
	}
	if len(c.Systems) == 0 {
		return nil, results.Errorf(ConfigFile, 0, "systems", "empty")
	}
	names := map[string]bool{}
	check := func(field string, a Agent) error {
		switch {
		case strings.TrimSpace(a.Name) == "":
			return results.Errorf(ConfigFile, 0, field+".name", "empty")
		case a.Provider == "":
			return results.Errorf(ConfigFile, 0, field+".provider", "empty")
		case a.Model == "":
			return results.Errorf(ConfigFile, 0, field+".model", "empty")
		case names[a.Name]:
			return results.Errorf(ConfigFile, 0, field+".name", "repeated name %q", a.Name)
		}
		names[a.Name] = true
		return nil
	}
	for i, s := range c.Systems {
		if err := check(fmt.Sprintf("systems[%d]", i), s); err != nil {
			return nil, err
		}
	}
	if err := check("judge", c.Judge); err != nil {
		return nil, err
	}
	return &c, nil
}

func loadItems(fsys fs.FS, s *Structure) ([]Item, error) {
	var items []Item
	seen := map[string]bool{}
	err := open(fsys, ItemsFile, func(f fs.File) error {
		return results.EachJSONL(f, ItemsFile, func(line int, it *Item) error {
			bad := func(field, format string, args ...any) error {
				return results.Errorf(ItemsFile, line, field, format, args...)
			}
			if !idRE.MatchString(it.ID) {
				return bad("id", "invalid id %q", it.ID)
			}
			if seen[it.ID] {
				return bad("id", "repeated id %q", it.ID)
			}
			seen[it.ID] = true
			sub := s.Subsection(it.Subsection)
			if sub == nil {
				return bad("subsection", "no subsection %q in %s", it.Subsection, StructureFile)
			}
			if sub.Table.FreeRows != it.FreeRow() {
				return bad("row", "%q: free-row tables take rows @1, @2, ...; other tables a row field", it.Row)
			}
			if !it.FreeRow() && !containsKey(sub.Table.Rows, it.Row) {
				return bad("row", "no row %q in table of %s", it.Row, it.Subsection)
			}
			if !containsKey(sub.Table.Columns, it.Column) || key(it.Column) == key(sub.Table.Columns[0]) {
				return bad("column", "no value column %q in table of %s", it.Column, it.Subsection)
			}
			switch it.Capability {
			case Recognition, Calculation, Abstraction, Interpretation:
			default:
				return bad("capability", "unknown capability %q", it.Capability)
			}
			switch it.Protocol {
			case Accuracy, Claim, Criterion:
			default:
				return bad("protocol", "unknown protocol %q", it.Protocol)
			}
			items = append(items, *it)
			return nil
		})
	})
	if err == nil && len(items) == 0 {
		err = results.Errorf(ItemsFile, 0, "", "no items")
	}
	return items, err
}

func loadCompanies(fsys fs.FS) ([]Company, error) {
	var cs []Company
	seen := map[string]bool{}
	err := open(fsys, CompaniesFile, func(f fs.File) error {
		return results.EachJSONL(f, CompaniesFile, func(line int, c *Company) error {
			bad := func(field, format string, args ...any) error {
				return results.Errorf(CompaniesFile, line, field, format, args...)
			}
			switch {
			case !idRE.MatchString(c.ID):
				return bad("id", "invalid id %q", c.ID)
			case seen[c.ID]:
				return bad("id", "repeated id %q", c.ID)
			case strings.TrimSpace(c.Name) == "":
				return bad("name", "empty")
			case c.Market == "":
				return bad("market", "empty")
			case languageNames[c.Language] == "":
				return bad("language", "unknown language %q (want en, zh-CN, zh-HK or id)", c.Language)
			case c.FY < 1900 || c.FY > 2200:
				return bad("fy", "implausible fiscal year %d", c.FY)
			case c.CY < 1900 || c.CY > 2200:
				return bad("cy", "implausible calendar year %d", c.CY)
			case !dateRE.MatchString(c.ValuationDate):
				return bad("valuation_date", "want YYYY-MM-DD, got %q", c.ValuationDate)
			}
			seen[c.ID] = true
			cs = append(cs, *c)
			return nil
		})
	})
	if err == nil && len(cs) == 0 {
		err = results.Errorf(CompaniesFile, 0, "", "no companies")
	}
	return cs, err
}

// loadTruth reads the ground truth of every company and item, then puts
// the items and the companies in order of id (input order never reaches
// an output) and the truth in the same order.
func (in *Inputs) loadTruth(fsys fs.FS) error {
	nItems := len(in.Items)
	items := make(map[string]int, nItems)
	for i := range in.Items {
		items[in.Items[i].ID] = i
	}
	companies := make(map[string]int, len(in.Companies))
	for ci := range in.Companies {
		companies[in.Companies[ci].ID] = ci
	}
	// Entry k (input order) is raw[off[k] : off[k]+alen[k]+rlen[k]],
	// its answer then its row; alen is 0 until it is read.
	n := len(in.Companies) * nItems
	off, alen, rlen := make([]uint32, n), make([]uint32, n), make([]uint32, n)
	var raw []byte
	err := open(fsys, TruthFile, func(f fs.File) error {
		return results.EachJSONL(f, TruthFile, func(line int, t *Truth) error {
			bad := func(field, format string, args ...any) error {
				return results.Errorf(TruthFile, line, field, format, args...)
			}
			ci, ok := companies[t.Company]
			if !ok {
				return bad("company", "unknown company %q", t.Company)
			}
			i, ok := items[t.Item]
			var it *Item
			if ok {
				it = &in.Items[i]
			}
			k := ci*nItems + i
			switch {
			case it == nil:
				return bad("item", "unknown item %q", t.Item)
			case alen[k] > 0:
				return bad("item", "repeated truth for %s %s", t.Company, t.Item)
			case strings.TrimSpace(t.Answer) == "":
				return bad("answer", "empty")
			case it.FreeRow() && key(t.Row) == "":
				return bad("row", "item %s needs the row it names", t.Item)
			case !it.FreeRow() && t.Row != "":
				return bad("row", "item %s has a fixed row", t.Item)
			case len(raw)+len(t.Answer)+len(t.Row) > math.MaxUint32:
				return bad("answer", "the ground truth is over %d bytes", uint64(math.MaxUint32))
			}
			off[k], alen[k], rlen[k] = uint32(len(raw)), uint32(len(t.Answer)), uint32(len(t.Row))
			raw = append(append(raw, t.Answer...), t.Row...)
			return nil
		})
	})
	if err != nil {
		return err
	}
	for ci := range in.Companies {
		for i := range in.Items {
			if alen[ci*nItems+i] == 0 {
				return results.Errorf(TruthFile, 0, "", "no truth for company %s item %s", in.Companies[ci].ID, in.Items[i].ID)
			}
		}
	}
	itemOrder := byID(nItems, func(i int) string { return in.Items[i].ID })
	coOrder := byID(len(in.Companies), func(ci int) string { return in.Companies[ci].ID })
	var text strings.Builder
	text.Grow(len(raw))
	at := make([]uint32, 1, 2*n+1)
	for _, c := range coOrder {
		for _, i := range itemOrder {
			k := c*nItems + i
			text.Write(raw[off[k] : off[k]+alen[k]+rlen[k]])
			at = append(at, at[len(at)-1]+alen[k], at[len(at)-1]+alen[k]+rlen[k])
		}
	}
	in.truth = truthTable{text: text.String(), at: at}
	in.Items = permuted(in.Items, itemOrder)
	in.Companies = permuted(in.Companies, coOrder)
	return nil
}

// permuted returns xs[order[0]], xs[order[1]], ...
func permuted[T any](xs []T, order []int) []T {
	out := make([]T, len(xs))
	for k, i := range order {
		out[k] = xs[i]
	}
	return out
}

func containsKey(list []string, s string) bool {
	for _, x := range list {
		if key(x) == key(s) {
			return true
		}
	}
	return false
}

// DefaultItems returns the 247 grading items of Default(): 91
// Recognition, 53 Calculation, 29 Abstraction and 74 Interpretation
// items, 350 marks at weights 1, 1, 2, 2.
func DefaultItems() []Item {
	s := Default()
	var items []Item
	add := func(sub, row, col string, c Capability, p Protocol, numeric bool, facet string) {
		id := sub + "-" + slug(row) + "-" + slug(strings.Trim(col, "{}"))
		if facet != "" {
			id += "-" + facet
		}
		items = append(items, Item{ID: id, Subsection: sub, Row: row, Column: col, Capability: c, Protocol: p, Numeric: numeric, Facet: facet})
	}
	each := func(sub string, cols []string, fn func(row, col string)) {
		for _, row := range s.Subsection(sub).Table.Rows {
			for _, col := range cols {
				fn(row, col)
			}
		}
	}
	fy3 := []string{"{FY}", "{FY_1}", "{FY_2}"}
	fy2 := []string{"{FY}", "{FY_1}"}
	cy2 := []string{"{CY}", "{CY_1}"}
	for _, spec := range []struct {
		sub     string
		cols    []string
		cap     Capability
		proto   Protocol
		numeric bool
	}{
		{"1.1", []string{"Value"}, Recognition, Accuracy, false},
		{"1.2", fy2, Abstraction, Claim, false},
		{"1.3", []string{"Value"}, Abstraction, Claim, false},
		{"2.1", fy3, Recognition, Accuracy, true},
		{"2.2", fy3, Recognition, Accuracy, true},
		{"2.3", fy3, Recognition, Accuracy, true},
		{"2.4", fy3, Calculation, Accuracy, true},
		{"2.5", fy3, Abstraction, Claim, false},
	} {
		each(spec.sub, spec.cols, func(row, col string) { add(spec.sub, row, col, spec.cap, spec.proto, spec.numeric, "") })
	}
	// Business analysis cells carry a summary (claims) and a judgement
	// (criterion) item each.
	each("3.1", []string{"Answer"}, func(row, col string) {
		add("3.1", row, col, Interpretation, Claim, false, "summary")
		add("3.1", row, col, Interpretation, Criterion, false, "judgement")
	})
	each("3.2", fy2, func(row, col string) {
		add("3.2", row, col, Interpretation, Claim, false, "summary")
		add("3.2", row, col, Interpretation, Criterion, false, "judgement")
	})
	each("3.3", fy2, func(row, col string) {
		add("3.3", row, col, Abstraction, Claim, false, "summary")
		add("3.3", row, col, Interpretation, Criterion, false, "judgement")
	})
	each("4.1", fy2, func(row, col string) { add("4.1", row, col, Abstraction, Claim, false, "") })
	for m := 1; m <= 4; m++ {
		row := fmt.Sprintf("@%d", m)
		add("5.1", row, "Position", Recognition, Accuracy, false, "")
		add("5.1", row, "Total Income", Recognition, Accuracy, true, "")
	}
	// Internal-control cells: a concrete conclusion (accuracy) and a
	// description (claims).
	each("5.2", fy2, func(row, col string) {
		add("5.2", row, col, Interpretation, Accuracy, false, "conclusion")
		add("5.2", row, col, Interpretation, Claim, false, "description")
	})
	each("6.1", cy2, func(row, col string) { add("6.1", row, col, Calculation, Accuracy, true, "") })
	for _, sub := range []string{"6.2", "6.3"} {
		each(sub, cy2, func(row, col string) {
			if strings.HasPrefix(row, "Top 1 ") {
				if sub == "6.2" {
					add(sub, row, col, Recognition, Accuracy, false, "date")
				} else {
					add(sub, row, col, Calculation, Accuracy, false, "car")
				}
			}
			add(sub, row, col, Interpretation, Claim, false, "summary")
		})
	}
	add("6.4", "Diluted EPS", "Value as of {DATE}", Recognition, Accuracy, true, "")
	add("6.4", "P/E Ratio", "Value as of {DATE}", Calculation, Accuracy, true, "")
	return items
}

// slug lower-cases s and keeps letters and digits, joined by dashes.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
	}
	return b.String()
}
