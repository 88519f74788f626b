package site

import (
	"html/template"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// TestEscapeText checks that escapeText writes the bytes html/template
// writes for a string in HTML text.
func TestEscapeText(t *testing.T) {
	tmpl := template.Must(template.New("").Parse(`<pre>{{.}}</pre>`))
	for _, s := range []string{
		"", "plain text", `<script>alert("x")</script>`, "a+b & 'c' > d\x00e",
		"invalid \xff\xfe UTF-8 <", "净息差同比收窄 +12bp", "=HYPERLINK(\"http://x\")", "\ufdd0\uffff",
	} {
		var want strings.Builder
		if err := tmpl.Execute(&want, s); err != nil {
			t.Fatal(err)
		}
		if got := "<pre>" + string(escapeText(s)) + "</pre>"; got != want.String() {
			t.Errorf("escapeText(%q) = %q, want %q", s, got, want.String())
		}
	}
}

// TestEscapeHref checks that escapeHref writes the bytes html/template
// writes for a string as an href value.
func TestEscapeHref(t *testing.T) {
	tmpl := template.Must(template.New("").Parse(`<a href="{{.}}">`))
	for _, s := range []string{
		"", "systems/gpt-4-1.html", "../../tasks/icbcbench/q-0001.html", "#e12",
		"a b.html", "javascript:alert(1)", `x"y'z<>&+.html`, "净息差.html", "%zz?q=1&r=2", "\x00",
	} {
		var want strings.Builder
		if err := tmpl.Execute(&want, s); err != nil {
			t.Fatal(err)
		}
		if got := `<a href="` + escapeHref(s) + `">`; got != want.String() {
			t.Errorf("escapeHref(%q) = %q, want %q", s, got, want.String())
		}
	}
}

// FuzzEscape checks the text escaper against html/template itself, and
// that what it writes parses back, in a real HTML parser, to the text it
// was given (NUL read as U+FFFD and CR as LF, as HTML reads them); and
// that appendEscapedCut writes the longest rune-aligned prefix whose
// escaped form fits.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "plain", "a<b&c", "<\x80\x80", "净息差<同比", "\x00'+\"", "a\xffb<c", "it's \"x\" + y & z", "a\r\nb\rc"} {
		f.Add(s, 3)
	}
	tmpl := template.Must(template.New("").Parse(`{{.}}`))
	f.Fuzz(func(t *testing.T, text string, n int) {
		var want strings.Builder
		if err := tmpl.Execute(&want, text); err != nil {
			t.Fatal(err)
		}
		esc := string(escapeText(text))
		if esc != want.String() {
			t.Fatalf("escapeText(%q) = %q, html/template %q", text, esc, want.String())
		}
		if got := string(appendEscaped([]byte("x"), text)); got != "x"+esc {
			t.Fatalf("appendEscaped(%q) = %q, want %q", text, got, "x"+esc)
		}
		if utf8.ValidString(text) {
			doc, err := html.Parse(strings.NewReader("<body><div>" + esc + "</div>"))
			if err != nil {
				t.Fatal(err)
			}
			div := doc.FirstChild.LastChild.FirstChild // html, body, div
			var got strings.Builder
			for c := div.FirstChild; c != nil; c = c.NextSibling {
				if c.Type != html.TextNode {
					t.Fatalf("escapeText(%q) = %q parses to a %v node", text, esc, c.Type)
				}
				got.WriteString(c.Data)
			}
			read := strings.NewReplacer("\x00", "\uFFFD", "\r\n", "\n", "\r", "\n").Replace(text)
			if got.String() != read {
				t.Fatalf("escapeText(%q) = %q parses back to %q", text, esc, got.String())
			}
		}
		if len(text) > 512 {
			return
		}
		n = max(n, 0) % (len(text)*5 + 8)
		got, cut := appendEscapedCut(nil, text, n)
		i := 0 // the prefix got escapes
		for i <= len(text) && string(escapeText(text[:i])) != string(got) {
			i++
		}
		next := i + 1 // the end of the rune after it
		for next < len(text) && !utf8.RuneStart(text[next]) {
			next++
		}
		switch {
		case i > len(text):
			t.Fatalf("appendEscapedCut(%q, %d) = %q: not the escape of a prefix", text, n, got)
		case cut != (i < len(text)) || !cut && len(got) > n && len(text) > n/maxEscape:
			t.Fatalf("appendEscapedCut(%q, %d) = %q, cut %v", text, n, got, cut)
		case cut && (len(got) > n || i > 0 && !utf8.RuneStart(text[i]) || len(escapeText(text[:min(next, len(text))])) <= n):
			t.Fatalf("appendEscapedCut(%q, %d) = %q: not the longest rune-aligned prefix that fits", text, n, got)
		}
	})
}
