package cli

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// shellWord reads the first word of a POSIX shell line: plain
// characters, and '...' quoted runs (no escapes inside).
func shellWord(t *testing.T, line string) (word, rest string) {
	t.Helper()
	var b strings.Builder
	for i := 0; i < len(line); i++ {
		switch c := line[i]; c {
		case ' ':
			return b.String(), line[i+1:]
		case '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				t.Fatalf("unterminated quote in %q", line)
			}
			b.WriteString(line[i+1 : i+1+j])
			i += j + 1
		case '\\':
			i++
			b.WriteByte(line[i])
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), ""
}

// TestSweepListRoundTrip: every line "sweep --list" prints is a --knob
// flag, as the shell reads it, that parseKnobs accepts and reads back as
// the knob's default sweep values (its default when it has none), and
// the rest of the line is a shell comment.
func TestSweepListRoundTrip(t *testing.T) {
	code, out, stderr := run(t, "sweep", "--list")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	n := 0
	for _, b := range benchmarks() {
		for _, k := range b.Knobs() {
			line := lines[n]
			n++
			flag, rest := shellWord(t, line)
			arg, rest := shellWord(t, rest)
			if flag != "--knob" || !strings.HasPrefix(strings.TrimLeft(rest, " "), "# ") {
				t.Fatalf("line %q: want --knob ARG  # comment", line)
			}
			only, err := parseKnobs([]string{arg})
			if err != nil {
				t.Fatalf("line %q: %v", line, err)
			}
			want := k.Sweep
			if len(want) == 0 {
				want = []string{k.Default}
			}
			if got := only[b.Name()+"."+k.Name]; !slices.Equal(got, want) {
				t.Errorf("line %q reads back as %q, want %q", line, got, want)
			}
		}
	}
	if n != len(lines) {
		t.Errorf("%d lines, %d knobs", len(lines), n)
	}
	// A list value and the empty value survive the round trip too.
	for _, vals := range [][]string{{"1,0,0", "0.6,0.2,0.2"}, {"", "0.001"}, {"a"}} {
		if got := splitAlternatives(joinAlternatives(vals)); !slices.Equal(got, vals) {
			t.Errorf("%q -> %q -> %q", vals, joinAlternatives(vals), got)
		}
	}
	// Repeating --knob appends values; --set takes the same list syntax.
	only, err := parseKnobs([]string{"icbcbench.weights=1,0,0", "icbcbench.weights=0.6,0.2,0.2;1,0,0"})
	if err != nil || !slices.Equal(only["icbcbench.weights"], []string{"1,0,0", "0.6,0.2,0.2"}) {
		t.Errorf("repeated --knob: %q, %v", only, err)
	}
	if s, err := parseSettings([]string{"icbcbench.weights=1,0,0"}); err != nil || s["icbcbench"]["weights"] != "1,0,0" {
		t.Errorf("--set list: %v, %v", s, err)
	}
}

// TestKnobErrors: bad knob values, knobs, benchmarks and base URLs are
// usage errors (exit 2) that say what is wrong and what is accepted, once.
func TestKnobErrors(t *testing.T) {
	dir := unpackDemo(t)
	for _, tc := range []struct {
		args    []string
		want    []string
		notWant []string
	}{
		{[]string{"reproduce", "--quiet", "--no-sweep", "--set", "icbcbench.beta=abc"},
			[]string{`icbcbench.beta: value "abc" not accepted`, "bin size", "default 10"}, []string{"icbcbench: icbcbench"}},
		{[]string{"reproduce", "--quiet", "--no-sweep", "--set", "findeepforecast.late_policy=x"},
			[]string{`findeepforecast.late_policy: value "x" not accepted; want wrong or exclude`}, []string{"findeepforecast: findeepforecast"}},
		{[]string{"reproduce", "--quiet", "--no-sweep", "--set", "finresearchbench2.judges=zzz"},
			[]string{"gpt-5.4, claude-opus-4-7, gemini-3-pro-preview"}, []string{"finresearchbench2: finresearchbench2"}},
		{[]string{"sweep", "--knob", "icbcbench.nosuch=1"}, []string{"--knob", "unknown knob nosuch", "beta, binning"}, []string{"--set"}},
		{[]string{"sweep", "--set", "nosuch.x=1"}, []string{"--set", "icbcbench, findeepresearch, findeepforecast, finresearchbench2"}, nil},
		{[]string{"sweep", "--knob", "icbcbench.beta=100,200"}, []string{`value "100,200"`, `--knob 'icbcbench.beta=100;200'`}, nil},
		{[]string{"sweep", "--knob", "icbcbench.weights=1,0"}, []string{`icbcbench.weights: value "1,0" not accepted`}, []string{"icbcbench: icbcbench", "sweep weights"}},
		{[]string{"reproduce", dir, "--mode", "record", "--yes", "--no-sweep", "--base-url", "vllm=ftp://x"}, []string{"--base-url", "http:// or https://"}, nil},
		{[]string{"record", "--dir", t.TempDir(), "--provider", "vllm", "--base-url", "ftp://x", "--requests", writeFile(t, t.TempDir(), "r.jsonl", reqLine("x")+"\n")},
			[]string{"--base-url", "http:// or https://"}, []string{"retry"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			args := tc.args
			if args[0] == "reproduce" {
				args = append(args, "--out", filepath.Join(t.TempDir(), "out"))
			}
			code, _, stderr := run(t, args...)
			if code != ExitUsage {
				t.Fatalf("exit %d, want %d\n%s", code, ExitUsage, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(stderr, w) {
					t.Errorf("stderr has %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// TestSweepScores: sweep prints the baseline ranking with scores and each
// variant's scores and rank changes, and --out writes them. Sweeping a
// knob to its default (icbcbench.beta=10) must reproduce the baseline: a
// score change and a rank change of 0 for every system.
func TestSweepScores(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := run(t, "sweep", "--knob", "icbcbench.beta=10;100", "--out", out)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, w := range []string{"[icbcbench] baseline ranking", "[icbcbench] beta=10: Spearman rho 1.000", "[icbcbench] beta=100", "score change", "rank change"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("output lacks %q:\n%s", w, stdout)
		}
	}
	for _, p := range []string{"csv/icbcbench/sensitivity_scores.csv", "json/icbcbench/sensitivity_scores.json", "csv/icbcbench/sensitivity.csv", "xlsx/icbcbench.xlsx", "SHA256SUMS", markerName} {
		if _, err := os.Stat(filepath.Join(out, p)); err != nil {
			t.Error(err)
		}
	}
	f, err := os.Open(filepath.Join(out, "csv", "icbcbench", "sensitivity_scores.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	base, same := map[string]string{}, 0
	for _, r := range recs[1:] { // knob,value,system,score,score_change,rank,rank_change
		switch {
		case r[0] == "baseline":
			base[r[2]] = r[3]
		case r[0] == "beta" && r[1] == "10":
			same++
			if r[3] != base[r[2]] || r[4] != "0" || r[6] != "0" {
				t.Errorf("beta=10 row %q differs from the baseline's score %s", r, base[r[2]])
			}
		}
	}
	if len(base) == 0 || same != len(base) {
		t.Errorf("%d baseline rows, %d beta=10 rows", len(base), same)
	}
}
