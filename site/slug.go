package site

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxSlug caps the readable part of a slug, so that file names stay well
// under file system limits whatever the name.
const maxSlug = 60

// slugger gives every name a file name stem that is unique
// case-insensitively (case-insensitive file systems would merge pages
// otherwise), made of [a-z0-9-] only.
type slugger struct {
	byName map[string]string
	used   map[string]bool
}

func newSlugger() *slugger {
	return &slugger{byName: map[string]string{}, used: map[string]bool{}}
}

// slug returns name's slug. A name keeps its readable form when it is
// plain lower-case ASCII and free; otherwise a hash of the name is
// appended. Callers assign slugs in sorted name order, so that slugs do not
// depend on input order.
func (s *slugger) slug(name string) string {
	if v, ok := s.byName[name]; ok {
		return v
	}
	base := sanitize(name)
	v := base
	if base == "" || base != name || s.used[base] {
		sum := sha256.Sum256([]byte(name))
		v = strings.TrimPrefix(base+"-"+hex.EncodeToString(sum[:4]), "-")
	}
	for i := 2; s.used[v]; i++ { // two names sharing a hash prefix: practically never
		v = base + "-" + hex.EncodeToString([]byte{byte(i)}) + "-" + v
	}
	s.byName[name] = v
	s.used[v] = true
	return v
}

// sanitize lower-cases name and turns every run of other characters than
// a-z and 0-9 into one hyphen.
func sanitize(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			if b.Len() >= maxSlug {
				break
			}
			continue
		}
		dash = true
	}
	return b.String()
}
