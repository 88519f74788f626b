package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/cache/reqkey"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/results"
)

var (
	exchangeBlockRE = regexp.MustCompile(`<script type="application/json" id="exchanges">([^<]*)</script>`)
	exchangeFoldRE  = regexp.MustCompile(`<details class="exchange" id="[^"]+"(?: data-x="(\d+)")?><summary>(Output exchange|Judge exchange: [^·]*) · ([a-z]+) · sample (\d+) · .*?</summary>\n<dl class="meta"><dt>Cache key</dt><dd>([0-9a-f]{64})</dd>`)
)

// TestTaskPageExchanges reproduces the built-in demo and reads its task
// pages back: every benchmark's pages list the exchanges behind their
// outputs and (but for FinDeepForecast, whose verdicts are rules) their
// judges' verdicts, and each embedded request and response, joined from
// the page's shared pieces, is byte for byte what the bundle's cache
// holds under the key the page names, with the source the cache records.
func TestTaskPageExchanges(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "b")
	if code, _, errOut := run(t, "bundle", "create", "--out", dir, "--from", "@demo"); code != ExitOK {
		t.Fatalf("bundle create: %d %s", code, errOut)
	}
	out := filepath.Join(t.TempDir(), "out")
	if code, _, errOut := run(t, "reproduce", dir, "--out", out, "--no-sweep", "--quiet"); code != ExitOK {
		t.Fatalf("reproduce: %d %s", code, errOut)
	}
	store, err := cache.Open(filepath.Join(dir, results.CacheDir), cache.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	pages, _ := filepath.Glob(filepath.Join(out, "site", "tasks", "*", "*.html"))
	type count struct{ outputs, judges, embedded int }
	counts := map[string]*count{}
	for _, p := range pages {
		bench := filepath.Base(filepath.Dir(p))
		if counts[bench] == nil {
			counts[bench] = &count{}
		}
		c := counts[bench]
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var blk struct {
			S []string  `json:"s"`
			X [][][]int `json:"x"`
		}
		if m := exchangeBlockRE.FindSubmatch(b); m != nil {
			if err := json.Unmarshal(m[1], &blk); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
		}
		for _, m := range exchangeFoldRE.FindAllSubmatch(b, -1) {
			if string(m[2]) == "Output exchange" {
				c.outputs++
			} else {
				c.judges++
			}
			k, err := reqkey.Parse(string(m[5]))
			if err != nil {
				t.Fatal(err)
			}
			x, err := store.Get(k)
			if err != nil {
				t.Fatalf("%s: %s: %v", p, m[5], err)
			}
			if string(m[3]) != x.Meta.Source {
				t.Errorf("%s: %s: source %s, the cache says %s", p, m[5], m[3], x.Meta.Source)
			}
			var req struct{ Sample int }
			if err := json.Unmarshal(x.Request, &req); err != nil || strconv.Itoa(req.Sample) != string(m[4]) {
				t.Errorf("%s: %s: sample %s, the request says %d (%v)", p, m[5], m[4], req.Sample, err)
			}
			if len(m[1]) == 0 {
				continue
			}
			c.embedded++
			i, _ := strconv.Atoi(string(m[1]))
			join := func(ix []int) []byte {
				var s []byte
				for _, n := range ix {
					s = append(s, blk.S[n]...)
				}
				return s
			}
			if i >= len(blk.X) || !bytes.Equal(join(blk.X[i][0]), x.Request) || !bytes.Equal(join(blk.X[i][1]), x.Response) {
				t.Errorf("%s: exchange %s on the page differs from the cache's", p, m[5])
			}
		}
	}
	for _, bench := range []string{"icbcbench", "findeepresearch", "findeepforecast", "finresearchbench2"} {
		c := counts[bench]
		switch {
		case c == nil:
			t.Errorf("%s: no task pages", bench)
		case c.judges == 0 && bench != "findeepforecast":
			t.Errorf("%s: no judge exchanges on its task pages", bench)
		case c.outputs == 0 && bench != "finresearchbench2":
			t.Errorf("%s: no output exchanges on its task pages", bench)
		case c.embedded == 0:
			t.Errorf("%s: no exchange embedded", bench)
		}
	}
}

// TestProvenanceOf checks the provenance line of batch, imported and
// recorded exchanges.
func TestProvenanceOf(t *testing.T) {
	imp, _ := json.Marshal(map[string]any{"choices": []any{}, "finrepro_import": replay.Provenance{Where: "chatgpt.com deep research", When: "2025-05-01", ProductVersion: "o3-2025-04", File: "r1.md"}})
	for _, c := range []struct {
		x    cache.Exchange
		want string
	}{
		{cache.Exchange{Meta: cache.Meta{Source: "batch", BatchID: "batch_abc"}}, "batch batch_abc"},
		{cache.Exchange{Response: imp, Meta: cache.Meta{Source: "import"}}, "collected from chatgpt.com deep research on 2025-05-01, product version o3-2025-04, file r1.md"},
		{cache.Exchange{Response: []byte("not json"), Meta: cache.Meta{Source: "import"}}, ""},
		{cache.Exchange{Meta: cache.Meta{Source: "api", Headers: "openai-processing-ms: 812\nx-request-id: req_1"}}, "headers: openai-processing-ms: 812; x-request-id: req_1"},
		{cache.Exchange{Meta: cache.Meta{Source: "sim"}}, ""},
	} {
		if got := provenanceOf(&c.x); got != c.want {
			t.Errorf("provenanceOf(%s) = %q, want %q", c.x.Meta.Source, got, c.want)
		}
	}
	if !strings.Contains(provenanceOf(&cache.Exchange{Meta: cache.Meta{Source: "batch", BatchID: "b", Headers: "h: v"}}), "batch b; headers: h: v") {
		t.Error("batch id and headers not joined")
	}
}
