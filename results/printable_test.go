package results

import (
	"testing"
	"unicode/utf8"
)

func TestPrintable(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text, 净息差", "plain text, 净息差"},
		{"computed \x1b]0;title\x07", `computed \x1b]0;title\x07`},
		{"a\tb\nc\r", `a\x09b\x0ac\x0d`},
		{"\x7f\u0085", `\x7f\x85`},
		{"abc\u202edef", `abc\u202edef`},
		{"line\u2028sep", `line\u2028sep`},
		{"bad \xff\xfe utf-8", `bad \xff\xfe utf-8`},
		{"", ""},
	} {
		if got := Printable(tc.in); got != tc.want {
			t.Errorf("Printable(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzPrintable checks that the output has no control character, is
// valid UTF-8, and that printable input is left alone.
func FuzzPrintable(f *testing.F) {
	f.Add("computed \x1b]0;title\x07")
	f.Add("净息差 \u202e \xff")
	f.Fuzz(func(t *testing.T, s string) {
		got := Printable(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Printable(%q) = %q is not UTF-8", s, got)
		}
		clean := utf8.ValidString(s)
		for _, r := range s {
			clean = clean && !unsafeRune(r, utf8.RuneLen(r))
		}
		for _, r := range got {
			if unsafeRune(r, utf8.RuneLen(r)) {
				t.Fatalf("Printable(%q) = %q keeps %U", s, got, r)
			}
		}
		if clean && got != s {
			t.Fatalf("Printable(%q) = %q changed printable text", s, got)
		}
	})
}
