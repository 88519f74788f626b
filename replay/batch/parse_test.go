package batch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/cache/reqkey"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/replay/batch/batchtest"
)

const key1 = "1111111111111111111111111111111111111111111111111111111111111111"
const key2 = "2222222222222222222222222222222222222222222222222222222222222222"

// open1 is an open batch holding key1.
const open1 = `{"local":"0002","provider":"openai","api":"openai","base_url":"","id":"batch_2","status":"in_progress","counts":{},"collected":false,"keys":["` + key1 + `"]}`

func TestParseState(t *testing.T) {
	ok := `{"version":1,"batches":[{"local":"0001","provider":"openai","api":"openai","base_url":"","id":"batch_1","status":"completed","counts":{},"collected":true,"keys":["` + key1 + `"],"failures":[{"key":"` + key1 + `","cause":"api_error"}]}]}`
	for _, c := range []struct {
		name, in, want string
	}{
		{"ok", ok, ""},
		{"version", `{"version":2,"batches":[]}`, "version: got 2"},
		{"unknown field", `{"version":1,"batches":[],"x":1}`, "unknown field"},
		{"trailing", `{"version":1,"batches":[]} {}`, "data after"},
		{"local", strings.Replace(ok, `"0001"`, `"1"`, 1), "batches[0].local"},
		{"api", strings.Replace(ok, `"api":"openai"`, `"api":"gemini"`, 1), "batches[0].api"},
		{"key", strings.Replace(ok, `"keys":["`+key1, `"keys":["`+key1[:63]+"G", 1), "batches[0].keys[0]"},
		{"no id", strings.Replace(ok, `"id":"batch_1"`, `"id":""`, 1), "batches[0].id"},
		{"submitting", strings.Replace(strings.Replace(ok, `"id":"batch_1"`, `"id":""`, 1), `"completed"`, `"submitting"`, 1), ""},
		{"failure key", strings.Replace(ok, `"failures":[{"key":"`+key1, `"failures":[{"key":"`+key2, 1), "failures[0].key"},
		{"repeated key", strings.Replace(ok, `"keys":["`+key1+`"]`, `"keys":["`+key1+`","`+key1+`"]`, 1), "repeated"},
		{"resubmitted key", strings.Replace(ok, `]}]}`, `]},`+open1+`]}`, 1), ""},
		{"key in two open batches", strings.Replace(strings.Replace(ok, `"collected":true`, `"collected":false`, 1), `]}]}`, `]},`+open1+`]}`, 1), "also in open batch 0001"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseState(strings.NewReader(c.in), "state.json")
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "state.json: ")) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

// FuzzParseState checks that the state parser never panics and that what
// it accepts formats to bytes it reads back to the same state.
func FuzzParseState(f *testing.F) {
	f.Add([]byte(`{"version":1,"batches":[{"local":"0001","provider":"openai","api":"openai","base_url":"http://x/v1","id":"b","status":"in_progress","counts":{"total":1},"collected":false,"keys":["` + key1 + `"]}]}`))
	f.Add([]byte(`{"version":1,"batches":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseState(bytes.NewReader(b), "f")
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := s.Format(&out); err != nil {
			t.Fatal(err)
		}
		s2, err := ParseState(bytes.NewReader(out.Bytes()), "f")
		if err != nil {
			t.Fatalf("formatted state does not parse: %v\n%s", err, out.Bytes())
		}
		var out2 bytes.Buffer
		s2.Format(&out2)
		if !bytes.Equal(out.Bytes(), out2.Bytes()) {
			t.Fatalf("format is not stable:\n%s\n%s", out.Bytes(), out2.Bytes())
		}
	})
}

func TestParseLines(t *testing.T) {
	for _, c := range []struct {
		name  string
		parse func([]byte) (result, error)
		in    string
		body  bool
		cause replay.Cause
		bad   bool
	}{
		{"openai ok", parseOpenAILine, `{"custom_id":"a","response":{"status_code":200,"body":{"x":1}},"error":null}`, true, "", false},
		{"openai 400", parseOpenAILine, `{"custom_id":"a","response":{"status_code":400,"body":{"error":{}}},"error":null}`, false, replay.CauseHTTP, false},
		{"openai 429", parseOpenAILine, `{"custom_id":"a","response":{"status_code":429,"body":{}}}`, false, replay.CauseRateLimited, false},
		{"openai expired", parseOpenAILine, `{"custom_id":"a","response":null,"error":{"code":"batch_expired","message":"m"}}`, false, CauseExpired, false},
		{"openai cancelled", parseOpenAILine, `{"custom_id":"a","response":null,"error":{"code":"batch_cancelled","message":"m"}}`, false, CauseCanceled, false},
		{"openai neither", parseOpenAILine, `{"custom_id":"a"}`, false, replay.CauseMalformed, false},
		{"openai no body", parseOpenAILine, `{"custom_id":"a","response":{"status_code":200}}`, false, replay.CauseMalformed, false},
		{"openai no id", parseOpenAILine, `{"response":{"status_code":200,"body":{}}}`, false, "", true},
		{"openai array", parseOpenAILine, `[1]`, false, "", true},
		{"anthropic ok", parseAnthropicLine, `{"custom_id":"a","result":{"type":"succeeded","message":{"type":"message"}}}`, true, "", false},
		{"anthropic errored", parseAnthropicLine, `{"custom_id":"a","result":{"type":"errored","error":{"type":"error"}}}`, false, replay.CauseAPIError, false},
		{"anthropic canceled", parseAnthropicLine, `{"custom_id":"a","result":{"type":"canceled"}}`, false, CauseCanceled, false},
		{"anthropic expired", parseAnthropicLine, `{"custom_id":"a","result":{"type":"expired"}}`, false, CauseExpired, false},
		{"anthropic type", parseAnthropicLine, `{"custom_id":"a","result":{"type":"maybe"}}`, false, "", true},
		{"anthropic no message", parseAnthropicLine, `{"custom_id":"a","result":{"type":"succeeded"}}`, false, "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := c.parse([]byte(c.in))
			if (err != nil) != c.bad {
				t.Fatalf("error %v, want error %v", err, c.bad)
			}
			if c.bad {
				return
			}
			if (r.body != nil) != c.body || (r.err == nil) != (c.cause == "") || r.err != nil && r.err.Cause != c.cause || r.id != "a" {
				t.Fatalf("got %+v (err %+v)", r, r.err)
			}
		})
	}
}

// FuzzParseResultLine checks that both result parsers never panic and
// that a line they accept has a custom_id and exactly one of a body and
// an error.
func FuzzParseResultLine(f *testing.F) {
	f.Add([]byte(`{"custom_id":"a","response":{"status_code":200,"body":{"x":1}},"error":null}`))
	f.Add([]byte(`{"custom_id":"a","result":{"type":"succeeded","message":{"type":"message"}}}`))
	f.Add([]byte(`{"custom_id":"a","result":{"type":"errored","error":null}}`))
	f.Add([]byte(`{"custom_id":"a","response":{"status_code":200}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, parse := range []func([]byte) (result, error){parseOpenAILine, parseAnthropicLine} {
			r, err := parse(b)
			if err != nil {
				continue
			}
			if r.id == "" || (r.body == nil) == (r.err == nil) {
				t.Fatalf("accepted %q as %+v", b, r)
			}
		}
	})
}

// TestStream checks that a download ending mid-line, or failing, is a
// cut, that complete lines before it are handed over, and that a bad
// complete line is an error naming its line but not a cut.
func TestStream(t *testing.T) {
	good := `{"custom_id":"a","result":{"type":"expired"}}` + "\n"
	for _, c := range []struct {
		name  string
		body  io.Reader
		lines int
		cut   bool
		err   string
	}{
		{"whole", strings.NewReader(good + good), 2, false, ""},
		{"no final newline", strings.NewReader(good + strings.TrimSpace(good)), 2, false, ""},
		{"cut in a line", strings.NewReader(good + good[:10]), 1, true, ""},
		{"read error", io.MultiReader(strings.NewReader(good), iotest.ErrReader(errors.New("reset"))), 1, true, ""},
		{"bad line", strings.NewReader(good + "{\"x\":1}\n" + good), 1, false, "results line 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := 0
			err := stream(c.body, parseAnthropicLine, func(result) error { n++; return nil })
			if n != c.lines || errors.Is(err, errCut) != c.cut || (c.err == "") != (err == nil || c.cut) || c.err != "" && !strings.Contains(err.Error(), c.err) {
				t.Fatalf("%d lines, error %v", n, err)
			}
		})
	}
}

// TestCancel cancels the open batches: the finished half of each is
// collected, the rest is listed as cancelled.
func TestCancel(t *testing.T) {
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			e := newEnv(t, batchtest.Options{})
			reqs := requests(provider, 40)
			ctx := context.Background()
			if _, err := e.open(t).Submit(ctx, reqs, SubmitOptions{Provider: provider}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.open(t).Cancel(ctx, "no-such-batch"); err == nil {
				t.Fatal("cancel of an unknown id succeeded")
			}
			bs, err := e.open(t).Cancel(ctx, "")
			if err != nil || len(bs) == 0 {
				t.Fatalf("cancel: %v, %d batches", err, len(bs))
			}
			cr, err := e.open(t).Collect(ctx)
			if err != nil || len(cr.Pending) != 0 || len(cr.Errors) != 0 {
				t.Fatalf("collect: %v, %+v", err, cr)
			}
			if cr.Stored != 20 || len(cr.Failed) != 20 || cr.Failed[0].Cause != string(CauseCanceled) {
				t.Fatalf("collect after cancel: stored %d, failed %v", cr.Stored, cr.Failed)
			}
		})
	}
}

// TestRefusedCreate checks that a batch the provider refuses (here with
// a wrong key: HTTP 401) is forgotten, so that a rerun submits it again
// without --resubmit, and that the key is never in the state.
func TestRefusedCreate(t *testing.T) {
	e := newEnv(t, batchtest.Options{})
	e.srv.Close()
	e.srv = batchtest.New(batchtest.Options{Key: "another-key-entirely"})
	t.Cleanup(e.srv.Close)
	reqs := requests("anthropic", 5)
	_, err := e.open(t).Submit(context.Background(), reqs, SubmitOptions{Provider: "anthropic"})
	if err == nil || !strings.Contains(err.Error(), "HTTP 401") || strings.Contains(err.Error(), testKey) {
		t.Fatalf("submit with a refused key: %v", err)
	}
	s, err := LoadState(e.dir)
	if err != nil || len(s.Batches) != 0 {
		t.Fatalf("state after a refused create: %+v, %v", s, err)
	}
}

// TestAnthropicID checks the custom_id shape Message Batches require.
func TestAnthropicID(t *testing.T) {
	k, _ := reqkey.Parse(key1)
	for _, sample := range []int{0, 7, 123456} {
		id := anthropicID(sample, k)
		if len(id) != 64 || !strings.HasPrefix(id, "s") || strings.Trim(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
			t.Errorf("sample %d: custom_id %q", sample, id)
		}
	}
}

// TestFailedBatch checks an OpenAI batch rejected as a whole: each of its
// requests is a batch_failed failure carrying the provider's reason, and
// a stray result line is counted, not stored.
func TestFailedBatch(t *testing.T) {
	e := newEnv(t, batchtest.Options{Fail: 1, Stray: true})
	reqs := requests("openai", 20) // two models: two batches of 10
	ctx := context.Background()
	if _, err := e.open(t).Submit(ctx, reqs, SubmitOptions{Provider: "openai"}); err != nil {
		t.Fatal(err)
	}
	var cr *CollectReport
	stray := 0
	for round := 0; round < 5; round++ {
		var err error
		if cr, err = e.open(t).Collect(ctx); err != nil {
			t.Fatal(err)
		}
		stray += cr.Unknown
	}
	if len(cr.Pending) != 0 || cr.Stored != 10 || len(cr.Failed) != 10 || stray != 1 {
		t.Fatalf("collect: %+v", cr)
	}
	for _, f := range cr.Failed {
		if f.Cause != string(CauseFailed) || !strings.Contains(f.Msg, "the input file was rejected") {
			t.Fatalf("failure %+v", f)
		}
	}
}

// TestTamperedRequests checks that collect refuses a requests file that
// no longer matches the state's keys, naming the file and line, and
// stores nothing from that batch.
func TestTamperedRequests(t *testing.T) {
	e := newEnv(t, batchtest.Options{})
	ctx := context.Background()
	if _, err := e.open(t).Submit(ctx, requests("anthropic", 3), SubmitOptions{Provider: "anthropic"}); err != nil {
		t.Fatal(err)
	}
	p := requestsPath(e.dir, "0001")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, bytes.Replace(b, []byte("question 1"), []byte("question X"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	var cr *CollectReport
	for range 3 {
		if cr, err = e.open(t).Collect(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if len(cr.Errors) != 1 || !strings.Contains(cr.Errors[0].Error(), p+":2:") || cr.Stored != 0 || cr.Complete() {
		t.Fatalf("collect of a tampered batch: %+v", cr)
	}
}

// TestLock checks that a second runner cannot open a folder while the
// first holds it, and can once it is closed.
func TestLock(t *testing.T) {
	e := newEnv(t, batchtest.Options{})
	first := e.open(t)
	if _, err := Open(Config{Dir: e.dir, Store: e.store, Client: e.client}); err == nil || !strings.Contains(err.Error(), "another finrepro batch command") {
		t.Fatalf("second runner: %v", err)
	}
	first.Close()
	second, err := Open(Config{Dir: e.dir, Store: e.store, Client: e.client})
	if err != nil {
		t.Fatalf("after close: %v", err)
	}
	second.Close()
}

// TestSplitBySize checks the byte limit: every batch's requests fit in
// it, and a request larger than it is listed, not submitted.
func TestSplitBySize(t *testing.T) {
	e := newEnv(t, batchtest.Options{})
	reqs := requests("anthropic", 30)
	// A request's share of the create body: its element and a comma.
	elem, err := json.Marshal(map[string]any{"custom_id": anthropicID(0, cache.Key{}), "params": json.RawMessage(reqs[0].Body)})
	if err != nil {
		t.Fatal(err)
	}
	one := int64(len(elem)) + 1
	limit := 4*one + 2 // four requests of about this size fit, five do not
	rep, err := e.open(t).Submit(context.Background(), reqs, SubmitOptions{Provider: "anthropic", MaxBytes: limit})
	if err != nil || rep.Submitted() != 30 || len(rep.Batches) < 30/4 || len(rep.TooLarge) != 0 {
		t.Fatalf("split: %v, %d submitted in %d batches", err, rep.Submitted(), len(rep.Batches))
	}
	for _, b := range rep.Batches {
		if len(b.Keys) > 4 {
			t.Errorf("batch %s holds %d requests, over the byte limit", b.Local, len(b.Keys))
		}
	}
	e2 := newEnv(t, batchtest.Options{})
	rep, err = e2.open(t).Submit(context.Background(), reqs, SubmitOptions{Provider: "anthropic", MaxBytes: one / 2})
	if err != nil || rep.Submitted() != 0 || len(rep.TooLarge) != 30 || e2.srv.Batches() != 0 {
		t.Fatalf("too large: %v, %d submitted, %d too large", err, rep.Submitted(), len(rep.TooLarge))
	}
}
