package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/replay"
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
	replies := c.AnswerRequests(ctx, reqs)
	w := bufio.NewWriter(env.Stdout)
	failed, synthetic := 0, 0
	for _, r := range replies {
		if r.Err == nil && r.Synthetic() {
			synthetic++
		}
		var me *replay.MissError
		switch {
		case errors.As(r.Err, &me):
			fmt.Fprintf(w, "{%q:%q}\n", missMarker, me.Key)
			continue
		case r.Err != nil:
			fmt.Fprintf(env.Stderr, "%v\n", r.Err)
			msg, _ := json.Marshal(r.Err.Error()) // a string always encodes
			fmt.Fprintf(w, "{%q:%s}\n", errorMarker, msg)
			failed++
			continue
		}
		k, err := cache.ParseKey(r.Key)
		if err != nil {
			return err
		}
		x, err := store.Get(k)
		if err != nil {
			return fmt.Errorf("replay: read %s: %w", k.Str(), err)
		}
		var line bytes.Buffer
		if err := json.Compact(&line, x.Response); err != nil {
			return fmt.Errorf("replay: response %s: %w", k.Str(), err)
		}
		line.WriteByte('\n')
		w.Write(line.Bytes())
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if synthetic > 0 {
		fmt.Fprintf(env.Stderr, "note: %d of the responses are synthetic (simulator output, not a real model)\n", synthetic)
	}
	if ms := c.Misses(); len(ms) > 0 {
		printMisses(env.Stderr, ms, prices, len(reqs), "record them with finrepro record")
		return missErr(fmt.Errorf("requests not in the cache: %d", len(ms)))
	}
	if failed > 0 {
		return fmt.Errorf("%d stored responses could not be read", failed)
	}
	return nil
}
