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

// refAppendEscaped and refAppendEscapedCut are the byte-at-a-time
// escapers indexEscapable replaced.
func refAppendEscaped(b []byte, text string) []byte {
	last := 0
	for i := 0; i < len(text); i++ {
		if r := htmlEscapes[text[i]]; r != "" {
			b = append(b, text[last:i]...)
			b = append(b, r...)
			last = i + 1
		}
	}
	return append(b, text[last:]...)
}

func refAppendEscapedCut(b []byte, text string, n int) ([]byte, bool) {
	start, size, last := len(b), 0, 0
	for i := 0; i < len(text); i++ {
		r := htmlEscapes[text[i]]
		if r == "" {
			size++
		} else {
			size += len(r)
		}
		if size > n {
			for i > 0 && !utf8.RuneStart(text[i]) {
				i--
			}
			if i < last {
				return refAppendEscaped(b[:start], text[:i]), true
			}
			return append(b, text[last:i]...), true
		}
		if r != "" {
			b = append(b, text[last:i]...)
			b = append(b, r...)
			last = i + 1
		}
	}
	return append(b, text[last:]...), false
}

// checkEscape compares the escapers with the references on one input.
func checkEscape(t *testing.T, text string, n int) {
	t.Helper()
	want := refEscapeText(text)
	if got := escapeText(text); got != want {
		t.Errorf("escapeText(%q) = %q, want %q", text, got, want)
	}
	if got := appendEscaped([]byte("x"), text); string(got) != "x"+string(want) {
		t.Errorf("appendEscaped(%q) = %q, want %q", text, got, "x"+want)
	}
	if got := refAppendEscaped([]byte("x"), text); string(got) != "x"+string(want) {
		t.Errorf("refAppendEscaped(%q) = %q, want %q", text, got, "x"+want)
	}
	cut, wantCut := refCutBytes(text, n)
	got, gotCut := appendEscapedCut([]byte("x"), text, n)
	if want := "x" + string(refEscapeText(cut)); string(got) != want || gotCut != wantCut {
		t.Errorf("appendEscapedCut(%q, %d) = %q, %v; want %q, %v", text, n, got, gotCut, want, wantCut)
	}
	ref, refCut := refAppendEscapedCut([]byte("x"), text, n)
	if string(got) != string(ref) || gotCut != refCut {
		t.Errorf("appendEscapedCut(%q, %d) = %q, %v; refAppendEscapedCut gives %q, %v", text, n, got, gotCut, ref, refCut)
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

// TestAppendEscapedRuns checks the escapers against the references on
// texts long enough to cross indexEscapable's eight-byte steps, with every
// cut.
func TestAppendEscapedRuns(t *testing.T) {
	pieces := []string{"a", "bc", " ", "<", "&", "\"", "'", "+", ">", "\x00", "净", "\x80", "\xe5\x87", "defghijk"}
	seed := uint32(1)
	for range 300 {
		var b []byte
		for range int(seed % 24) {
			seed = seed*1664525 + 1013904223
			b = append(b, pieces[seed>>16%uint32(len(pieces))]...)
		}
		seed = seed*1664525 + 1013904223
		text := string(b)
		for n := 0; n <= len(text)*5+1; n++ {
			checkEscape(t, text, n)
		}
	}
}
