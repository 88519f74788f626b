package reqkey

import (
	"errors"
	"fmt"
	"strings"
)

// CheckEndpoint is the one rule for a request's endpoint, shared by "cache
// load" and the requests files of "finrepro record" and "finrepro replay":
// a plain path relative to the provider's base URL ("chat/completions",
// "messages", "models/M:generateContent"), never one that could leave it
// or carry a query string, where keys hide. A leading "/" is refused:
// "/v1/chat/completions" would repeat the base URL's /v1.
func CheckEndpoint(e string) error {
	switch {
	case e == "":
		return errors.New("empty endpoint")
	case strings.HasPrefix(e, "/"):
		return fmt.Errorf("endpoint %q starts with /: write it relative to the provider's base URL (%q)", e, strings.TrimPrefix(strings.TrimPrefix(e, "/"), "v1/"))
	case strings.Contains(e, ".."), strings.Contains(e, "://"), strings.ContainsAny(e, "?#\\ \t\r\n\"") || strings.ContainsFunc(e, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fmt.Errorf("endpoint %q is not a plain relative path", e)
	}
	return nil
}

// checkEncodedEndpoint applies CheckEndpoint to the endpoint of the
// request object e has just encoded. A canonical string holds an escape
// only for a character CheckEndpoint refuses, so the encoded bytes are
// checked as they are.
func (e *encoder) checkEncodedEndpoint() error {
	for _, m := range e.members {
		if m.key == "endpoint" {
			enc := e.out[m.val:m.end]
			if len(enc) < 2 {
				return errors.New("want a string")
			}
			return CheckEndpoint(string(enc[1 : len(enc)-1]))
		}
	}
	return nil
}
