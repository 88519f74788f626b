package replay

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// A limiter keeps one provider under its requests-per-minute and
// tokens-per-minute limits over a sliding one-minute window.
type limiter struct {
	rpm, tpm int
	now      func() time.Time
	sleep    func(context.Context, time.Duration) error

	mu   sync.Mutex
	sent []sent // in the last minute, oldest first
}

type sent struct {
	at     time.Time
	tokens int
}

// wait blocks until a request of the given estimated tokens fits in both
// limits, then counts it. A request larger than the whole TPM budget waits
// for an empty window and then goes alone.
func (l *limiter) wait(ctx context.Context, tokens int) error {
	if l.rpm <= 0 && l.tpm <= 0 {
		return nil
	}
	for {
		l.mu.Lock()
		now := l.now()
		for len(l.sent) > 0 && now.Sub(l.sent[0].at) >= time.Minute {
			l.sent = l.sent[1:]
		}
		used := 0
		for _, s := range l.sent {
			used += s.tokens
		}
		okR := l.rpm <= 0 || len(l.sent) < l.rpm
		okT := l.tpm <= 0 || used+tokens <= l.tpm || len(l.sent) == 0
		if okR && okT {
			l.sent = append(l.sent, sent{now, tokens})
			l.mu.Unlock()
			return nil
		}
		d := time.Minute - now.Sub(l.sent[0].at)
		l.mu.Unlock()
		if err := l.sleep(ctx, d); err != nil {
			return err
		}
	}
}

// Sleep waits for d or until ctx is done, and returns ctx.Err() then.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// A Backoff computes retry delays: exponential from base, capped at
// MaxBackoff, with jitter (half the delay, at random) from a seeded
// source, and at least what the server asked for in Retry-After. The
// client and the batch commands retry by it. It is safe for concurrent
// use.
type Backoff struct {
	base time.Duration
	mu   sync.Mutex
	rnd  *rand.Rand
}

// NewBackoff returns a Backoff from base (DefaultBackoff when 0), its
// jitter seeded with seed.
func NewBackoff(base time.Duration, seed uint64) *Backoff {
	if base <= 0 {
		base = DefaultBackoff
	}
	return &Backoff{base: base, rnd: rand.New(rand.NewPCG(seed, 0x6a09e667f3bcc908))}
}

// Delay returns the wait before retry number retry (from 1), after an
// answer that asked for retryAfter (0 when it did not).
func (b *Backoff) Delay(retry int, retryAfter time.Duration) time.Duration {
	ceil := b.base << min(retry-1, 20)
	if ceil <= 0 || ceil > MaxBackoff {
		ceil = MaxBackoff
	}
	b.mu.Lock()
	d := ceil/2 + time.Duration(b.rnd.Int64N(int64(ceil/2)+1))
	b.mu.Unlock()
	if retryAfter > d {
		d = min(retryAfter, MaxBackoff)
	}
	return d
}

// maxRetryAfter caps the wait a Retry-After header can ask for, so that a
// huge number cannot overflow into a negative wait (the backoff caps the
// wait further).
const maxRetryAfter = 365 * 24 * time.Hour

// parseRetryAfter reads a Retry-After header: seconds or an HTTP date.
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	v := h.Get("Retry-After")
	if v == "" {
		if ms, err := strconv.ParseInt(h.Get("retry-after-ms"), 10, 64); err == nil && ms > 0 {
			return time.Duration(min(ms, int64(maxRetryAfter/time.Millisecond))) * time.Millisecond
		}
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s < 0 {
			return 0
		}
		return time.Duration(min(s, int64(maxRetryAfter/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
