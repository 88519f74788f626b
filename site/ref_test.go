package site

import (
	"html/template"
	"testing"
	"unicode/utf8"
)

// The implementations appendEscaped and appendEscapedCut replaced, kept as
// the reference they are checked against.

// refCutBytes cuts text where its HTML-escaped form would pass n bytes,
// on a rune boundary, and reports whether it did.
func refCutBytes(text string, n int) (string, bool) {
	size := 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '<', '>':
			size += 4 // &lt;
		case '&':
			size += 5 // &amp;
		case '"', '\'', '+':
			size += 5 // &#34;
		case 0:
			size += 3 // U+FFFD
		default:
			size++
		}
		if size > n {
			for i > 0 && !utf8.RuneStart(text[i]) {
				i--
			}
			return text[:i], true
		}
	}
	return text, false
}

// refEscapeText escapes text as html/template escapes a string printed in
// HTML text.
func refEscapeText(text string) template.HTML {
	var b []byte
	last := 0
	for i := 0; i < len(text); i++ {
		var r string
		switch text[i] {
		case 0:
			r = "\uFFFD"
		case '"':
			r = "&#34;"
		case '&':
			r = "&amp;"
		case '\'':
			r = "&#39;"
		case '+':
			r = "&#43;"
		case '<':
			r = "&lt;"
		case '>':
			r = "&gt;"
		default:
			continue
		}
		if b == nil {
			b = make([]byte, 0, len(text)+len(text)/8+16)
		}
		b = append(b, text[last:i]...)
		b = append(b, r...)
		last = i + 1
	}
	if b == nil {
		return template.HTML(text)
	}
	return template.HTML(append(b, text[last:]...))
}

// checkEscape compares the escapers with the reference on one input.
func checkEscape(t *testing.T, text string, n int) {
	t.Helper()
	want := refEscapeText(text)
	if got := escapeText(text); got != want {
		t.Errorf("escapeText(%q) = %q, want %q", text, got, want)
	}
	if got := appendEscaped([]byte("x"), text); string(got) != "x"+string(want) {
		t.Errorf("appendEscaped(%q) = %q, want %q", text, got, "x"+want)
	}
	cut, wantCut := refCutBytes(text, n)
	got, gotCut := appendEscapedCut([]byte("x"), text, n)
	if want := "x" + string(refEscapeText(cut)); string(got) != want || gotCut != wantCut {
		t.Errorf("appendEscapedCut(%q, %d) = %q, %v; want %q, %v", text, n, got, gotCut, want, wantCut)
	}
}

func TestAppendEscapedCut(t *testing.T) {
	for _, c := range []struct {
		text string
		n    int
	}{
		{"", 0}, {"plain", 0}, {"plain", 5}, {"plain", 4}, {"a<b", 4}, {"a<b", 5}, {"a<b", 6},
		{"<\x80\x80", 5}, {"<\x80\x80", 4}, {"<\x80\x80", 3}, {"净息差<同比", 4}, {"净息差<同比", 10},
		{"\x00\x00\x00", 7}, {"it's \"x\" + y & z", 12}, {"a\xffb<c", 3},
	} {
		checkEscape(t, c.text, c.n)
	}
}

func FuzzAppendEscapedCut(f *testing.F) {
	for _, s := range []string{"", "plain", "a<b&c", "<\x80\x80", "净息差<同比", "\x00'+\"", "a\xffb<c"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, text string, n int) {
		checkEscape(t, text, max(n, 0)%(len(text)*5+8))
	})
}
