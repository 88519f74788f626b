package replay

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// FuzzParseRetryAfter checks that any Retry-After (and retry-after-ms)
// header gives a wait of zero or more, that a whole number of seconds
// up to a day is that many seconds, and an HTTP date that far after now
// the time until it. (A huge number of seconds used to overflow into a
// negative wait.)
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"7", "0", "-1", "", "Wed, 21 Oct 2015 07:28:00 GMT", "99999999999999999", "1e3", " 5"} {
		f.Add(s, "1500", int64(30))
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v, ms string, secs int64) {
		h := http.Header{}
		h.Set("Retry-After", v)
		h.Set("retry-after-ms", ms)
		if d := parseRetryAfter(h, now); d < 0 {
			t.Fatalf("Retry-After %q, retry-after-ms %q: wait %v", v, ms, d)
		}
		h.Del("Retry-After")
		if d := parseRetryAfter(h, now); d < 0 {
			t.Fatalf("retry-after-ms %q: wait %v", ms, d)
		}
		secs %= 24 * 3600
		if secs < 0 {
			secs = -secs
		}
		h = http.Header{}
		h.Set("Retry-After", strconv.FormatInt(secs, 10))
		if d := parseRetryAfter(h, now); d != time.Duration(secs)*time.Second {
			t.Fatalf("Retry-After %d: wait %v", secs, d)
		}
		h.Set("Retry-After", now.Add(time.Duration(secs)*time.Second).Format(http.TimeFormat))
		if d := parseRetryAfter(h, now); d != time.Duration(secs)*time.Second {
			t.Fatalf("Retry-After %s: wait %v, want %ds", h.Get("Retry-After"), d, secs)
		}
	})
}
