package hisrubric

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
)

func TestDefaultItems(t *testing.T) {
	items := DefaultItems()
	n := map[Capability]int{}
	marks := 0
	for _, it := range items {
		n[it.Capability]++
		marks += map[Capability]int{Recognition: 1, Calculation: 1, Abstraction: 2, Interpretation: 2}[it.Capability]
	}
	if len(items) != 247 || marks != 350 {
		t.Errorf("%d items, %d marks; want 247, 350", len(items), marks)
	}
	if n[Recognition] != 91 || n[Calculation] != 53 || n[Abstraction] != 29 || n[Interpretation] != 74 {
		t.Errorf("capabilities %v", n)
	}
	s := Default()
	if len(s.Sections) != 6 || len(s.Subsections()) != 18 || s.MaxScore() != 42 {
		t.Errorf("structure: %d sections, %d subsections, max %d", len(s.Sections), len(s.Subsections()), s.MaxScore())
	}
	// The defaults pass the loaders' checks.
	fsys := fstest.MapFS{}
	js, _ := json.Marshal(s)
	fsys[StructureFile] = &fstest.MapFile{Data: js}
	var lines []string
	for _, it := range items {
		b, _ := json.Marshal(it)
		lines = append(lines, string(b))
	}
	fsys[ItemsFile] = &fstest.MapFile{Data: []byte(strings.Join(lines, "\n"))}
	st, err := LoadStructure(fsys, StructureFile)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := loadItems(fsys, st); err != nil || len(got) != 247 {
		t.Fatalf("loadItems: %d, %v", len(got), err)
	}
}

// fullReport writes a report that follows s exactly, every cell "x".
func fullReport(s *Structure, p Params) string {
	return strings.NewReplacer("||", "|x|").Replace(strings.NewReplacer("||", "|x|").Replace(ResearchPrompt(s, &Company{Name: "N", FY: p.FY, CY: p.CY, ValuationDate: p.Date, Language: "en"})))
}

func TestCheckStructure(t *testing.T) {
	s := Default()
	p := Params{FY: 2024, CY: 2024, Date: "2025-09-20"}
	base := fullReport(s, p)
	if c := CheckStructure(Parse(base), s, p); c.Score != 42 || c.Fraction != 42 {
		for _, e := range c.Elements {
			if e.Score != 1 {
				t.Logf("%+v", e)
			}
		}
		t.Fatalf("template report scores %v / %v, want 42", c.Score, c.Fraction)
	}
	for _, c := range []struct {
		name    string
		edit    func(string) string
		score   float64
		reasons []string
	}{
		{"no spaces, as in the paper's figure", func(r string) string {
			return strings.NewReplacer("## Section 1: Company Overview", "##Section 1:Company Overview", "### S1.3: Mission & Vision", "###S1.3:Mission&Vision").Replace(r)
		}, 42, nil},
		{"case and numbering", func(r string) string {
			return strings.NewReplacer("## Section 2: Financial Performance", "## 2. FINANCIAL PERFORMANCE", "### S2.1: Income Statement", "### 2.1 income statement", "### S2.2: Balance Sheet", "#### Balance Sheet").Replace(r)
		}, 42, nil},
		{"fiscal years written FY2024", func(r string) string { return strings.ReplaceAll(r, "|2024|2023|2022|", "|FY2024|FY 2023|fy2022|") }, 42, nil},
		{"Chinese section header", func(r string) string {
			return strings.Replace(r, "## Section 3: Business Analysis", "## Section 3: 业务分析", 1)
		}, 40, []string{`section 3: misnamed: header "Section 3: 业务分析"`}},
		{"missing subsection", func(r string) string {
			i := strings.Index(r, "### S6.3")
			j := strings.Index(r, "### S6.4")
			return r[:i] + r[j:]
		}, 38, []string{"subsection 6.3: missing", "table 6.3: missing (no subsection header)"}},
		{"broken table", func(r string) string {
			i := strings.Index(r, "### S2.2")
			j := i + strings.Index(r[i:], "|:--")
			k := j + strings.Index(r[j:], "\n")
			return r[:j] + r[k+1:]
		}, 40, []string{"table 2.2: malformed: no alignment row under the header row"}},
		{"renamed column and lost row", func(r string) string {
			return strings.NewReplacer("|Perspective|Answer|", "|Perspective|Analysis|", "|Operating Efficiency|x|\n", "").Replace(r)
		}, 40, []string{`table 3.1: wrong columns: got ["Perspective", "Analysis"], want ["Perspective", "Answer"]; missing rows: ["Operating Efficiency"]`}},
		{"table missing", func(r string) string {
			i := strings.Index(r, "### S4.1: Risk Factors")
			j := strings.Index(r, "## Section 5")
			return r[:i] + "### S4.1: Risk Factors\n\nNo table here.\n\n" + r[j:]
		}, 40, []string{"table 4.1: missing"}},
		{"inline html, escaped pipes, ragged rows", func(r string) string {
			return strings.NewReplacer("|Company Name|x|", "|<b>Company Name</b>|a \\| b<br>c|", "|Revenue|x|x|x|x|x|", "|Revenue|1|").Replace(r)
		}, 42, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			chk := CheckStructure(Parse(c.edit(base)), s, p)
			var reasons []string
			for _, e := range chk.Elements {
				if e.Score != 1 {
					reasons = append(reasons, e.Kind+" "+e.ID+": "+e.Reason)
				}
			}
			if chk.Score != c.score || strings.Join(reasons, "\n") != strings.Join(c.reasons, "\n") {
				t.Errorf("score %v, reasons\n%s\nwant %v\n%s", chk.Score, strings.Join(reasons, "\n"), c.score, strings.Join(c.reasons, "\n"))
			}
		})
	}
}

func TestParseTable(t *testing.T) {
	d := Parse("text\n| A | B \\| C |\n|:--|--:|\n| 1 | <i>x</i><br/>y |\n| 2 |\n| 3 | 4 | 5 |\nafter")
	if len(d.Blocks) != 3 || d.Blocks[1].Kind != TableBlock {
		t.Fatalf("blocks %+v", d.Blocks)
	}
	tab := d.Blocks[1].Table
	want := [][]string{{"1", "x y"}, {"2", ""}, {"3", "4"}}
	if strings.Join(tab.Header, ",") != "A,B | C" || tab.Ragged != 2 {
		t.Errorf("header %q ragged %d", tab.Header, tab.Ragged)
	}
	for i, r := range want {
		if strings.Join(tab.Rows[i], ",") != strings.Join(r, ",") {
			t.Errorf("row %d = %q, want %q", i, tab.Rows[i], r)
		}
	}
	if d.Blocks[2].Kind != TextBlock || d.Blocks[2].Line != 7 {
		t.Errorf("text block %+v", d.Blocks[2])
	}
	big := strings.Repeat("a", MaxReport+10)
	if !Parse(big).Truncated {
		t.Error("long report not truncated")
	}
}

func TestNumeric(t *testing.T) {
	for _, c := range []struct {
		in      string
		v       float64
		percent bool
		ok      bool
	}{
		{"1,721", 1721, false, true},
		{"1,721 Millions USD", 1.721e9, false, true},
		{"USD 1.5bn", 1.5e9, false, true},
		{"(1,234)", -1234, false, true},
		{"-$12.5 million", -12.5e6, false, true},
		{"−3.2%", -3.2, true, true},
		{"12,5", 12.5, false, true},
		{"Rp 1.234.567 juta", 1.234567e12, false, true},
		{"3.5亿元", 3.5e8, false, true},
		{"120 百万", 1.2e8, false, true},
		{"2.3x", 2.3, false, true},
		{"2024-03-12", 0, false, false},
		{"N/A", 0, false, false},
		{"1 to 2", 0, false, false},
	} {
		q, ok := ParseQuantity(c.in)
		if ok != c.ok || ok && (!near(q.Value, c.v) || q.Percent != c.percent) {
			t.Errorf("ParseQuantity(%q) = %+v %v, want %v %v %v", c.in, q, ok, c.v, c.percent, c.ok)
		}
	}
	for _, c := range []struct {
		pred, truth string
		tol         Tolerance
		want        string
	}{
		{"1,721 Millions USD", "1.721 Billions USD", DefaultTolerance, "correct"},
		{"1,735", "1,721", DefaultTolerance, "correct"},   // 0.8% off
		{"1,745", "1,721", DefaultTolerance, "incorrect"}, // 1.4% off
		{"23.4%", "0.234", DefaultTolerance, "correct"},   // percent vs fraction
		{"23.4", "23.4%", DefaultTolerance, "correct"},    // percent written without its sign
		{"0.004", "0", DefaultTolerance, "correct"},       // absolute tolerance at zero
		{"-5%", "5%", DefaultTolerance, "incorrect"},      // signs compared
		{"-5%", "5%", Tolerance{Rel: 0.01, Abs: 0.005, IgnoreSign: true}, "correct"},
		{"about 3", "2024-01-01", DefaultTolerance, ""},
	} {
		if got := compare(quantityOf(c.pred), quantityOf(c.truth), c.tol); got != c.want {
			t.Errorf("compare(%q, %q) = %q, want %q", c.pred, c.truth, got, c.want)
		}
	}
}

func TestParseReply(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
		n  int
	}{
		{`{"items":[{"id":"a","verdict":"correct"}]}`, true, 1},
		{"Sure.\n```json\n{\"items\":[{\"id\":\"a\",\"covered\":[true,false]},{\"id\":\"b\",\"points\":3}]}\n```\nDone.", true, 2},
		{`{"items":[]}`, true, 0},
		{`{"verdicts":[]}`, false, 0},
		{`no json`, false, 0},
		{`{"items":[{"id":1}]}`, false, 0},
	} {
		r, err := ParseReply(c.in)
		if (err == nil) != c.ok || err == nil && len(r.Items) != c.n {
			t.Errorf("ParseReply(%q) = %+v, %v", c.in, r, err)
		}
	}
	for v, want := range map[string]float64{"Correct": 1, " incorrect.": 0, "YES": 1, "false": 0} {
		if got, ok := VerdictScore(v); !ok || got != want {
			t.Errorf("VerdictScore(%q) = %v %v", v, got, ok)
		}
	}
	if _, ok := VerdictScore("partly"); ok {
		t.Error("VerdictScore(partly) ok")
	}
}

func TestBatchRoundTrip(t *testing.T) {
	b := &Batch{Stage: StageAccuracy, Company: "Acme", Language: "en", Items: []BatchItem{{ID: "x", Question: "q", Truth: "t", Prediction: "p ``` \n```json\n"}}}
	got, err := ParseBatch(judgePrompt(b))
	if err != nil || got.Items[0].Prediction != b.Items[0].Prediction {
		t.Fatalf("round trip: %+v %v", got, err)
	}
}

func TestLoadErrors(t *testing.T) {
	cfg, _ := json.Marshal(fixtureConfig())
	st, _ := json.Marshal(fixtureStructure())
	base := func() fstest.MapFS {
		lines := func(vs ...any) []byte {
			var out []string
			for _, v := range vs {
				b, _ := json.Marshal(v)
				out = append(out, string(b))
			}
			return []byte(strings.Join(out, "\n") + "\n")
		}
		var items, cs, truth []any
		for _, x := range fixtureItems() {
			items = append(items, x)
		}
		for _, x := range fixtureCompanies() {
			cs = append(cs, x)
		}
		for _, x := range fixtureTruth() {
			truth = append(truth, x)
		}
		return fstest.MapFS{ConfigFile: {Data: cfg}, StructureFile: {Data: st}, ItemsFile: {Data: lines(items...)},
			CompaniesFile: {Data: lines(cs...)}, TruthFile: {Data: lines(truth...)}}
	}
	if _, err := Load(base()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file, old, new, want string
	}{
		{ItemsFile, `"capability":"calculation"`, `"capability":"guessing"`, `items.jsonl:4: capability: unknown capability "guessing"`},
		{ItemsFile, `"row":"Outlook"`, `"row":"Outlook2"`, `items.jsonl:5: row: no row "Outlook2" in table of 2.1`},
		{ItemsFile, `"column":"{FY}","capability":"recognition"`, `"column":"{FY_9}","capability":"recognition"`, `items.jsonl:3: column: no value column "{FY_9}" in table of 2.1`},
		{CompaniesFile, `"language":"zh-CN"`, `"language":"fr"`, `companies.jsonl:2: language: unknown language "fr" (want en, zh-CN, zh-HK or id)`},
		{TruthFile, `"item":"outlook","answer":"Stable outlook."}` + "\n" + `{"company":"B"`, `"item":"name","answer":"Stable outlook."}` + "\n" + `{"company":"B"`, `truth.jsonl:5: item: repeated truth for A name`},
		{TruthFile, `"answer":"Acme"`, `"answer":" "`, `truth.jsonl:1: answer: empty`},
		{TruthFile, `"answer":"Acme"`, `"answer":"Acme","extra":1`, `truth.jsonl:1: extra: unknown field`},
		{ConfigFile, `"model":"beta-1"`, `"model":""`, `config.json: systems[1].model: empty`},
		{StructureFile, `"id":"2.1"`, `"id":"2.2"`, `structure.json: sections[1].subsections[0].id: got "2.2", want "2.1"`},
	} {
		fsys := base()
		data := string(fsys[c.file].Data)
		if !strings.Contains(data, c.old) {
			t.Fatalf("%s has no %s", c.file, c.old)
		}
		fsys[c.file] = &fstest.MapFile{Data: []byte(strings.Replace(data, c.old, c.new, 1))}
		_, err := Load(fsys)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got %v, want %s", c.file, err, c.want)
		}
	}
}

func FuzzParseReport(f *testing.F) {
	s := Default()
	p := Params{FY: 2024, CY: 2024, Date: "2025-09-20"}
	f.Add(fullReport(s, p))
	f.Add("## Section 1\n|a|b|\n|-|\n|\\|")
	f.Add("|||\n|:-:|\n")
	items := DefaultItems()
	f.Fuzz(func(t *testing.T, md string) {
		c := CheckStructure(Parse(md), s, p)
		if c.Score < -42 || c.Score > 42 || c.Fraction < -42 || c.Fraction > 42 {
			t.Fatalf("score %v %v out of range", c.Score, c.Fraction)
		}
		for i := range items {
			Extract(c, &items[i], Truth{Row: "x"}, p)
		}
	})
}

// FuzzParseQuantity checks that any text gives a verdict compare
// knows, and that a whole number n written with thousands separators
// reads back as n, -n in parentheses or after a minus, n x 1e6 before
// "million", and as a percentage before "%".
func FuzzParseQuantity(f *testing.F) {
	for _, s := range []string{"1,721 Millions USD", "(3.5)%", "1.234.567", "3亿", "-0.0", "1..2", "12'000 ribu", "−4,5 %", "1.234,5 juta"} {
		f.Add(s, "1,721", uint32(1721))
	}
	f.Fuzz(func(t *testing.T, a, b string, n uint32) {
		w := strconv.FormatUint(uint64(n), 10)
		for i := len(w) - 3; i > 0; i -= 3 {
			w = w[:i] + "," + w[i:]
		}
		for _, tc := range []struct {
			in   string
			want Quantity
		}{
			{w, Quantity{Value: float64(n)}},
			{"(" + w + ")", Quantity{Value: -float64(n)}},
			{"-" + w, Quantity{Value: -float64(n)}},
			{"USD " + w + " million", Quantity{Value: float64(n) * 1e6}},
			{w + "%", Quantity{Value: float64(n), Percent: true}},
		} {
			if q, ok := ParseQuantity(tc.in); !ok || q != tc.want {
				t.Fatalf("ParseQuantity(%q) = %+v, %v; want %+v", tc.in, q, ok, tc.want)
			}
		}
		q, ok := ParseQuantity(a)
		if ok && (q.Value != q.Value) {
			t.Fatalf("NaN from %q", a)
		}
		switch compare(quantityOf(a), quantityOf(b), DefaultTolerance) {
		case "", "correct", "incorrect":
		default:
			t.Fatal("bad verdict")
		}
	})
}

func FuzzParseBatch(f *testing.F) {
	f.Add(judgePrompt(&Batch{Stage: StageClaims, Items: []BatchItem{{ID: "a", Truth: "t"}}}))
	f.Add("```json\n{}\n```")
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseBatch(s)
		if err != nil {
			return
		}
		// What reads as a batch reads the same once written again.
		again, err := ParseBatch(judgePrompt(b))
		if err != nil || !reflect.DeepEqual(again, b) {
			t.Fatalf("ParseBatch(judgePrompt(%+v)) = %+v, %v", b, again, err)
		}
	})
}

func FuzzLoad(f *testing.F) {
	b, _ := json.Marshal(fixtureItems()[0])
	f.Add(string(b))
	f.Add(`{"id":"x","subsection":"9.9"}`)
	st := fixtureStructure()
	f.Fuzz(func(t *testing.T, line string) {
		fsys := fstest.MapFS{ItemsFile: {Data: []byte(line)}, CompaniesFile: {Data: []byte(line)}}
		if items, err := loadItems(fsys, st); err == nil {
			for _, it := range items {
				if st.Subsection(it.Subsection) == nil {
					t.Fatalf("accepted item of unknown subsection %q", it.Subsection)
				}
			}
		}
		_, _ = loadCompanies(fsys)
	})
}
