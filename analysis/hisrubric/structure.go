package hisrubric

import (
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/finrepro/finrepro/results"
)

// StructureVersion is the version line of structure.json.
const StructureVersion = "hisrubric-structure/1"

// A Structure is the analytical structure every report must follow:
// numbered sections, each with numbered subsections holding one markdown
// table.
type Structure struct {
	Version  string    `json:"version"`
	Sections []Section `json:"sections"`
}

// A Section is a top-level ("## Section 1: Company Overview") part.
type Section struct {
	ID          string       `json:"id"` // "1"
	Title       string       `json:"title"`
	Subsections []Subsection `json:"subsections"`
}

// A Subsection ("### S1.1: Basic Information") holds one table.
type Subsection struct {
	ID    string    `json:"id"` // "1.1"
	Title string    `json:"title"`
	Table TableSpec `json:"table"`
}

// A TableSpec is a required markdown table. Column names may hold the
// placeholders {FY}, {FY_1}, {FY_2} (fiscal years), {CY}, {CY_1}
// (calendar years) and {DATE} (the valuation date), resolved per company
// by Params.
type TableSpec struct {
	Columns []string `json:"columns"`
	// Rows are the required first-column fields.
	Rows []string `json:"rows,omitempty"`
	// FreeRows marks a table whose rows are the report's own (board
	// members): at least one data row is required.
	FreeRows bool `json:"free_rows,omitempty"`
}

// Params resolve a structure's placeholders for one company.
type Params struct {
	FY   int    // latest fiscal year
	CY   int    // latest calendar year
	Date string // valuation date, YYYY-MM-DD
}

// Resolve replaces the placeholders in s.
func (p Params) Resolve(s string) string {
	if !strings.Contains(s, "{") {
		return s
	}
	// In order, each placeholder s holds at its turn.
	for k, ph := range placeholders {
		if !strings.Contains(s, ph) {
			continue
		}
		v := p.Date
		switch k {
		case 0, 1, 2:
			v = strconv.Itoa(p.FY - k)
		case 3, 4:
			v = strconv.Itoa(p.CY - (k - 3))
		}
		s = strings.ReplaceAll(s, ph, v)
	}
	return s
}

// Subsections lists every subsection in order.
func (s *Structure) Subsections() []*Subsection {
	var out []*Subsection
	for i := range s.Sections {
		for j := range s.Sections[i].Subsections {
			out = append(out, &s.Sections[i].Subsections[j])
		}
	}
	return out
}

// Subsection returns the subsection with the given id, or nil.
func (s *Structure) Subsection(id string) *Subsection {
	for i := range s.Sections {
		for j := range s.Sections[i].Subsections {
			if sub := &s.Sections[i].Subsections[j]; sub.ID == id {
				return sub
			}
		}
	}
	return nil
}

// MaxScore is the structure score of a perfect report: one point per
// section, subsection and table.
func (s *Structure) MaxScore() int {
	n := len(s.Sections)
	for _, sec := range s.Sections {
		n += 2 * len(sec.Subsections)
	}
	return n
}

// placeholders in the order Resolve replaces them.
var placeholders = [...]string{"{FY}", "{FY_1}", "{FY_2}", "{CY}", "{CY_1}", "{DATE}"}

// validate checks ids, titles and placeholders.
func (s *Structure) validate(file string) error {
	if s.Version != StructureVersion {
		return results.Errorf(file, 0, "version", "got %q, want %q", s.Version, StructureVersion)
	}
	if len(s.Sections) == 0 {
		return results.Errorf(file, 0, "sections", "empty")
	}
	seen := map[string]bool{}
	for i, sec := range s.Sections {
		f := fmt.Sprintf("sections[%d]", i)
		if sec.ID != strconv.Itoa(i+1) {
			return results.Errorf(file, 0, f+".id", "got %q, want %q", sec.ID, strconv.Itoa(i+1))
		}
		if key(sec.Title) == "" {
			return results.Errorf(file, 0, f+".title", "empty")
		}
		for j, sub := range sec.Subsections {
			g := fmt.Sprintf("%s.subsections[%d]", f, j)
			if want := fmt.Sprintf("%s.%d", sec.ID, j+1); sub.ID != want {
				return results.Errorf(file, 0, g+".id", "got %q, want %q", sub.ID, want)
			}
			if key(sub.Title) == "" {
				return results.Errorf(file, 0, g+".title", "empty")
			}
			if seen[key(sub.Title)] {
				return results.Errorf(file, 0, g+".title", "repeated title %q", sub.Title)
			}
			seen[key(sub.Title)] = true
			t := sub.Table
			if len(t.Columns) < 2 {
				return results.Errorf(file, 0, g+".table.columns", "fewer than 2 columns")
			}
			for k, c := range t.Columns {
				rest := c
				for _, ph := range placeholders {
					rest = strings.ReplaceAll(rest, ph, "")
				}
				if strings.ContainsAny(rest, "{}") {
					return results.Errorf(file, 0, fmt.Sprintf("%s.table.columns[%d]", g, k), "unknown placeholder in %q", c)
				}
			}
			if t.FreeRows != (len(t.Rows) == 0) {
				return results.Errorf(file, 0, g+".table.rows", "rows must be given unless free_rows is set, and only then")
			}
			rows := map[string]bool{}
			for k, r := range t.Rows {
				if key(r) == "" || rows[key(r)] {
					return results.Errorf(file, 0, fmt.Sprintf("%s.table.rows[%d]", g, k), "empty or repeated row %q", r)
				}
				rows[key(r)] = true
			}
		}
	}
	return nil
}

// LoadStructure reads and validates structure.json from fsys.
func LoadStructure(fsys fs.FS, name string) (*Structure, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, fmt.Errorf("hisrubric: %w", err)
	}
	defer f.Close()
	var s Structure
	if err := results.ReadJSON(f, name, &s); err != nil {
		return nil, err
	}
	if err := s.validate(name); err != nil {
		return nil, err
	}
	return &s, nil
}

// Default returns FinDeepResearch's structure (paper, Figure 7): 6
// sections, 18 subsections and 18 tables. Row fields written together in
// the figure ("Total/Current/Non-Current Assets") are separate rows, as
// in the paper's per-section specifications (Figure 9).
func Default() *Structure {
	fin := []string{"Field", "{FY}", "{FY_1}", "{FY_2}", "Multiplier", "Currency"}
	three := []string{"Field", "{FY}", "{FY_1}", "{FY_2}"}
	two := []string{"Perspective", "{FY}", "{FY_1}"}
	windows := func() []string {
		var r []string
		for _, sign := range []string{"Positive", "Negative"} {
			for k := 1; k <= 3; k++ {
				r = append(r, fmt.Sprintf("Top %d %s Window", k, sign))
			}
		}
		return r
	}
	tab := func(cols []string, rows ...string) TableSpec { return TableSpec{Columns: cols, Rows: rows} }
	return &Structure{Version: StructureVersion, Sections: []Section{
		{ID: "1", Title: "Company Overview", Subsections: []Subsection{
			{ID: "1.1", Title: "Basic Information", Table: tab([]string{"Field", "Value"},
				"Company Name", "Establishment Date", "Headquarters Location")},
			{ID: "1.2", Title: "Core Competencies", Table: tab(two,
				"Innovation Advantages", "Product Advantages", "Brand Recognition", "Reputation Ratings")},
			{ID: "1.3", Title: "Mission & Vision", Table: tab([]string{"Field", "Value"},
				"Mission Statement", "Vision Statement", "Core Values")},
		}},
		{ID: "2", Title: "Financial Performance", Subsections: []Subsection{
			{ID: "2.1", Title: "Income Statement", Table: tab(fin,
				"Revenue", "Cost of Goods Sold", "Gross Profit", "Operating Expenses", "Operating Income",
				"Net Profit", "Income before income taxes", "Income tax expense (benefit)", "Interest Expense")},
			{ID: "2.2", Title: "Balance Sheet", Table: tab(fin,
				"Total Assets", "Current Assets", "Non-Current Assets", "Total Liabilities", "Current Liabilities",
				"Non-Current Liabilities", "Shareholders' Equity", "Retained Earnings", "Total Equity and Liabilities",
				"Inventories", "Prepaid Expenses")},
			{ID: "2.3", Title: "Cash Flow Statement", Table: tab(fin,
				"Net Cash Flow from Operations", "Net Cash Flow from Investing", "Net Cash Flow from Financing",
				"Net Increase/Decrease in Cash", "Dividends")},
			{ID: "2.4", Title: "Key Financial Metrics", Table: tab(three,
				"Gross Profit Margin", "Operating Profit Margin", "Net Profit Margin", "Current Ratio", "Quick Ratio",
				"Debt-to-Equity", "Interest Coverage", "Asset Turnover", "Return on Equity", "Return on Assets",
				"Effective Tax Rate", "Dividend Payout Ratio")},
			{ID: "2.5", Title: "Operating Performance", Table: tab(three,
				"Revenue by Product/Service", "Revenue by Geographic Region")},
		}},
		{ID: "3", Title: "Business Analysis", Subsections: []Subsection{
			{ID: "3.1", Title: "Profitability Analysis", Table: tab([]string{"Perspective", "Answer"},
				"Revenue & Direct-Cost Dynamics", "Operating Efficiency", "External & One-Off Impact")},
			{ID: "3.2", Title: "Financial Performance Summary", Table: tab(two,
				"Comprehensive Financial Health", "Profitability and Earnings Quality", "Operational Efficiency",
				"Risk Identification and Early Warning", "Future Financial Performance Projection")},
			{ID: "3.3", Title: "Business Competitiveness", Table: tab(two, "Business Model", "Market Position")},
		}},
		{ID: "4", Title: "Risk Factors", Subsections: []Subsection{
			{ID: "4.1", Title: "Risk Factors", Table: tab(two,
				"Market Risks", "Operational Risks", "Financial Risks", "Compliance Risks")},
		}},
		{ID: "5", Title: "Corporate Governance", Subsections: []Subsection{
			{ID: "5.1", Title: "Board Composition", Table: TableSpec{Columns: []string{"Name", "Position", "Total Income"}, FreeRows: true}},
			{ID: "5.2", Title: "Internal Controls", Table: tab(two,
				"Risk Assessment Procedures", "Control Activities", "Monitoring Mechanisms",
				"Identified Material Weaknesses/Deficiencies", "Effectiveness")},
		}},
		{ID: "6", Title: "Market Performance", Subsections: []Subsection{
			{ID: "6.1", Title: "Stock Performance", Table: tab([]string{"Field", "{CY}", "{CY_1}"},
				"Lowest Adjusted Closing Price", "Highest Adjusted Closing Price", "Total Log Return",
				"Log Excess Return", "Maximum Drawdown", "Annualized Volatility")},
			{ID: "6.2", Title: "News Sentiment Analysis", Table: tab([]string{"Field", "{CY}", "{CY_1}"}, windows()...)},
			{ID: "6.3", Title: "Market Reaction to News", Table: tab([]string{"Field", "{CY}", "{CY_1}"}, windows()...)},
			{ID: "6.4", Title: "Price-to-Earnings (P/E) Ratio", Table: tab([]string{"Field", "Value as of {DATE}"},
				"Adjusted Closing Price", "Diluted EPS", "P/E Ratio")},
		}},
	}}
}
