package reqkey

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// TestSettled checks every settled character against the Unicode tables:
// in NFC on its own, a starter, and never combining with what precedes it.
func TestSettled(t *testing.T) {
	n := 0
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if !settled(r) {
			continue
		}
		n++
		s := string(r)
		p := norm.NFC.PropertiesString(s)
		if !norm.NFC.IsNormalString(s) || p.CCC() != 0 || !p.BoundaryBefore() {
			t.Errorf("U+%04X is not settled: normal %v, ccc %d, boundary before %v", r, norm.NFC.IsNormalString(s), p.CCC(), p.BoundaryBefore())
		}
	}
	if n == 0 {
		t.Fatal("no settled character")
	}
}

// nfcTests are strings for the NFC shortcuts: settled text, marks that
// combine with what precedes them, jamo, invalid UTF-8.
var nfcTests = []string{
	"",
	"plain ASCII text that is longer than eight bytes",
	"quote \" backslash \\ newline \n tab \t bell \x07",
	"中文报告：收入增长20%。",
	"e\u0301 after ASCII",                 // composes with the ASCII before it
	"中\u0301",                             // a mark after a settled character
	"日本語のテキスト\u3099です",                    // a combining mark inside CJK text
	"\u1100\u1161\u11a8 한국어 \uac00\u11a8", // Hangul jamo and an LV syllable with a trailing jamo
	"bad \xff byte and \xe4\xb8 cut sequence",
	"12345678\u0301",
	"“quoted” — dash…",
	"中文报告A\u030a 段落", // a composing pair after settled text
	"中\xe0\x80\x80文", // an overlong three-byte form after a settled character
	"中\xed\xa0\x80文", // an encoded surrogate
	"文\xe4\xb8",      // a settled character's sequence cut at the end
}

func TestAppendCanonicalString(t *testing.T) {
	for _, s := range nfcTests {
		if got, want := AppendCanonicalString(nil, s), canonicalStringRef(t, s); !bytes.Equal(got, want) {
			t.Errorf("AppendCanonicalString(%q) = %s, want %s", s, got, want)
		}
	}
}

// canonicalStringRef encodes s as encoding/json does and returns the
// canonical encoding of that JSON value, normalised by x/text's NFC
// before the encoder sees it (so that the encoder's own NFC shortcut is
// not its oracle).
func canonicalStringRef(t testing.TB, s string) []byte {
	j, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var u string
	if err := json.Unmarshal(j, &u); err != nil {
		t.Fatal(err)
	}
	if j, err = json.Marshal(norm.NFC.String(u)); err != nil {
		t.Fatal(err)
	}
	want, err := AppendCanonicalValue(nil, j)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return want
}

// TestNFC checks the encoder's NFC, with its shortcut, against x/text's.
func TestNFC(t *testing.T) {
	for _, s := range nfcTests {
		if !utf8.ValidString(s) {
			continue // the encoder sees only the decoder's valid strings
		}
		if got, want := nfc(s), norm.NFC.String(s); got != want {
			t.Errorf("nfc(%q) = %q, want %q", s, got, want)
		}
	}
}

func FuzzAppendCanonicalString(f *testing.F) {
	for _, s := range []string{"", "abc", "e\u0301", "中\u0301文", "\xff", "한\u11a8", "12345678é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := AppendCanonicalString(nil, s), canonicalStringRef(t, s); !bytes.Equal(got, want) {
			t.Errorf("AppendCanonicalString(%q) = %s, want %s", s, got, want)
		}
	})
}

// BenchmarkAppendCanonicalString times AppendCanonicalString on a long
// Chinese report against the same encoding without its NFC shortcut
// (normalising the whole text, then escaping it).
func BenchmarkAppendCanonicalString(b *testing.B) {
	s := strings.Repeat("2024年净息差同比收窄12个基点，主要受存款重定价影响；“资产质量”保持稳定。Net interest margin fell 12 bp. ", 200)
	var buf []byte
	b.Run("shortcut", func(b *testing.B) {
		b.SetBytes(int64(len(s)))
		for b.Loop() {
			buf = AppendCanonicalString(buf[:0], s)
		}
	})
	b.Run("whole", func(b *testing.B) {
		b.SetBytes(int64(len(s)))
		for b.Loop() {
			t, _ := canonicalText(s)
			buf = appendString(buf[:0], t)
		}
	})
}
