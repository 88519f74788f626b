package archive

import (
	"testing"
)

// secretSamples hold one credential of each pattern (all made up), in
// the cases (?i) allows, and near misses.
var secretSamples = []string{
	"my key is sk-proj-abcdefghijklmnopqrstuvwx",
	"x sk-ant-ABCDEFGHIJKLMNOPQRSTUVWX",
	"AIzaSyA0123456789abcdefghijklmnopqrstuv",
	"id AKIAABCDEFGHIJKLMNOP and ASIAABCDEFGHIJKLMNOP",
	"ghp_abcdefghijklmnopqrstuvwxyz0123456789",
	"gho_abcdefghijklmnopqrstuvwxyz0123456789 ghr_abcdefghijklmnopqrstuvwxyz0123456789",
	"hf_abcdefghijklmnopqrstuvwxyz01234",
	"Authorization: Bearer abcdefghijklmnopqrstuvwxyz",
	"authorization: BEARER\tabcdefghijklmnopqrstuvwxyz",
	"bEaReR abcdefghijklmnopqrstuvwxyz.=",
	"-----BEGIN RSA PRIVATE KEY-----",
	"-----BEGIN PRIVATE KEY-----",
	"a bearer of news, the sky, sk-short, AKIA1234, gh_x, hf_short",
	"bearebearer abcdefghijklmnopqrstuvwxyz",
	"ＢEARER abcdefghijklmnopqrstuvwxyz", // a full-width B is no b
	"",
}

// TestSecretHints: a pattern's Has holds for every text its regexp
// matches (so skipping the regexp when it does not loses nothing), and
// the scan finds every sample's credential.
func TestSecretHints(t *testing.T) {
	found := 0
	for _, s := range secretSamples {
		checkHints(t, []byte(s))
		for _, p := range SecretPatterns {
			if p.Re.MatchString(s) {
				found++
			}
		}
	}
	if found != 12 {
		t.Errorf("the patterns match %d times in the samples, want 12 (one per credential line)", found)
	}
}

func checkHints(t *testing.T, b []byte) {
	t.Helper()
	for _, p := range SecretPatterns {
		if p.Has == nil {
			continue
		}
		if p.Re.Match(b) && !p.Has(b) {
			t.Errorf("%s: the regexp matches %q but Has says no", p.Name, b)
		}
	}
	var want []string
	for _, p := range SecretPatterns {
		if p.Re.Match(b) {
			want = append(want, p.Name)
		}
	}
	if got := scan(b, nil); len(got) != len(want) {
		t.Errorf("scan(%q) = %v, want %v", b, got, want)
	}
}

// FuzzSecretHints: the property above on any text.
func FuzzSecretHints(f *testing.F) {
	for _, s := range secretSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkHints(t, b) })
}
