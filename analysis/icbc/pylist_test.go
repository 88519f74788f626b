package icbc

import "testing"

// TestPyList checks pyList against Python 3's str of the same lists
// (printed by python3 -c 'print(str(l))' for each list below).
func TestPyList(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{[]string{"A", "C"}, `['A', 'C']`},
		{[]string{"it's", "b"}, `["it's", 'b']`},
		{[]string{`a\b`, "x"}, `['a\\b', 'x']`},
		{[]string{`"q'`, "y"}, `['"q\'', 'y']`},
		{[]string{"line\nbreak", "z"}, `['line\nbreak', 'z']`},
		{[]string{"甲", "乙"}, `['甲', '乙']`},
		{[]string{"tab\there", "\x01"}, `['tab\there', '\x01']`},
	} {
		if got := pyList(c.in); got != c.want {
			t.Errorf("pyList(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}
