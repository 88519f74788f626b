package site

import (
	"html/template"
	"strings"
	"testing"
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
