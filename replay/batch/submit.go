package batch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/replay"
)

// SubmitOptions say what Submit sends.
type SubmitOptions struct {
	// Provider is the provider whose requests are submitted.
	Provider string
	// MaxRequests and MaxBytes lower the provider's limits per batch.
	MaxRequests int
	MaxBytes    int64
	// Resubmit forgets batches whose creation was never confirmed and
	// submits their requests again.
	Resubmit bool
	// Bundle, when set, is the bundle folder the requests come from; it
	// is recorded in the state (one bundle per state folder).
	Bundle string
}

// A SubmitReport says what Submit did.
type SubmitReport struct {
	// Requests is the number of distinct requests of the provider.
	Requests int
	// Stored were already in the cache; Covered are in open batches.
	Stored, Covered int
	// LeftOut are requests of other providers.
	LeftOut int
	// TooLarge are requests larger than a batch may be.
	TooLarge []string
	// Batches are the batches created.
	Batches []*Batch
}

// Submitted returns the number of requests submitted.
func (s *SubmitReport) Submitted() int {
	n := 0
	for _, b := range s.Batches {
		n += len(b.Keys)
	}
	return n
}

// Submit submits the requests of opt.Provider that no stored exchange and
// no open batch covers, in batches within the provider's limits, and
// records every batch in the state before and after its creation.
func (r *Runner) Submit(ctx context.Context, reqs []replay.Request, opt SubmitOptions) (*SubmitReport, error) {
	var unconfirmed []string
	kept := r.state.Batches[:0:0]
	for _, b := range r.state.Batches {
		if b.Status == StatusSubmitting {
			unconfirmed = append(unconfirmed, b.Local)
			if opt.Resubmit {
				continue
			}
		}
		kept = append(kept, b)
	}
	if len(unconfirmed) > 0 && !opt.Resubmit {
		return nil, fmt.Errorf("batch: batches %s were being created when a run stopped and may exist at the provider: check its console (or cancel them there), then rerun with --resubmit", strings.Join(unconfirmed, ", "))
	}
	if opt.Bundle != "" && r.state.Bundle != "" && r.state.Bundle != opt.Bundle {
		return nil, fmt.Errorf("batch: %s holds the batches of bundle %s; use another --dir for %s", r.cfg.Dir, r.state.Bundle, opt.Bundle)
	}
	r.state.Batches = kept
	if opt.Bundle != "" {
		r.state.Bundle = opt.Bundle
	}
	if len(unconfirmed) > 0 {
		// Forgotten now, even when nothing is left to submit.
		if err := r.state.save(r.cfg.Dir); err != nil {
			return nil, err
		}
	}
	pc, ok := r.cfg.Client.Provider(opt.Provider)
	if !ok {
		return nil, fmt.Errorf("batch: unknown provider %q", opt.Provider)
	}
	api, ok := APIOf(pc.Kind)
	if !ok {
		return nil, fmt.Errorf("batch: provider %q speaks %s, which has no batch API here (openai and anthropic shapes do)", opt.Provider, pc.Kind)
	}
	lim := api.Limits()
	if opt.MaxRequests > 0 {
		lim.Requests = min(lim.Requests, opt.MaxRequests)
	}
	if opt.MaxBytes > 0 {
		lim.Bytes = min(lim.Bytes, opt.MaxBytes)
	}
	rep := &SubmitReport{}
	covered := r.state.covered()
	seen := map[cache.Key]bool{}
	type group struct {
		endpoint, model string
		lines           []line
	}
	groups := map[[2]string]*group{}
	for _, q := range reqs {
		if q.Provider != opt.Provider {
			rep.LeftOut++
			continue
		}
		kr, err := r.cfg.Client.Keyed(q)
		if err != nil {
			return nil, fmt.Errorf("batch: %s: %w", replay.LabelText(q.Label), err)
		}
		if seen[kr.Key] {
			continue
		}
		seen[kr.Key] = true
		rep.Requests++
		if has, err := r.cfg.Store.Has(kr.Key); err != nil {
			return nil, err
		} else if has {
			rep.Stored++
			continue
		}
		if covered[kr.Key] {
			rep.Covered++
			continue
		}
		if api == Anthropic && kr.Request.Endpoint != "messages" {
			return nil, fmt.Errorf("batch: %s: endpoint %q: Message Batches take messages requests only", replay.LabelText(q.Label), kr.Request.Endpoint)
		}
		l, err := newLine(api, kr)
		if err != nil {
			return nil, fmt.Errorf("batch: %s: %w", replay.LabelText(q.Label), err)
		}
		g := [2]string{kr.Request.Endpoint, kr.Model}
		if api == Anthropic {
			g = [2]string{} // a Message Batch may mix models
		}
		if groups[g] == nil {
			groups[g] = &group{endpoint: g[0], model: g[1]}
		}
		groups[g].lines = append(groups[g].lines, l)
	}
	names := make([][2]string, 0, len(groups))
	for g := range groups {
		names = append(names, g)
	}
	slices.SortFunc(names, func(a, b [2]string) int { return strings.Compare(a[0]+"\x00"+a[1], b[0]+"\x00"+b[1]) })
	for _, g := range names {
		var chunk []line
		var size int64
		flush := func() error {
			if len(chunk) == 0 {
				return nil
			}
			b, err := r.create(ctx, opt.Provider, api, chunk)
			if b != nil {
				rep.Batches = append(rep.Batches, b)
			}
			chunk, size = nil, 0
			return err
		}
		for _, l := range groups[g].lines {
			n := l.size()
			if n > lim.Bytes {
				rep.TooLarge = append(rep.TooLarge, fmt.Sprintf("%.8s (%d bytes)", l.key, n))
				continue
			}
			if len(chunk) == lim.Requests || size+n > lim.Bytes {
				if err := flush(); err != nil {
					return rep, err
				}
			}
			chunk = append(chunk, l)
			size += n
		}
		if err := flush(); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

func customID(api API, sample int, key cache.Key) string {
	if api == Anthropic {
		return anthropicID(sample, key)
	}
	return replay.BatchCustomID(sample, key)
}

// newLine makes the batch line of a keyed request: its custom_id and the
// bytes it is sent as, encoded once.
func newLine(api API, kr replay.KeyedRequest) (line, error) {
	l := line{id: customID(api, kr.Request.Sample, kr.Key), key: kr.Key, raw: kr.Raw}
	var err error
	if api == Anthropic {
		l.wire, err = json.Marshal(anthropicRequest{CustomID: l.id, Params: kr.Request.Body})
	} else {
		l.wire, err = replay.BatchLine(&kr.Request, kr.Key)
		l.endpoint = kr.Request.Endpoint
	}
	return l, err
}

// size is the line's share of its batch's input: a line of the input
// file and its newline, or an element of the create body and its comma.
func (l line) size() int64 { return int64(len(l.wire)) + 1 }

// An httpStatusError is a provider answer with a status other than 200:
// the call was refused, so nothing was created.
type httpStatusError struct {
	status int
	msg    string
}

func (e *httpStatusError) Error() string { return e.msg }

// create writes the requests file of one batch, records the batch as
// submitting, creates it at the provider and records its id. A batch the
// provider refused is forgotten again; one whose creation is unknown (the
// connection failed) stays submitting.
func (r *Runner) create(ctx context.Context, provider string, api API, lines []line) (*Batch, error) {
	b := &Batch{Local: r.state.nextLocal(), Provider: provider, API: api, Status: StatusSubmitting}
	ids := map[string]bool{}
	var file bytes.Buffer
	for _, l := range lines {
		if ids[l.id] {
			return nil, fmt.Errorf("batch: two requests share custom_id %s", l.id)
		}
		ids[l.id] = true
		file.Write(l.raw)
		file.WriteByte('\n')
		b.Keys = append(b.Keys, l.key.String())
	}
	e, err := r.endpoint(b)
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(requestsPath(r.cfg.Dir, b.Local), file.Bytes()); err != nil {
		return nil, err
	}
	r.state.Batches = append(r.state.Batches, b)
	if err := r.state.save(r.cfg.Dir); err != nil {
		return nil, err
	}
	if api == Anthropic {
		err = e.anthropicCreate(ctx, b, lines)
	} else {
		err = e.openaiCreate(ctx, b, lines)
	}
	if err != nil {
		var he *httpStatusError
		if errors.As(err, &he) {
			r.state.Batches = slices.DeleteFunc(r.state.Batches, func(x *Batch) bool { return x == b })
			os.Remove(requestsPath(r.cfg.Dir, b.Local)) // unreferenced now; a leftover is harmless
			if serr := r.state.save(r.cfg.Dir); serr != nil {
				return nil, serr
			}
			return nil, fmt.Errorf("batch %s: %w", b.Local, err)
		}
		return b, fmt.Errorf("batch %s: %w (its creation is unconfirmed)", b.Local, err)
	}
	return b, r.state.save(r.cfg.Dir)
}
