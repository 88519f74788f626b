package cache

import (
	"errors"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/cache/reqkey"
)

// TestParseLineStrings checks what the line parser takes in strings: a
// response or meta may hold a lone surrogate escape (encoding/json reads
// one as U+FFFD, and providers' bodies are stored as they came), a
// request may not (the key rule refuses it), and raw invalid UTF-8 is
// refused everywhere.
func TestParseLineStrings(t *testing.T) {
	const req = `{"provider":"p","endpoint":"e","body":{}}`
	tests := []struct {
		name, line, field string // field of the error; "" for none
	}{
		{"lone surrogate in response", `{"request":` + req + `,"response":{"text":"\ud800"}}`, ""},
		{"lone surrogate in meta", `{"request":` + req + `,"response":1,"meta":{"provider":"p","model":"\udc00","source":"api"}}`, ""},
		{"lone surrogate in request", `{"request":{"provider":"p","endpoint":"e","body":{"a":"\ud800"}},"response":1}`, "request.body.a"},
		{"invalid UTF-8 in response", "{\"request\":" + req + ",\"response\":\"\xff\"}", "response"},
		{"invalid UTF-8 in request", "{\"request\":{\"provider\":\"p\",\"endpoint\":\"\xff\",\"body\":{}},\"response\":1}", "request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x, err := ParseLine([]byte(tc.line))
			var le *LineError
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("ParseLine: %v", err)
			case tc.field == "":
				if _, err := reqkey.Of(x.Request); err != nil {
					t.Fatalf("accepted a request without a key: %v", err)
				}
			case !errors.As(err, &le) || le.Field != tc.field:
				t.Fatalf("ParseLine error %v, want a *LineError at %s", err, tc.field)
			}
		})
	}
}

func TestLoadEndpointRule(t *testing.T) {
	for _, e := range []string{"chat/completions", "/v1/chat/completions", "x?key=1", "models/m:generateContent", `a\\b`} {
		line := `{"request":{"provider":"p","endpoint":"` + e + `","body":{}},"response":{}}`
		_, err := ParseLine([]byte(line))
		plain := strings.ReplaceAll(e, `\\`, `\`)
		if want := reqkey.CheckEndpoint(plain); (err == nil) != (want == nil) {
			t.Errorf("%q: load says %v, the rule says %v", e, err, want)
		} else if err != nil && !strings.Contains(err.Error(), "request.endpoint") {
			t.Errorf("%q: error %v does not name request.endpoint", e, err)
		}
	}
}
