package archive

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/finrepro/finrepro/cache"
)

// A SecretPattern is a kind of credential recognised by its shape.
type SecretPattern struct {
	Name string
	Re   *regexp.Regexp
	// Has, when set, reports whether b holds the literal text every
	// match of Re begins with; Re is run only on text that does. (Go's
	// regexp finds no literal prefix after a leading \b, so it would try
	// a match at every byte: most of the time of a scan.)
	Has func(b []byte) bool
}

// SecretPatterns are the credential shapes ScanSecrets looks for besides
// the exact values it is given.
var SecretPatterns = []SecretPattern{
	{"OpenAI or Anthropic API key", regexp.MustCompile(`\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{20,}`), hasAny("sk-")},
	{"Google API key", regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}\b`), hasAny("AIza")},
	{"AWS access key ID", regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`), hasAny("AKIA", "ASIA")},
	{"GitHub token", regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{36,}\b`), hasAny("ghp_", "gho_", "ghu_", "ghs_", "ghr_")},
	{"Hugging Face token", regexp.MustCompile(`\bhf_[A-Za-z0-9]{30,}\b`), hasAny("hf_")},
	{"bearer token", regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9_\-\.=]{20,}`), hasFold("bearer")},
	{"private key", regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`), hasAny("-----BEGIN ")},
}

// hasAny returns a SecretPattern.Has for text holding any of lits.
func hasAny(lits ...string) func([]byte) bool {
	return func(b []byte) bool {
		for _, l := range lits {
			if bytes.Contains(b, []byte(l)) {
				return true
			}
		}
		return false
	}
}

// hasFold returns a SecretPattern.Has for text holding lit, an ASCII
// lower-case word, in any case (as (?i) matches it).
func hasFold(lit string) func([]byte) bool {
	return func(b []byte) bool {
		for i := 0; i+len(lit) <= len(b); i++ {
			j := bytes.IndexAny(b[i:len(b)-len(lit)+1], lit[:1]+strings.ToUpper(lit[:1]))
			if j < 0 {
				return false
			}
			i += j
			if bytes.EqualFold(b[i:i+len(lit)], []byte(lit)) {
				return true
			}
		}
		return false
	}
}

// A Finding is a secret found by a scan: in a file, or in one exchange of
// a store (Key set, Path the part: request, response or meta).
type Finding struct {
	Key  cache.Key
	Path string
	What string // the pattern's name, or "value of a secret" for a needle
}

func (f Finding) String() string {
	if f.Key != (cache.Key{}) {
		return fmt.Sprintf("exchange %s: %s: %s", f.Key, f.Path, f.What)
	}
	return f.Path + ": " + f.What
}

// minNeedle is the shortest secret value looked for: shorter values
// (empty or placeholder variables) would match ordinary text.
const minNeedle = 8

// scan returns what b holds: needles (secret values, e.g. the API keys in
// the environment) and SecretPatterns.
func scan(b []byte, needles []string) []string {
	var what []string
	for _, n := range needles {
		if len(n) >= minNeedle && bytes.Contains(b, []byte(n)) {
			what = append(what, "value of a secret")
			break
		}
	}
	for _, p := range SecretPatterns {
		if (p.Has == nil || p.Has(b)) && p.Re.Match(b) {
			what = append(what, p.Name)
		}
	}
	return what
}

// ScanStore looks for secrets in every exchange of the store s (request,
// response and meta, decompressed) and returns what it finds, sorted by
// key, then in its dictionaries. needles are exact secret values (such as the API keys of the
// environment); values shorter than 8 bytes are ignored.
func ScanStore(s *cache.Store, needles []string) ([]Finding, error) {
	var out []Finding
	err := s.Each(func(k cache.Key, x *cache.Exchange) error {
		for _, part := range []struct {
			name string
			b    []byte
		}{{"request", x.Request}, {"response", x.Response}} {
			for _, w := range scan(part.b, needles) {
				out = append(out, Finding{Key: k, Path: part.name, What: w})
			}
		}
		meta := fmt.Sprintf("%+v", x.Meta)
		for _, w := range scan([]byte(meta), needles) {
			out = append(out, Finding{Key: k, Path: "meta", What: w})
		}
		return nil
	})
	if err != nil {
		return out, err
	}
	// Dictionaries hold excerpts of objects, possibly of removed ones.
	err = s.EachDict(func(path string, b []byte) error {
		for _, w := range scan(b, needles) {
			out = append(out, Finding{Path: path, What: w})
		}
		return nil
	})
	if err != nil {
		return out, fmt.Errorf("cache: scan secrets: %w", err)
	}
	return out, nil
}

// ScanSecrets looks for secrets in every file under dir: plain files as
// they are, and each cache store found inside (a folder with a cache
// FORMAT file) exchange by exchange, decompressed. See ScanStore.
func ScanSecrets(dir string, needles []string) ([]Finding, error) {
	var out []Finding
	var stores []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if cache.IsStore(p) {
				stores = append(stores, p)
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p) // p is under dir
		for _, w := range scan(b, needles) {
			out = append(out, Finding{Path: filepath.ToSlash(rel), What: w})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cache: scan secrets: %w", err)
	}
	for _, sd := range stores {
		s, err := cache.Open(sd, cache.Options{})
		if err != nil {
			return nil, err
		}
		fs, err := ScanStore(s, needles)
		s.Close()
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(dir, sd)
		for i := range fs {
			fs[i].Path = filepath.ToSlash(rel) + ": " + fs[i].Path
		}
		out = append(out, fs...)
	}
	slices.SortStableFunc(out, func(a, b Finding) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}
