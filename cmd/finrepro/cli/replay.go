package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/results"
)

const replayDoc = `
Answer requests from the exchange cache in --dir, offline: no network
connection is ever opened.

--requests has the format of "finrepro record". Standard output has one
line for every request line, in input order (blank lines have none): the
stored response body as one line of JSON, or, for a request that is not
stored, {"finrepro_miss": "KEY"} with its cache key in hex, or, for a stored
response that cannot be read, {"finrepro_error": "MESSAGE"}. Output line i
therefore answers request line i. The requests that are not stored are also
listed on standard error with the estimated tokens and cost of recording
them, and the exit code is 3. Endpoints follow the rule of docs/keys.md, the
same as "finrepro cache load".`

// Markers of replay's output lines that carry no response.
const (
	missMarker  = "finrepro_miss"
	errorMarker = "finrepro_error"
)

func runReplay(ctx context.Context, env *Env, args []string) error {
	fs := env.newFlags("replay", "replay --requests FILE --dir D [flags]", replayDoc)
	requests := fs.String("requests", "", "request objects, one JSON object per line")
	dir := fs.String("dir", "", "cache folder")
	pf := addProviderFlags(fs, false)
	pricesFile := fs.String("prices", "", "price table JSON for the cost of misses, as the built-in prices.json")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected arguments %q", fs.Args())
	}
	if *requests == "" || *dir == "" {
		return usageErr("--requests and --dir are required")
	}
	pcs, err := pf.providers()
	if err != nil {
		return err
	}
	prices, err := loadPrices(*pricesFile)
	if err != nil {
		return fmt.Errorf("prices: %w", err)
	}
	reqs, err := readRequests(*requests, *pf.name)
	if err != nil {
		return err
	}
	store, err := cache.Open(*dir, cache.Options{})
	if err != nil {
		return err
	}
	defer store.Close()
	c := replay.New(store, replay.Config{Mode: replay.Offline, Providers: pcs, Prices: prices, Getenv: env.Getenv})
	// Requests are answered a chunk at a time, so that memory holds the
	// responses of a chunk; every answered line is written out before a
	// failure stops the run.
	w := bufio.NewWriter(env.Stdout)
	failed, synthetic := 0, 0
	for lo := 0; lo < len(reqs) && err == nil; lo += replayChunk {
		replies, bodies := c.AnswerRequestBodies(ctx, reqs[lo:min(len(reqs), lo+replayChunk)])
		var f, s int
		f, s, err = writeReplies(env, w, replies, bodies)
		failed, synthetic = failed+f, synthetic+s
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	if synthetic > 0 {
		fmt.Fprintf(env.Stderr, "note: %d of the responses are synthetic (simulator output, not a real model)\n", synthetic)
	}
	if ms := c.Misses(); len(ms) > 0 {
		printMisses(env.Stderr, ms, pcs, prices, len(reqs), "record them with finrepro record")
		return &missesError{len(ms)}
	}
	if failed > 0 {
		return fmt.Errorf("%d stored responses could not be read", failed)
	}
	return nil
}

// replayChunk is how many requests replay answers at a time.
const replayChunk = 1024

// writeReplies writes the stored response of every answered reply (bodies,
// as AnswerRequestBodies returns them) to w, one line each, in order, and
// prints the other failures. It stops at the first corrupt entry (an error
// wrapping cache.ErrCorrupt) and counts the failed and the synthetic
// replies.
func writeReplies(env *Env, w io.Writer, replies []results.Reply, bodies [][]byte) (failed, synthetic int, err error) {
	for i, r := range replies {
		var me *replay.MissError
		switch {
		case errors.As(r.Err, &me):
			fmt.Fprintf(w, "{%q:%q}\n", missMarker, me.Key)
			continue
		case errors.Is(r.Err, cache.ErrCorrupt):
			return failed, synthetic, r.Err
		case r.Err != nil:
			sayf(env.Stderr, "%v", r.Err)
			msg, _ := json.Marshal(r.Err.Error()) // a string always encodes
			fmt.Fprintf(w, "{%q:%s}\n", errorMarker, msg)
			failed++
			continue
		}
		if r.Synthetic() {
			synthetic++
		}
		w.Write(bodies[i])
		if _, err := io.WriteString(w, "\n"); err != nil {
			return failed, synthetic, err
		}
	}
	return failed, synthetic, nil
}
