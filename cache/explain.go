package cache

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/finrepro/finrepro/cache/reqkey"
)

// Explain describes why a request (in canonical form) is not stored: the
// nearest stored requests of the same provider and model (meta.model, or
// body.model of the request) with a field-level diff, at most n of them,
// fewest differences first.
func Explain(s *Store, canon []byte, n int) (string, error) {
	js, ok := reqkey.JSON(canon)
	if !ok {
		return "", fmt.Errorf("cache: explain: not a canonical request")
	}
	want, err := flatten(js)
	if err != nil {
		return "", err
	}
	var req struct {
		Provider string `json:"provider"`
		Body     struct {
			Model any `json:"model"`
		} `json:"body"`
	}
	_ = json.Unmarshal(js, &req) // canonical JSON: cannot fail
	model, _ := req.Body.Model.(string)
	keys, err := s.Lookup(req.Provider, model)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if len(keys) == 0 {
		all, err := s.Lookup(req.Provider, "")
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "no stored request for provider %q and model %q (%d for the provider with other models)\n", req.Provider, model, len(all))
		return b.String(), nil
	}
	type cand struct {
		k     Key
		diffs []string
	}
	var cands []cand
	for _, k := range keys {
		x, err := s.Get(k)
		if err != nil {
			fmt.Fprintf(&b, "stored request %s unreadable: %v\n", k.Str(), err)
			continue
		}
		have, err := flatten(x.Request)
		if err != nil {
			continue
		}
		cands = append(cands, cand{k, diff(have, want)})
	}
	slices.SortStableFunc(cands, func(a, b cand) int { return len(a.diffs) - len(b.diffs) })
	fmt.Fprintf(&b, "%d stored requests for provider %q and model %q; nearest:\n", len(keys), req.Provider, model)
	for _, c := range cands[:min(n, len(cands))] {
		fmt.Fprintf(&b, "\n%s: %d fields differ\n", c.k, len(c.diffs))
		for _, d := range c.diffs {
			fmt.Fprintf(&b, "  %s\n", d)
		}
	}
	return b.String(), nil
}

// flatten maps every leaf of a JSON document to its compact encoding,
// keyed by its path ("body.messages[1].content").
func flatten(js []byte) (map[string]string, error) {
	d := json.NewDecoder(bytes.NewReader(js))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("cache: explain: %w", err)
	}
	out := map[string]string{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if len(v) == 0 {
				out[path] = "{}"
			}
			for k, e := range v {
				p := k
				if path != "" {
					p = path + "." + k
				}
				walk(p, e)
			}
		case []any:
			if len(v) == 0 {
				out[path] = "[]"
			}
			for i, e := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		default:
			b, _ := json.Marshal(v) // a decoded JSON scalar: cannot fail
			out[path] = string(b)
		}
	}
	walk("", v)
	return out, nil
}

// diff lists the paths where have (stored) and want (asked) differ,
// sorted by path.
func diff(have, want map[string]string) []string {
	var out []string
	for p, w := range want {
		h, ok := have[p]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("+ %s: %s (only in the asked request)", p, short(w)))
		case h != w:
			out = append(out, fmt.Sprintf("~ %s: stored %s, asked %s", p, short(h), short(w)))
		}
	}
	for p, h := range have {
		if _, ok := want[p]; !ok {
			out = append(out, fmt.Sprintf("- %s: %s (only in the stored request)", p, short(h)))
		}
	}
	slices.SortFunc(out, func(a, b string) int { return strings.Compare(a[2:], b[2:]) })
	return out
}

// short abbreviates long values to their first 60 characters.
func short(s string) string {
	if utf8.RuneCountInString(s) <= 60 {
		return s
	}
	r := []rune(s)
	return fmt.Sprintf("%s… (%d bytes)", string(r[:60]), len(s))
}
