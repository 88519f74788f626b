package report

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/internal/golden"

	"github.com/finrepro/finrepro/analysis"
)

// testResults builds a fresh set of results, as a run of the benchmarks would.
func testResults() []*analysis.Result {
	h := hostile()
	return []*analysis.Result{
		{Benchmark: "icbcbench", Title: "ICBCBench", Tables: []*analysis.Table{plain()}},
		{Benchmark: "findeepresearch", Title: "FinDeepResearch", Tables: []*analysis.Table{h}, Synthetic: true},
		{Benchmark: "findeepforecast", Title: "FinDeepForecast", Tables: []*analysis.Table{other()}},
	}
}

func TestWriteAll(t *testing.T) {
	prov := testProv()
	prov.Synthetic = false
	var sums [2][]byte
	for run := range 2 {
		out := t.TempDir()
		res := testResults()
		if run == 1 {
			// Settings in another order give the same bytes.
			slices.Reverse(prov.Settings)
		}
		written, err := WriteAllHashed(out, res, prov)
		if err != nil {
			t.Fatal(err)
		}
		paths := Paths(written)
		want := []string{
			"csv/findeepforecast/accuracy.csv", "csv/findeepresearch/README", "csv/findeepresearch/hostile_scores.csv", "csv/icbcbench/accuracy.csv",
			"json/findeepforecast/accuracy.json", "json/findeepresearch/hostile_scores.json", "json/icbcbench/accuracy.json",
			"latex/findeepforecast/accuracy.tex", "latex/findeepresearch/README", "latex/findeepresearch/hostile_scores.tex", "latex/icbcbench/accuracy.tex",
			"xlsx/all.xlsx", "xlsx/findeepforecast.xlsx", "xlsx/findeepresearch.xlsx", "xlsx/icbcbench.xlsx",
		}
		if files := Files(res, prov); !slices.Equal(files, want) {
			t.Fatalf("Files = %q, want %q", files, want)
		}
		if !slices.Equal(paths, want) {
			t.Fatalf("paths = %q, want %q", paths, want)
		}
		if err := WriteSumsOf(out, written); err != nil {
			t.Fatal(err)
		}
		sums[run], err = os.ReadFile(filepath.Join(out, "SHA256SUMS"))
		if err != nil {
			t.Fatal(err)
		}
		checkSums(t, out, sums[run], paths)
		if run == 0 {
			var b bytes.Buffer
			if err := WriteCSV(&b, hostile()); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(filepath.Join(out, "csv/findeepresearch/hostile_scores.csv")); !bytes.Equal(got, b.Bytes()) {
				t.Error("WriteAll's CSV differs from WriteCSV's")
			}
			for _, name := range []string{"findeepresearch", "all"} {
				if !contains(t, filepath.Join(out, "xlsx", name+".xlsx"), "SYNTHETIC DATA") {
					t.Errorf("%s.xlsx does not say the data is synthetic", name)
				}
			}
			if contains(t, filepath.Join(out, "xlsx", "icbcbench.xlsx"), "SYNTHETIC DATA") {
				t.Error("icbcbench.xlsx says SYNTHETIC for real data")
			}
		}
	}
	if !bytes.Equal(sums[0], sums[1]) {
		t.Errorf("two runs differ:\n%s", golden.Diff("run 1", "run 2", string(sums[0]), string(sums[1])))
	}
}

// contains reports whether a cell of the workbook at path holds s.
func contains(t *testing.T, path, s string) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(f); err != nil {
		t.Fatal(err)
	}
	rows := readSheetStrings(t, buf.Bytes())
	return strings.Contains(rows, s)
}

// checkSums checks that sums lists every path with its hash, sorted, in
// sha256sum's format.
func checkSums(t *testing.T, out string, sums []byte, paths []string) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(sums))
	var listed []string
	for sc.Scan() {
		hash, path, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("bad SHA256SUMS line %q", sc.Text())
		}
		data, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(path)))
		if err != nil {
			t.Fatal(err)
		}
		if h := sha256.Sum256(data); hex.EncodeToString(h[:]) != hash {
			t.Errorf("SHA256SUMS: %s: hash %s, file hashes to %x", path, hash, h)
		}
		listed = append(listed, path)
	}
	if !slices.Equal(listed, paths) {
		t.Errorf("SHA256SUMS lists %q, want %q", listed, paths)
	}
}

// TestWriteAllProcesses compares the outputs of two separate processes
// (different map seeds, addresses and scheduling).
func TestWriteAllProcesses(t *testing.T) {
	if out := os.Getenv("REPORT_TEST_OUT"); out != "" {
		sums, err := WriteAllHashed(out, testResults(), testProv())
		if err == nil {
			err = WriteSumsOf(out, sums)
		}
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	if testing.Short() {
		t.Skip("starts two processes")
	}
	var sums [2][]byte
	for i := range sums {
		out := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestWriteAllProcesses$")
		cmd.Env = append(os.Environ(), "REPORT_TEST_OUT="+out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		var err error
		if sums[i], err = os.ReadFile(filepath.Join(out, "SHA256SUMS")); err != nil {
			t.Fatal(err)
		}
	}
	if len(sums[0]) == 0 || !bytes.Equal(sums[0], sums[1]) {
		t.Errorf("two processes differ:\n%s", golden.Diff("process 1", "process 2", string(sums[0]), string(sums[1])))
	}
}

func TestWriteAllNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  []*analysis.Result
		want string
	}{
		{"path in benchmark", []*analysis.Result{{Benchmark: "../x"}}, "not a file name"},
		{"hidden benchmark", []*analysis.Result{{Benchmark: ".x"}}, "not a file name"},
		{"all", []*analysis.Result{{Benchmark: "All"}}, "combined workbook"},
		{"duplicate benchmark", []*analysis.Result{{Benchmark: "a"}, {Benchmark: "A"}}, "duplicate"},
		{"slash in table", []*analysis.Result{{Benchmark: "a", Tables: []*analysis.Table{{Name: "x/y"}}}}, "not a file name"},
		{"duplicate table", []*analysis.Result{{Benchmark: "a", Tables: []*analysis.Table{plain(), plain()}}}, "duplicate"},
		{"nil table", []*analysis.Result{{Benchmark: "a", Tables: []*analysis.Table{nil}}}, "nil table"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			_, err := WriteAllHashed(out, tc.res, Provenance{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
			if entries, _ := os.ReadDir(out); len(entries) > 0 {
				t.Errorf("wrote %d entries before failing", len(entries))
			}
		})
	}
}

func TestWriteSumsBadPath(t *testing.T) {
	out := t.TempDir()
	for _, p := range []string{"../etc/passwd", "/abs", "a\nb", `a\b`, ""} {
		if err := WriteSumsOf(out, []FileSum{{Path: p}}); err == nil {
			t.Errorf("WriteSumsOf accepted %q", p)
		}
	}
}

// TestWriteSumsOf checks that the hashes WriteAllHashed returns are those
// of the files it wrote (checkSums hashes them again), in sha256sum's
// format and sorted whatever order and duplicates WriteSumsOf is given.
func TestWriteSumsOf(t *testing.T) {
	out := t.TempDir()
	sums, err := WriteAllHashed(out, testResults(), testProv())
	if err != nil {
		t.Fatal(err)
	}
	paths := Paths(sums)
	if !slices.IsSorted(paths) || !slices.Equal(paths, Files(testResults(), testProv())) {
		t.Fatalf("paths %q, want %q", paths, Files(testResults(), testProv()))
	}
	// out of order and with a duplicate, as a caller may pass them
	given := append(slices.Clone(sums), sums[0])
	slices.Reverse(given)
	if err := WriteSumsOf(out, given); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(out, SumsName))
	if err != nil {
		t.Fatal(err)
	}
	checkSums(t, out, got, paths)
	clash := sums[0]
	clash.Sum[0] ^= 1
	if err := WriteSumsOf(out, append(slices.Clone(sums), clash)); err == nil {
		t.Error("WriteSumsOf accepted a path with two hashes")
	}
	for _, p := range []string{"../etc/passwd", "/abs", "a\nb", `a\b`, ""} {
		if err := WriteSumsOf(out, []FileSum{{Path: p}}); err == nil {
			t.Errorf("WriteSumsOf accepted %q", p)
		}
	}
}
