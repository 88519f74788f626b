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

--requests has the format of "finrepro record". For every stored request,
in input order, the stored response body is written to standard output as
one line of JSON. Requests that are not stored are listed on standard error
with the estimated tokens and cost of recording them, and the exit code is
3.`

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
			continue
		case r.Err != nil:
			fmt.Fprintf(env.Stderr, "%v\n", r.Err)
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
		printMisses(env.Stderr, ms, pcs, prices, len(reqs), "record them with finrepro record")
		return missErr(fmt.Errorf("requests not in the cache: %d", len(ms)))
	}
	if failed > 0 {
		return fmt.Errorf("%d stored responses could not be read", failed)
	}
	return nil
}
