package results

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable returns s safe to print on a terminal: every control
// character (C0, DEL and C1, among them the ESC that starts a terminal
// control sequence), every bidirectional control (which reorders what
// follows), the line and paragraph separators and every byte that is not
// UTF-8 are shown as Go escapes (\x1b, \u202e, \xff), and the rest is
// left as it is. Every string from a bundle, a cache or a provider that
// finrepro prints outside a table goes through it; tables replace such
// characters by spaces.
func Printable(s string) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unsafeRune(r, n) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafeRune(r, n) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r, n):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func unsafeRune(r rune, n int) bool {
	return r == utf8.RuneError && n <= 1 || Unprintable(r)
}

// Unprintable reports whether r would act on a terminal or a text view
// rather than show: a control character, a line or paragraph separator,
// or a bidirectional control.
func Unprintable(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r)
}
