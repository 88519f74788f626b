package cli

import (
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestImportDirection checks that finrepro's packages import one way:
// internal leaf packages (internal/regular) none of ours, cache and
// results none of ours but those leaves, replay only cache, results and
// those leaves, analysis only results, report only analysis and results, site only
// report, analysis and results, demo only what builds a bundle, no
// benchmark package (analysis/icbc, analysis/hisrubric, ...) another one,
// and nothing imports the command. Inside cache, the key rule
// (cache/reqkey) imports no other part of cache and the store none of its
// archives (cache/archive builds on the store).
func TestImportDirection(t *testing.T) {
	const mod = "github.com/finrepro/finrepro"
	allowed := map[string][]string{
		"internal": {},
		"cache":    {"internal"},
		"results":  {"internal"},
		"replay":   {"cache", "results", "internal"},
		"analysis": {"analysis", "results"},
		"report":   {"analysis", "results"},
		"site":     {"report", "analysis", "results"},
		"demo":     {"analysis", "cache", "replay", "results"},
	}
	within := map[string][]string{
		"cache/reqkey": {"cache", "cache/archive"},
		"cache":        {"cache/archive"},
	}
	out, err := exec.Command("go", "list", "-json", mod+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, mod), "/")
		top, _, _ := strings.Cut(rel, "/")
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, mod+"/") {
				if top == "results" && strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
					t.Errorf("%s imports %s: results is stdlib only", rel, imp)
				}
				continue
			}
			irel := strings.TrimPrefix(imp, mod+"/")
			itop, _, _ := strings.Cut(irel, "/")
			if itop == "cmd" && top != "cmd" {
				t.Errorf("%s imports the command package %s", rel, irel)
			}
			ok, known := allowed[top]
			if !known {
				continue // cmd may import anything
			}
			if top == "analysis" {
				if bench, ibench := benchmarkPackage(rel), benchmarkPackage(irel); bench != "" && ibench != "" && ibench != bench {
					t.Errorf("%s imports %s: no benchmark package imports another", rel, irel)
				}
			}
			if slices.Contains(within[rel], irel) {
				t.Errorf("%s imports %s", rel, irel)
			}
			if itop == top && top != "analysis" {
				continue // a package's own subpackages
			}
			found := false
			for _, a := range ok {
				found = found || a == itop
			}
			if !found {
				t.Errorf("%s imports %s: %s may import only %v of finrepro", rel, irel, top, ok)
			}
		}
	}
}

// benchmarkPackage returns the benchmark package that rel, a path in the
// module, is or is in (analysis/icbc for analysis/icbc/x), or "" when it
// is in none: analysis itself and its shared packages.
func benchmarkPackage(rel string) string {
	parts := strings.Split(rel, "/")
	if len(parts) < 2 || parts[0] != "analysis" || !benchmarkPackages[parts[1]] {
		return ""
	}
	return parts[0] + "/" + parts[1]
}

// benchmarkPackages are the packages under analysis that implement one
// benchmark each; the others (stats, uncertainty, scores) are shared.
var benchmarkPackages = map[string]bool{"icbc": true, "hisrubric": true, "forecast": true, "consensus": true}
