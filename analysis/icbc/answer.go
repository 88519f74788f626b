package icbc

import (
	"encoding/json"
	"errors"
	"strings"
)

// An Answer is a ground truth: a string, or a list of choices (the
// authors write some multiple-choice answers as ["A", "C", "D"]).
type Answer []string

// UnmarshalJSON accepts a string or an array of strings.
func (a *Answer) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*a = Answer{s}
		return nil
	}
	var l []string
	if err := json.Unmarshal(b, &l); err != nil {
		return errors.New("want a string or an array of strings")
	}
	*a = l
	return nil
}

// MarshalJSON writes a single answer as a string.
func (a Answer) MarshalJSON() ([]byte, error) {
	if len(a) == 1 {
		return json.Marshal(a[0])
	}
	return json.Marshal([]string(a))
}

// String is the answer as the judge prompt shows it: a list joined with
// ", ".
func (a Answer) String() string { return strings.Join(a, ", ") }

// Format fills a Python str.format template as the authors' prompts are
// written: {name} is replaced by vars[name], {{ and }} become { and }.
// Unknown names are left as they are.
func Format(tmpl string, vars map[string]string) string {
	return parseTemplate(tmpl, func(name string) bool { _, ok := vars[name]; return ok }).fill(vars)
}

// A template is a str.format template split at its known fields:
// text[0] field[0] text[1] ... field[n-1] text[n].
type template struct {
	text  []string
	field []string
}

// parseTemplate splits tmpl at the fields named by known, undoing {{ and
// }} in the text between them.
func parseTemplate(tmpl string, known func(string) bool) template {
	var t template
	var b strings.Builder
	for i := 0; i < len(tmpl); i++ {
		c := tmpl[i]
		switch {
		case c == '{' && i+1 < len(tmpl) && tmpl[i+1] == '{':
			b.WriteByte('{')
			i++
		case c == '}' && i+1 < len(tmpl) && tmpl[i+1] == '}':
			b.WriteByte('}')
			i++
		case c == '{':
			end := strings.IndexByte(tmpl[i:], '}')
			if end > 0 {
				if name := tmpl[i+1 : i+end]; known(name) {
					t.text = append(t.text, b.String())
					t.field = append(t.field, name)
					b.Reset()
					i += end
					continue
				}
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	t.text = append(t.text, b.String())
	return t
}

// fill writes the template with its fields replaced by vars.
func (t template) fill(vars map[string]string) string {
	var b strings.Builder
	for i, f := range t.field {
		b.WriteString(t.text[i])
		b.WriteString(vars[f])
	}
	b.WriteString(t.text[len(t.field)])
	return b.String()
}
