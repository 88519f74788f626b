package replay

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/cache"

	"github.com/finrepro/finrepro/results"
)

// TestBatchRoundTrip exports misses as Batch API input, answers them as
// the Batch API would (one failure, one refusal), imports the output and
// replays the stored ones offline.
func TestBatchRoundTrip(t *testing.T) {
	store, _ := openStore(t)
	off, _ := clientFor(t, store, Offline, nil, nil)
	calls := []results.Call{call("openai", "gpt-4o", "a"), call("openai", "gpt-4o", "b"), call("openai", "gpt-4o", "c"),
		call("anthropic", "claude", "d")}
	calls[1].Prompt.Sample = 2
	off.Answer(context.Background(), calls)
	var in bytes.Buffer
	n, skipped, err := WriteBatch(&in, off.Misses())
	if err != nil || n != 3 || skipped != 1 {
		t.Fatalf("WriteBatch: %d written, %d skipped, %v", n, skipped, err)
	}
	var out bytes.Buffer
	for i, line := range strings.Split(strings.TrimSpace(in.String()), "\n") {
		var b batchInput
		if err := json.Unmarshal([]byte(line), &b); err != nil {
			t.Fatal(err)
		}
		if b.URL != "/v1/chat/completions" || b.Method != "POST" || !strings.HasPrefix(b.CustomID, batchIDPrefix) {
			t.Errorf("batch line %s", line)
		}
		var resp string
		switch i {
		case 0:
			resp = fmt.Sprintf(`{"id":"batch_req_%d","custom_id":%q,"response":{"status_code":200,"request_id":"r","body":{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o-2024-08-06","choices":[{"index":0,"message":{"role":"assistant","content":"batch answer"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5}}},"error":null}`, i, b.CustomID)
		case 1:
			resp = fmt.Sprintf(`{"id":"batch_req_%d","custom_id":%q,"response":{"status_code":500,"request_id":"r","body":{"error":{"message":"server"}}},"error":null}`, i, b.CustomID)
		case 2:
			resp = fmt.Sprintf(`{"id":"batch_req_%d","custom_id":%q,"response":{"status_code":200,"request_id":"r","body":{"id":"c","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"no"},"finish_reason":"stop"}]}},"error":null}`, i, b.CustomID)
		}
		out.WriteString(resp + "\n")
	}
	imp, _ := clientFor(t, store, Record, nil, nil)
	got, err := imp.ImportBatch(&in, "in.jsonl", &out, "out.jsonl", "openai")
	if err != nil || got != 1 {
		t.Fatalf("ImportBatch: %d, %v", got, err)
	}
	if cc := CountCauses(imp.Failures()); len(cc) != 2 {
		t.Errorf("failure counts %+v, want refusal and server_error", cc)
	}
	replies := New(store, Config{}).Answer(context.Background(), calls)
	answered := 0
	for _, r := range replies {
		if r.Err == nil {
			answered++
			if r.Text != "batch answer" || r.Source != results.SourceImport {
				t.Errorf("reply %+v", r)
			}
		}
	}
	if answered != 1 {
		t.Errorf("%d replies answered, want 1", answered)
	}
	t.Run("bad lines", func(t *testing.T) {
		c, _ := clientFor(t, store, Record, nil, nil)
		_, err := c.ImportBatch(strings.NewReader(`{"custom_id":"x","method":"POST","url":"/v2/chat","body":{}}`), "in.jsonl", strings.NewReader(""), "out.jsonl", "openai")
		var ie *results.InputError
		if !errors.As(err, &ie) || ie.Line != 1 || ie.Field != "url" {
			t.Errorf("err %v", err)
		}
		_, err = c.ImportBatch(strings.NewReader(""), "in.jsonl", strings.NewReader(`{"custom_id":"nope"}`), "out.jsonl", "openai")
		if !errors.As(err, &ie) || ie.File != "out.jsonl" || ie.Field != "custom_id" {
			t.Errorf("err %v", err)
		}
	})
}

func TestSampleOfID(t *testing.T) {
	for id, want := range map[string]int{"finrepro-s2-abc": 2, "finrepro-s0-x": 0, "request-1": 0, "finrepro-sx-1": 0, "finrepro-s-1-x": 0} {
		if got := sampleOfID(id); got != want {
			t.Errorf("sampleOfID(%q) = %d, want %d", id, got, want)
		}
	}
}

// TestImportReport stores hand-collected reports in each provider shape
// and replays them through the benchmark path.
func TestImportReport(t *testing.T) {
	for _, prov := range []string{"openai", "openai-responses", "anthropic", "gemini"} {
		t.Run(prov, func(t *testing.T) {
			store, _ := openStore(t)
			c, _ := clientFor(t, store, Record, nil, nil)
			cl := call(prov, "deep-research", "write the report")
			pv := Provenance{Where: "web interface", When: "2025-06-01", ProductVersion: "deep-research-2025-05", File: "t1.md"}
			key, err := c.ImportReport(cl.Prompt, "# Report\n\nBody.", pv)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.ImportReport(cl.Prompt, "# Other", pv); err == nil {
				t.Error("a second import of the same prompt was accepted")
			}
			r := New(store, Config{}).Answer(context.Background(), []results.Call{cl})[0]
			if r.Err != nil || r.Text != "# Report\n\nBody." || r.Source != results.SourceImport || r.Key != key.String() || r.RecordedAt != "2025-06-01" {
				t.Errorf("reply %+v", r)
			}
			x, _ := store.Get(key)
			if !strings.Contains(string(x.Response), `"finrepro_import"`) || !strings.Contains(string(x.Response), "web interface") {
				t.Errorf("response %s lacks provenance", x.Response)
			}
		})
	}
	store, _ := openStore(t)
	c, _ := clientFor(t, store, Record, nil, nil)
	if _, err := c.ImportReport(call("openai", "m", "u").Prompt, "text", Provenance{Where: "w"}); err == nil {
		t.Error("incomplete provenance accepted")
	}
	if _, err := c.ImportReport(call("openai", "m", "u").Prompt, " ", Provenance{Where: "w", When: "d", ProductVersion: "v"}); err == nil {
		t.Error("empty report accepted")
	}
}

func TestParseRequests(t *testing.T) {
	good := `{"provider":"openai","body":{"model":"m","messages":[]}}

{"body":{"model":"m"},"sample":2,"endpoint":"responses"}
`
	rs, err := ParseRequests(strings.NewReader(good), "reqs.jsonl", "deepseek")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Provider != "openai" || rs[1].Provider != "deepseek" || rs[1].Sample != 2 || LabelText(rs[1].Label) != "reqs.jsonl:3" {
		t.Errorf("got %+v", rs)
	}
	bad := []struct{ in, field string }{
		{`{"body":{"model":"m"}}`, "provider"},
		{`{"provider":"p"}`, "body"},
		{`{"provider":"p","body":[1]}`, "body"},
		{`{"provider":"p","body":{},"sample":-1}`, "sample"},
		{`{"provider":"p","body":{},"endpoint":"../x"}`, "endpoint"},
		{`{"provider":"p","body":{},"endpoint":"x?key=1"}`, "endpoint"},
		{`{"provider":"p","body":{},"extra":1}`, "extra"},
		{`{"provider":1,"body":{}}`, "provider"},
		{`{"provider":"p","body":{},"sample":1.5}`, "sample"},
		{`{"provider":"p","body":{"a":}}`, "body"}, // a syntax error names its member too
	}
	for _, tt := range bad {
		_, err := ParseRequests(strings.NewReader(tt.in), "reqs.jsonl", "")
		var ie *results.InputError
		if !errors.As(err, &ie) || ie.Line != 1 || ie.Field != tt.field || ie.File != "reqs.jsonl" {
			t.Errorf("%s: err %v, want field %q", tt.in, err, tt.field)
		}
	}
}

func TestScanSecrets(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"nothing here", 0},
		{"key sk-proj-abcdefghijklmnopqrstuvwxyz012345", 1},
		{"Authorization: Bearer abcdefghijklmnopqrstuvwxyz", 1},
		{"https://x/y?key=AIzaSyA-abcdefghijklmnopqrstuvwxyz01234", 2},
		{"my custom value shh-secret-value", 1},
	}
	for _, tt := range tests {
		if got := ScanSecrets([]byte(tt.in), "shh-secret-value"); len(got) != tt.want {
			t.Errorf("ScanSecrets(%q) = %+v, want %d matches", tt.in, got, tt.want)
		}
	}
	vals := KeyValues(func(s string) string {
		return map[string]string{"OPENAI_API_KEY": "sk-abcdefgh", "ANTHROPIC_API_KEY": "short"}[s]
	})
	if len(vals) != 1 || vals[0] != "sk-abcdefgh" {
		t.Errorf("KeyValues = %v", vals)
	}
}

// The fuzz tests check that parsers of untrusted bytes never panic and
// accept only what they can use.

func FuzzParseOutput(f *testing.F) {
	f.Add(`{"model":"m","choices":[{"message":{"content":"x"},"finish_reason":"stop"}]}`)
	f.Add(`{"type":"message","content":[{"type":"text","text":"x"}],"stop_reason":"refusal"}`)
	f.Add(`{"candidates":[{"content":{"parts":[{"text":"x","thought":true}]},"finishReason":"SAFETY"}]}`)
	f.Add(`{"status":"completed","output":[{"type":"message","content":[{"type":"refusal","refusal":"no"}]}]}`)
	f.Add(`{"error":null}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, body string) {
		for _, k := range append(kinds, KindSim) {
			o, ce := checkBody(k, []byte(body))
			if ce == nil && (o == nil || strings.TrimSpace(o.Text) == "" || o.Refusal) {
				t.Errorf("%s accepted %q as %+v", k, body, o)
			}
		}
	})
}

func FuzzParseRequests(f *testing.F) {
	f.Add(`{"provider":"openai","body":{"model":"m"},"sample":1}`)
	f.Add(`{"body":{},"endpoint":"models/x:generateContent"}` + "\n\n{}")
	f.Fuzz(func(t *testing.T, in string) {
		rs, err := ParseRequests(strings.NewReader(in), "f", "p")
		if err != nil {
			var ie *results.InputError
			if !errors.As(err, &ie) {
				t.Errorf("error %v is not an InputError", err)
			}
			return
		}
		for _, r := range rs {
			if r.Provider == "" || r.Sample < 0 || !json.Valid(r.Body) {
				t.Errorf("accepted %+v", r)
			}
		}
	})
}

func FuzzParsePrices(f *testing.F) {
	f.Add(string(defaultPrices))
	f.Add(`{"date":"x","models":{"m":{"input":1,"output":-1}}}`)
	f.Fuzz(func(t *testing.T, in string) {
		p, err := ParsePrices(strings.NewReader(in), "prices.json")
		if err == nil {
			for name, m := range p.Models {
				if m.Input < 0 || m.Output < 0 {
					t.Errorf("accepted negative price for %s", name)
				}
			}
		}
	})
}

func TestStrings(t *testing.T) {
	l := results.Label{Benchmark: "icbcbench", Task: "en-03", Role: results.RoleJudge, Name: "gpt-4o"}
	m := Miss{Label: l, Key: "3fa2c1d0aaaa", Provider: "openai", Model: "gpt-4o", InputTokens: 1200, OutputTokens: 256, CostUSD: 0.0056, Priced: true}
	if got, want := m.String(), "icbcbench task en-03 judge gpt-4o: openai gpt-4o key 3fa2c1d0, ~1200 in + ~256 out tokens, $0.0056"; got != want {
		t.Errorf("Miss.String() = %q, want %q", got, want)
	}
	f := Failure{Label: results.Label{Benchmark: "reqs.jsonl", Task: "4", Role: RoleRequest}, Key: "abcdef0123", Provider: "p", Model: "m", Cause: CauseHTTP, Status: 400, Attempts: 1, Msg: "bad"}
	if got, want := f.String(), "reqs.jsonl:4: p m key abcdef01: http_error (HTTP 400), attempts 1: bad"; got != want {
		t.Errorf("Failure.String() = %q, want %q", got, want)
	}
}

func FuzzImportBatch(f *testing.F) {
	f.Add(`{"custom_id":"finrepro-s1-ab","method":"POST","url":"/v1/chat/completions","body":{"model":"m","messages":[]}}`,
		`{"id":"b","custom_id":"finrepro-s1-ab","response":{"status_code":200,"body":{"model":"m","choices":[{"message":{"content":"x"}}]}}}`)
	f.Add(`{"custom_id":"a","url":"/v1/responses","body":{"model":"m"}}`, `{"custom_id":"a","response":null,"error":{"code":"x"}}`)
	store, err := cache.Open(f.TempDir(), cache.Options{})
	if err != nil {
		f.Fatal(err)
	}
	defer store.Close()
	f.Fuzz(func(t *testing.T, in, out string) {
		c := New(store, Config{Mode: Record})
		n, err := c.ImportBatch(strings.NewReader(in), "in.jsonl", strings.NewReader(out), "out.jsonl", "openai")
		var ie *results.InputError
		if err != nil && !errors.As(err, &ie) {
			t.Errorf("error %v is not an InputError", err)
		}
		if n < 0 || c.Counts().Recorded != 0 {
			t.Errorf("n %d, counts %+v", n, c.Counts())
		}
	})
}

// FuzzBatchCustomID: ParseBatchCustomID reads back what BatchCustomID
// writes, and accepts another string only when it has that shape: the
// prefix, a sample index that reads back to its digits, a dash and the
// rest as the key digits.
func FuzzBatchCustomID(f *testing.F) {
	f.Add(0, []byte("k"), "finrepro-s3-abc")
	f.Add(12, []byte{0xff}, "finrepro-s-1-x")
	f.Add(1<<30, []byte(""), "custom-7")
	f.Fuzz(func(t *testing.T, sample int, keyBytes []byte, other string) {
		if sample >= 0 {
			var k cache.Key
			copy(k[:], keyBytes)
			n, key, ok := ParseBatchCustomID(BatchCustomID(sample, k))
			if !ok || n != sample || key != k.String() {
				t.Fatalf("BatchCustomID(%d, %s) read back as %d %q %v", sample, k, n, key, ok)
			}
		}
		n, key, ok := ParseBatchCustomID(other)
		if !ok {
			if n != 0 || key != "" {
				t.Fatalf("%q refused with %d %q", other, n, key)
			}
			return
		}
		num, rest, cut := strings.Cut(strings.TrimPrefix(other, "finrepro-s"), "-")
		if m, err := strconv.Atoi(num); !strings.HasPrefix(other, "finrepro-s") || !cut || rest != key || err != nil || m != n || n < 0 {
			t.Fatalf("%q read as %d %q", other, n, key)
		}
	})
}

// checkPlainLine checks plainRequestLine against decodeRequestLine, the
// reading of every line: a line it reads is one decodeRequestLine reads
// into the same values, and its canonical body keys the request as
// reqkey.Of keys the request's JSON. It reports whether the line was
// plain.
func checkPlainLine(t *testing.T, line []byte) bool {
	t.Helper()
	l, keyed := plainRequestLine(line)
	if l == nil {
		return false
	}
	want, err := decodeRequestLine("f", 1, line)
	if err != nil {
		t.Fatalf("%q: read in one pass, but decodeRequestLine says %v", line, err)
	}
	if l.Provider != want.Provider || l.Endpoint != want.Endpoint || !bytes.Equal(l.Body, want.Body) || (l.Sample == nil) != (want.Sample == nil) || l.Sample != nil && *l.Sample != *want.Sample {
		t.Fatalf("%q: read as %+v, decodeRequestLine reads %+v", line, l, want)
	}
	r := Request{Provider: cmp.Or(l.Provider, "p"), Endpoint: cmp.Or(l.Endpoint, "e"), Body: json.RawMessage(l.Body)}
	if l.Sample != nil {
		r.Sample = *l.Sample
	}
	_, wantKey, wantErr := encodeKey(&r)
	r.keyedBody = keyed
	_, key, err := encodeKey(&r)
	if key != wantKey || (err == nil) != (wantErr == nil) {
		t.Fatalf("%q: key %s, %v; from its JSON %s, %v", line, key, err, wantKey, wantErr)
	}
	return true
}

// TestPlainRequestLine: lines with members named exactly, strings without
// escapes and the sample in digits are read in one pass; the others are
// left to decodeRequestLine.
func TestPlainRequestLine(t *testing.T) {
	for _, c := range []struct {
		line  string
		plain bool
	}{
		{`{"provider":"openai","body":{"model":"m","messages":[]}}`, true},
		{` {"body" : {"b":1, "a":[1.0, "x\"y"]} ,"sample":2,"endpoint":"responses"}`, true},
		{"{\"provider\":\"e\u0301\",\"body\":{\"e\u0301\":\"\u00e9\"}}", true}, // not NFC: the key normalises it
		{`{"body":{}}`, true}, // the provider is the default one
		{`{"Provider":"openai","body":{}}`, false},
		{`{"provider":"op\u0065nai","body":{}}`, false},
		{`{"provider":"p","body":{},"sample":1.5}`, false},
		{`{"provider":"p","body":{},"sample":-1}`, false},
		{`{"provider":"p","body":{},"sample":null}`, false},
		{`{"provider":"p","body":{},"sample":12345678901}`, false},
		{`{"provider":"p","body":{},"provider":"q"}`, false},
		{"{\"provider\":\"p\",\"body\":{\"a\":\"\xff\"}}", false},
		{`{"provider":"p","body":[1]}`, false},
		{`{"provider":"p","body":{},"extra":1}`, false},
		{`{"provider":1,"body":{}}`, false},
	} {
		if got := checkPlainLine(t, []byte(c.line)); got != c.plain {
			t.Errorf("%s: read in one pass %v, want %v", c.line, got, c.plain)
		}
	}
}

// FuzzPlainRequestLine: whatever plainRequestLine reads, decodeRequestLine
// reads alike, and the key is the same (checkPlainLine).
func FuzzPlainRequestLine(f *testing.F) {
	f.Add(`{"provider":"openai","body":{"model":"m","messages":[{"role":"user","content":"q"}]},"sample":1}`)
	f.Add(`{"body":{"b":[1.0,2e3],"a":"\u00e9"},"endpoint":"responses","sample":0}`)
	f.Add("{\"provider\":\"e\u0301\",\"body\":{}}")
	f.Fuzz(func(t *testing.T, line string) { checkPlainLine(t, []byte(line)) })
}
