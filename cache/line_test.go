package cache

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/finrepro/finrepro/cache/reqkey"
)

// TestParseLineStrings checks what the line parser takes in strings: a
// response or meta may hold a lone surrogate escape (encoding/json reads
// one as U+FFFD, and providers' bodies are stored as they came), a
// request may not (the key rule refuses it), and raw invalid UTF-8 is
// refused everywhere.
func TestParseLineStrings(t *testing.T) {
	const req = `{"provider":"p","endpoint":"e","body":{}}`
	tests := []struct {
		name, line, field string // field of the error; "" for none
	}{
		{"lone surrogate in response", `{"request":` + req + `,"response":{"text":"\ud800"}}`, ""},
		{"lone surrogate in meta", `{"request":` + req + `,"response":1,"meta":{"provider":"p","model":"\udc00","source":"api"}}`, ""},
		{"lone surrogate in request", `{"request":{"provider":"p","endpoint":"e","body":{"a":"\ud800"}},"response":1}`, "request.body.a"},
		{"invalid UTF-8 in response", "{\"request\":" + req + ",\"response\":\"\xff\"}", "response"},
		{"invalid UTF-8 in request", "{\"request\":{\"provider\":\"p\",\"endpoint\":\"\xff\",\"body\":{}},\"response\":1}", "request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x, err := ParseLine([]byte(tc.line))
			var le *LineError
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("ParseLine: %v", err)
			case tc.field == "":
				if _, err := reqkey.Of(x.Request); err != nil {
					t.Fatalf("accepted a request without a key: %v", err)
				}
			case !errors.As(err, &le) || le.Field != tc.field:
				t.Fatalf("ParseLine error %v, want a *LineError at %s", err, tc.field)
			}
		})
	}
}

func TestLoadEndpointRule(t *testing.T) {
	for _, e := range []string{"chat/completions", "/v1/chat/completions", "x?key=1", "models/m:generateContent", `a\\b`} {
		line := `{"request":{"provider":"p","endpoint":"` + e + `","body":{}},"response":{}}`
		_, err := ParseLine([]byte(line))
		plain := strings.ReplaceAll(e, `\\`, `\`)
		if want := reqkey.CheckEndpoint(plain); (err == nil) != (want == nil) {
			t.Errorf("%q: load says %v, the rule says %v", e, err, want)
		} else if err != nil && !strings.Contains(err.Error(), "request.endpoint") {
			t.Errorf("%q: error %v does not name request.endpoint", e, err)
		}
	}
}

// TestSkipValue checks the scanner's reading of JSON values on hand-made
// inputs: end is where the value ends (-1: not valid JSON at the start),
// counted by hand.
func TestSkipValue(t *testing.T) {
	tests := []struct {
		in  string
		end int
	}{
		{`0`, 1},
		{`-0.5e+10,`, 8},
		{`12}`, 2},
		{`01`, 1}, // the value is 0; what follows is the caller's
		{`-`, -1},
		{`1.`, -1},
		{`1e`, -1},
		{`.5`, -1},
		{`+1`, -1},
		{`true `, 4},
		{`tru`, -1},
		{`nul`, -1},
		{`null`, 4},
		{`"a\"b"x`, 6},
		{`"\u00e9\/"`, 10},
		{`"\ud800"`, 8}, // a lone surrogate escape, as the lenient decoder takes it
		{`"\u00g0"`, -1},
		{`"\x"`, -1},
		{"\"a\tb\"", -1}, // a raw control character
		{`"abcdefghijklmnop\`, -1},
		{`"abcdefghijklmnopq"`, 19}, // longer than a word: the 8-byte scan
		{`"abcdefg\"hijklmnopq"`, 21},
		{`{}`, 2},
		{`{ "a" : [ 1 , {"b":null} ] }`, 28},
		{`{"a":1,}`, -1},
		{`[1,]`, -1},
		{`[1 2]`, -1},
		{`{"a" 1}`, -1},
		{`{1:2}`, -1},
		{`[`, -1},
		{strings.Repeat("[", scanMaxDepth-1) + strings.Repeat("]", scanMaxDepth-1), 2 * (scanMaxDepth - 1)},
		{strings.Repeat("[", scanMaxDepth) + strings.Repeat("]", scanMaxDepth), -1}, // deeper than the scanner follows
	}
	for _, tc := range tests {
		end, ok := skipValue([]byte(tc.in), 0, 1)
		if !ok {
			end = -1
		}
		if end != tc.end {
			t.Errorf("skipValue(%.40q) = %d, want %d", tc.in, end, tc.end)
		}
	}
}

// TestParseLineFastDefers lists lines the scanner leaves to the token
// decoder (which then gives them the same meaning or names their fault),
// and lines it takes.
func TestParseLineFastDefers(t *testing.T) {
	const req = `{"provider":"p","endpoint":"e","body":{}}`
	tests := []struct {
		line string
		ok   bool
	}{
		{`{"request":` + req + `,"response":1}`, true},
		{" \t{ \"meta\" : null , \"response\" : [1] , \"request\" : " + req + " }\r\n", true},
		{`{"\u0072equest":` + req + `,"response":1}`, false}, // a name with an escape
		{`{"request":` + req + `,"response":1,"response":1}`, false},
		{`{"request":` + req + `,"response":1,"x":1}`, false},
		{`{"request":` + req + `}`, false},
		{`{"response":1}`, false},
		{`{"request":` + req + `,"response":1} x`, false},
		{`{"request":` + req + `,"response":1`, false},
		{`{"request":{"provider":"p","body":{}},"response":1}`, false},
		{`{"request":` + req + `,"response":1,"meta":{"source":"nope"}}`, false},
		{"{\"request\":" + req + ",\"response\":\"\xff\"}", false},
	}
	for _, tc := range tests {
		if _, _, ok := parseLineFast([]byte(tc.line)); ok != tc.ok {
			t.Errorf("parseLineFast(%q) took it: %v, want %v", tc.line, ok, tc.ok)
		}
	}
}

// FuzzParseLineFast checks the scanner against two independent readers:
// every line it takes, the token decoder takes with the same request,
// response, meta and canonical form; and on valid UTF-8 its reading of
// a value agrees with encoding/json's json.Valid.
func FuzzParseLineFast(f *testing.F) {
	f.Add([]byte(`{"request":{"provider":"p","endpoint":"e","body":{"model":"m","messages":[{"role":"user","content":"Write a note.\\n\u00e9"}]}},"response":{"id":"r","choices":[{"text":"ok"}]},"meta":{"source":"api","cost_usd":0.5}}`))
	f.Add([]byte(`{"request":{"provider":"p","endpoint":"e","body":{"a":[1,-2.5e3,true,null]}},"response":{"t":"\ud800"},"meta":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if x, canon, ok := parseLineFast(b); ok {
			y, c, err := parseLineTokens(b)
			if err != nil {
				t.Fatalf("the scanner took %q, the decoder refuses it: %v", b, err)
			}
			if !bytes.Equal(x.Request, y.Request) || !bytes.Equal(x.Response, y.Response) || !reflect.DeepEqual(x.Meta, y.Meta) || !bytes.Equal(canon, c) {
				t.Fatalf("the scanner and the decoder read %q differently: %+v, %+v", b, x, y)
			}
		}
		if !utf8.Valid(b) || bytes.Count(b, []byte("["))+bytes.Count(b, []byte("{")) >= scanMaxDepth {
			return
		}
		v := bytes.TrimLeft(b, " \t\r\n")
		end, ok := skipValue(v, 0, 1)
		whole := ok && len(bytes.TrimLeft(v[end:], " \t\r\n")) == 0
		if whole != json.Valid(b) {
			t.Fatalf("skipValue reads %q as one value: %v, json.Valid: %v", b, whole, !whole)
		}
	})
}
