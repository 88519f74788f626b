package reqkey

import (
	"strings"
	"testing"
)

func TestCheckEndpoint(t *testing.T) {
	for _, tt := range []struct {
		endpoint string
		want     string // "" for accepted, else part of the error
	}{
		{"chat/completions", ""},
		{"messages", ""},
		{"responses", ""},
		{"models/gemini-2.5-pro:generateContent", ""},
		{"", "empty"},
		{"/v1/chat/completions", `relative to the provider's base URL ("chat/completions")`},
		{"/chat/completions", "starts with /"},
		{"../x", "not a plain relative path"},
		{"a/../../x", "not a plain relative path"},
		{"https://evil.example/x", "not a plain relative path"},
		{"chat/completions?key=1", "not a plain relative path"},
		{"chat#x", "not a plain relative path"},
		{`chat\completions`, "not a plain relative path"},
		{"chat completions", "not a plain relative path"},
		{"chat\x00", "not a plain relative path"},
		{"chat\x7f", "not a plain relative path"},
		{`chat"x`, "not a plain relative path"},
	} {
		err := CheckEndpoint(tt.endpoint)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%q: %v", tt.endpoint, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%q: got %v, want an error with %q", tt.endpoint, err, tt.want)
		}
	}
}

// TestLoadEndpointRule: a load line is refused exactly when CheckEndpoint
// refuses its endpoint, with the field named.
