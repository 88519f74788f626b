package results

import (
	"errors"
	"strings"
	"testing"
)

func TestReadCSV(t *testing.T) {
	tests := []struct {
		name, in string
		rows     int
		comments int
		err      string
	}{
		{"plain", "a,b\n1,2\n3,4\n", 2, 0, ""},
		{"comments", "# one\n# two\na,b\n1,2\n", 1, 2, ""},
		{"ragged", "# c\na,b\n1,2\n3\n", 0, 0, "t.csv:4: column 1: wrong number of fields"},
		{"bad quote first", "\"00", 0, 0, "t.csv:1: column 4: extraneous or missing \" in quoted-field"},
		{"empty", "# only\n", 0, 0, "t.csv: no header line"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tab, err := ReadCSV(strings.NewReader(tc.in), "t.csv")
			if tc.err != "" {
				var ie *InputError
				if err == nil || !errors.As(err, &ie) || err.Error() != tc.err {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(tab.Rows) != tc.rows || len(tab.Comments) != tc.comments {
				t.Fatalf("%d rows %d comments, want %d and %d", len(tab.Rows), len(tab.Comments), tc.rows, tc.comments)
			}
		})
	}
}

func FuzzReadCSV(f *testing.F) {
	for _, s := range []string{"a,b\n1,2\n", "# c\n\"x\"\"y\",z\n", "\"00", "a\n\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tab, err := ReadCSV(strings.NewReader(s), "f.csv")
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v is not an *InputError", err)
			}
			return
		}
		for _, r := range tab.Rows {
			if len(r) != len(tab.Header) {
				t.Fatalf("row of %d fields, header of %d", len(r), len(tab.Header))
			}
		}
	})
}

type rec struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

func TestReadJSONL(t *testing.T) {
	tests := []struct {
		name, in string
		n        int
		err      string
	}{
		{"ok", "{\"id\":\"1\",\"text\":\"a\"}\n\n{\"id\":\"2\"}\n", 2, ""},
		{"unknown", "{\"id\":\"1\"}\n{\"idd\":\"2\"}\n", 0, "t.jsonl:2: idd: unknown field"},
		{"type", "{\"id\":1}\n", 0, "t.jsonl:1: id: got JSON number, want string"},
		{"syntax", "{\"id\":\n", 0, "t.jsonl:1: unexpected EOF"},
		{"trailing", "{\"id\":\"1\"} x\n", 0, "t.jsonl:1: trailing data after JSON value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadJSONL[rec](strings.NewReader(tc.in), "t.jsonl")
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || len(got) != tc.n {
				t.Fatalf("got %d, %v; want %d", len(got), err, tc.n)
			}
		})
	}
}

func FuzzReadJSONL(f *testing.F) {
	for _, s := range []string{"{\"id\":\"1\"}\n", "{}\n{\"text\":\"\\u00e9\"}", "[1]", "{\"id\":"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, err := ReadJSONL[rec](strings.NewReader(s), "f.jsonl")
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v is not an *InputError", err)
			}
		}
	})
}
