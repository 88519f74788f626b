package replay

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/cache/reqkey"
	"github.com/finrepro/finrepro/results"
	"github.com/klauspost/compress/zstd"
)

// echo is an oracle that answers with a digest of the prompt.
var echo = OracleFunc(func(p results.Prompt) (string, error) {
	return fmt.Sprintf("%s says %x", p.Model, sha256.Sum256([]byte(p.System+"\x00"+p.User+fmt.Sprint(p.Sample, p.Params["temperature"])))), nil
})

var simModels = map[string]SimModel{
	"flaky":   {Malformed: 0.3, Refusal: 0.1, LatencyMS: 2000},
	"drifter": {ReportedModel: "other-model"},
}

func simCalls(n int) []results.Call {
	var calls []results.Call
	for i := range n {
		m := []string{"flaky", "steady", "drifter"}[i%3]
		calls = append(calls, call("sim", m, fmt.Sprintf("question %d", i)))
	}
	return calls
}

// runSim records calls through the simulator in the given order and
// concurrency and returns the replies in the original order.
func runSim(t *testing.T, calls []results.Call, perm []int, conc int) ([]results.Reply, *cache.Store, *Client) {
	store, _ := openStore(t)
	shuffled := make([]results.Call, len(calls))
	for i, j := range perm {
		shuffled[i] = calls[j]
	}
	c := New(store, Config{
		Mode: Record, Sim: NewSim(42, echo, simModels), Concurrency: conc, Seed: 9,
		Clock: func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) },
		Sleep: func(ctx context.Context, d time.Duration) error {
			t.Errorf("the simulator slept %v", d)
			return nil
		},
	})
	got := c.Answer(context.Background(), shuffled)
	out := make([]results.Reply, len(calls))
	for i, j := range perm {
		out[j] = got[i]
	}
	return out, store, c
}

// TestSimDeterministic records the same calls twice, in another order and
// with another concurrency, and compares every stored byte.
func TestSimDeterministic(t *testing.T) {
	calls := simCalls(90)
	ident := make([]int, len(calls))
	for i := range ident {
		ident[i] = i
	}
	perm := rand.New(rand.NewPCG(1, 2)).Perm(len(calls))
	a, sa, ca := runSim(t, calls, ident, 1)
	b, sb, _ := runSim(t, calls, perm, 8)
	if ha, hb := dumpHash(t, sa, a), dumpHash(t, sb, b); ha != hb {
		t.Fatalf("two runs differ: %x vs %x", ha, hb)
	}
	refused, ok := 0, 0
	for i, r := range a {
		var ce *CallError
		switch {
		case r.Err == nil:
			ok++
			if !r.Synthetic() || !strings.Contains(r.Text, calls[i].Prompt.Model+" says") {
				t.Errorf("reply %d: %+v", i, r)
			}
		case errors.As(r.Err, &ce) && ce.Cause == CauseRefusal && calls[i].Prompt.Model == "flaky":
			refused++
		default:
			t.Errorf("reply %d: unexpected error %v", i, r.Err)
		}
	}
	if refused == 0 || refused > 10 || ok != len(calls)-refused {
		t.Errorf("%d refused, %d ok of %d", refused, ok, len(calls))
	}
	// Malformed responses were retried: some flaky exchange took more than
	// one attempt, and stored metadata is the sim's.
	retried := false
	for i, r := range a {
		k, err := reqkey.Parse(r.Key)
		if err != nil || r.Err != nil {
			continue
		}
		x, err := sa.Get(k)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(x.Response), `"finrepro_synthetic"`) {
			t.Errorf("a sim response does not say it is synthetic: %s", x.Response)
		}
		if x.Meta.Source != results.SourceSim || x.Meta.RecordedAt != "2026-01-01T00:00:00Z" || x.Meta.CostUSD != 0 {
			t.Errorf("meta %+v", x.Meta)
		}
		if calls[i].Prompt.Model == "flaky" && (x.Meta.LatencyMS < 1000 || x.Meta.LatencyMS > 3000) {
			t.Errorf("latency %d outside [1000, 3000]", x.Meta.LatencyMS)
		}
		retried = retried || x.Meta.Attempts > 1
	}
	if !retried {
		t.Error("no malformed sim response was retried")
	}
	if d := ca.Drifts(); len(d) != 1 || d[0].Reported != "other-model" {
		t.Errorf("drifts %+v", d)
	}
	// Offline replay from the recorded store answers everything recorded.
	off := New(sa, Config{})
	for i, r := range off.Answer(context.Background(), calls) {
		if (r.Err == nil) != (a[i].Err == nil) || r.Text != a[i].Text {
			t.Errorf("replay %d: %+v, recorded %+v", i, r, a[i])
		}
	}
}

func TestSimOracleSeesPrompt(t *testing.T) {
	var seen atomic.Value
	o := OracleFunc(func(p results.Prompt) (string, error) {
		seen.Store(p)
		return "ok", nil
	})
	store, _ := openStore(t)
	c := New(store, Config{Mode: Record, Sim: NewSim(1, o, nil)})
	cl := call("sim", "m", "the user")
	cl.Prompt.Sample = 3
	if r := c.Answer(context.Background(), []results.Call{cl})[0]; r.Err != nil || r.Text != "ok" {
		t.Fatalf("%+v", r)
	}
	p := seen.Load().(results.Prompt)
	if p.Model != "m" || p.System != cl.Prompt.System || p.User != "the user" || p.Sample != 3 || p.Params["max_tokens"] != float64(256) {
		t.Errorf("oracle saw %+v", p)
	}
	failing := New(store, Config{Mode: Record, Sim: NewSim(1, OracleFunc(func(results.Prompt) (string, error) {
		return "", errors.New("no answer")
	}), nil)})
	r := failing.Answer(context.Background(), []results.Call{call("sim", "m", "other")})[0]
	var ce *CallError
	if !errors.As(r.Err, &ce) || ce.Cause != CauseSim {
		t.Errorf("oracle error gave %v", r.Err)
	}
}

// decompressAll returns b and the output of every zstd frame found in it,
// decoded with every dictionary of the store it lies in.
func decompressAll(b []byte) [][]byte {
	out := [][]byte{b}
	magic := []byte{0x28, 0xb5, 0x2f, 0xfd}
	opts := []zstd.DOption{zstd.WithDecoderMaxMemory(1 << 28)}
	for _, d := range storeDicts {
		sum := sha256.Sum256(d)
		id := 32768 + binary.LittleEndian.Uint32(sum[:4])%(1<<31-32768)
		opts = append(opts, zstd.WithDecoderDictRaw(id, d))
	}
	dec, err := zstd.NewReader(nil, opts...)
	if err != nil {
		return out
	}
	defer dec.Close()
	for off := 0; ; {
		i := bytes.Index(b[off:], magic)
		if i < 0 {
			return out
		}
		off += i
		if err := dec.Reset(bytes.NewReader(b[off:])); err == nil {
			part, _ := io.ReadAll(dec) // the bytes decoded before any error still count
			out = append(out, part)
		}
		off += len(magic)
	}
}

// storeDicts are dictionary files found by loadDicts.
var storeDicts [][]byte

func loadDicts(dir string) {
	ents, _ := os.ReadDir(filepath.Join(dir, "dicts")) // a store without dictionaries has no folder
	for _, e := range ents {
		if b, err := os.ReadFile(filepath.Join(dir, "dicts", e.Name())); err == nil {
			storeDicts = append(storeDicts, b)
		}
	}
}
