package reqkey

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/cache/internal/synth"
	"golang.org/x/text/unicode/norm"
)

func TestCanonical(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"sorted, compact, sample added",
			`{ "provider":"openai", "endpoint":"/v1/chat", "body": {"model":"m","temperature":0} }`,
			`{"body":{"model":"m","temperature":0},"endpoint":"/v1/chat","provider":"openai","sample":0}`},
		{"numbers", `{"provider":"p","endpoint":"e","body":{"a":1.0,"b":10e-1,"c":-0,"d":1.50,"e":1e21,"f":0.0000001,"g":123456789012345678901,"h":0.000001,"i":-2.5E+3,"j":1E400}}`,
			`{"body":{"a":1,"b":1,"c":0,"d":1.5,"e":1e+21,"f":1e-7,"g":123456789012345678901,"h":0.000001,"i":-2500,"j":1e+400},"endpoint":"e","provider":"p","sample":0}`},
		{"NFC and escapes", `{"provider":"p","endpoint":"e","body":{"caf\u0065\u0301":"\u00e9\n\u0001\"\\\/<>"}}`,
			`{"body":{"café":"é\n\u0001\"\\/<>"},"endpoint":"e","provider":"p","sample":0}`},
		{"sample kept", `{"provider":"p","endpoint":"e","body":{},"sample":2.0}`,
			`{"body":{},"endpoint":"e","provider":"p","sample":2}`},
		{"surrogate pair", `{"provider":"p","endpoint":"e","body":{"x":"\ud83d\ude00"}}`,
			`{"body":{"x":"😀"},"endpoint":"e","provider":"p","sample":0}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Canonical([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if want := Schema + "\n" + tt.want; string(got) != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
			// The canonical form is a fixed point.
			again, err := Canonical(got[len(Schema)+1:])
			if err != nil || string(again) != string(got) {
				t.Errorf("not a fixed point: %s (%v)", again, err)
			}
		})
	}
}

func TestCanonicalErrors(t *testing.T) {
	tests := []struct{ name, in, field string }{
		{"not object", `[1]`, ""},
		{"unknown field", `{"provider":"p","endpoint":"e","body":{},"api_key":"x"}`, "api_key"},
		{"missing provider", `{"endpoint":"e","body":{}}`, "provider"},
		{"empty provider", `{"provider":"","endpoint":"e","body":{}}`, "provider"},
		{"body not object", `{"provider":"p","endpoint":"e","body":[]}`, "body"},
		{"negative sample", `{"provider":"p","endpoint":"e","body":{},"sample":-1}`, "sample"},
		{"fractional sample", `{"provider":"p","endpoint":"e","body":{},"sample":1.5}`, "sample"},
		{"duplicate key", `{"provider":"p","endpoint":"e","body":{"a":1,"a":2}}`, "body.a"},
		{"duplicate after NFC", `{"provider":"p","endpoint":"e","body":{"é":1,"e\u0301":2}}`, "body.é"},
		{"bad UTF-8", "{\"provider\":\"p\",\"endpoint\":\"e\",\"body\":{\"a\":\"\xff\"}}", "body.a"},
		{"lone surrogate", `{"provider":"p","endpoint":"e","body":{"a":"\ud800"}}`, "body.a"},
		{"leading zero", `{"provider":"p","endpoint":"e","body":{"a":01}}`, "body"},
		{"trailing data", `{"provider":"p","endpoint":"e","body":{}} x`, ""},
		{"huge exponent", `{"provider":"p","endpoint":"e","body":{"a":1e9999999}}`, "body.a"},
		{"deep", `{"provider":"p","endpoint":"e","body":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Canonical([]byte(tt.in))
			var re *RequestError
			if !errors.As(err, &re) {
				t.Fatalf("got %v, want a *RequestError", err)
			}
			if tt.field != "" && re.Field != tt.field {
				t.Errorf("field %q, want %q (%v)", re.Field, tt.field, err)
			}
		})
	}
}

// randValue returns a random JSON value (as Go data) of bounded depth.
func randValue(r *rand.Rand, depth int) any {
	switch k := r.IntN(7); {
	case depth > 3 || k == 0:
		return []string{"a", "é", "中文", "x\ny", `q"uote`}[r.IntN(5)]
	case k == 1:
		return r.IntN(1000) - 500
	case k == 2:
		return r.Float64() * 100
	case k == 3:
		return r.IntN(2) == 0
	case k == 4:
		var a []any
		for range r.IntN(4) {
			a = append(a, randValue(r, depth+1))
		}
		return a
	default:
		m := map[string]any{}
		for i := range r.IntN(5) {
			m[fmt.Sprintf("k%d", i)] = randValue(r, depth+1)
		}
		return m
	}
}

// reencode writes v as JSON with shuffled keys, random whitespace and
// random (equivalent) spellings of numbers and strings.
func reencode(r *rand.Rand, v any) string {
	ws := func() string { return []string{"", " ", "\n\t", "  "}[r.IntN(4)] }
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys) // map order must not change the test
		r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		var parts []string
		for _, k := range keys {
			parts = append(parts, ws()+reencode(r, k)+ws()+":"+ws()+reencode(r, v[k])+ws())
		}
		return "{" + strings.Join(parts, ",") + "}"
	case []any:
		var parts []string
		for _, e := range v {
			parts = append(parts, ws()+reencode(r, e)+ws())
		}
		return "[" + strings.Join(parts, ",") + "]"
	case string:
		if v == "é" && r.IntN(2) == 0 {
			return `"e\u0301"` // the NFD spelling
		}
		if r.IntN(2) == 0 {
			var b strings.Builder
			b.WriteByte('"')
			for _, c := range v {
				fmt.Fprintf(&b, `\u%04x`, c)
			}
			b.WriteByte('"')
			if !strings.ContainsRune(v, '中') { // BMP only: \u escapes are exact
				return b.String()
			}
		}
		b, _ := json.Marshal(v)
		return string(b)
	case int:
		return []string{fmt.Sprint(v), fmt.Sprintf("%d.0", v), fmt.Sprintf("%de0", v), fmt.Sprintf("%d.000E+0", v)}[r.IntN(4)]
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// TestKeyProperties checks, over random requests, that reordering fields,
// whitespace and equivalent spellings keep the key, and that changing any
// body value or the sample changes it.
func TestKeyProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		body := map[string]any{"model": "m", "x": randValue(r, 0), "y": randValue(r, 0)}
		req := map[string]any{"provider": "p", "endpoint": "/e", "body": body, "sample": r.IntN(3)}
		enc := reencode(r, req)
		k1, err := Of([]byte(enc))
		if err != nil {
			t.Fatalf("%d: %v in %q", i, err, enc)
		}
		enc = reencode(r, req)
		k2, err := Of([]byte(enc))
		if err != nil {
			t.Fatalf("%d: %v in %q", i, err, enc)
		}
		if k1 != k2 {
			t.Fatalf("%d: same request, different keys", i)
		}
		// Change one thing.
		mut := map[string]any{"provider": "p", "endpoint": "/e", "body": body, "sample": req["sample"]}
		switch r.IntN(3) {
		case 0:
			mut["sample"] = req["sample"].(int) + 1
		case 1:
			b2 := map[string]any{}
			for k, v := range body {
				b2[k] = v
			}
			b2["model"] = "m2"
			mut["body"] = b2
		case 2:
			b2 := map[string]any{}
			for k, v := range body {
				b2[k] = v
			}
			b2["x"] = []any{body["x"]}
			mut["body"] = b2
		}
		enc = reencode(r, mut)
		k3, err := Of([]byte(enc))
		if err != nil {
			t.Fatalf("%d: %v in %q", i, err, enc)
		}
		if k3 == k1 {
			t.Fatalf("%d: changed request, same key", i)
		}
	}
}

func TestParseKey(t *testing.T) {
	k, err := Of([]byte(`{"provider":"p","endpoint":"e","body":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	k2, err := Parse(k.String())
	if err != nil || k2 != k {
		t.Fatalf("round trip: %v %v", k2, err)
	}
	for _, bad := range []string{"", "abc", strings.ToUpper(k.String()), k.String() + "0", "zz" + k.String()[2:]} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
}

func FuzzCanonical(f *testing.F) {
	f.Add([]byte(`{"provider":"p","endpoint":"e","body":{"a":[1,2.50,"x"]},"sample":1}`))
	f.Add([]byte(`{"provider":"p","endpoint":"e","body":{"é":"\u00e9\ud83d\ude00"}}`))
	f.Add([]byte(`{"body":{"n":-0.0e+00},"provider":"x","endpoint":""}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		in := bytes.Clone(b)
		c, err := Canonical(in)
		if !bytes.Equal(in, b) {
			t.Fatalf("Canonical changed its input %q to %q", b, in)
		}
		if err != nil {
			return
		}
		js := c[len(Schema)+1:]
		if !json.Valid(js) {
			t.Fatalf("canonical form is not JSON: %q", js)
		}
		again, err := Canonical(js)
		if err != nil || string(again) != string(c) {
			t.Fatalf("not a fixed point: %q -> %q (%v)", c, again, err)
		}
	})
}

// FuzzCanonicalValues checks the key rule's value forms by properties:
// every number it accepts keeps its exact value (big.Rat of the input
// equals big.Rat of the output), and every string decodes to the NFC of
// what the input decodes to.
func FuzzCanonicalValues(f *testing.F) {
	for _, n := range []string{"0", "-0", "1.0", "10e-1", "0.1E1", "1.50", "1e21", "0.0000001", "123456789012345678901",
		"0.000001", "-2.5E+3", "1E400", "1e-400", "0.000123000e+3", "120e-1", "01", "1.", "-", "1e999999"} {
		f.Add(n, "caf\\u0065\\u0301 \\ud83d\\ude00 \\\" \\/ \\u001f")
	}
	f.Fuzz(func(t *testing.T, num, str string) {
		c, err := Canonical([]byte(`{"provider":"p","endpoint":"e","body":{"n":` + num + `}}`))
		if err == nil {
			js, _ := JSON(c)
			var v struct {
				Body struct {
					N json.RawMessage `json:"n"`
				} `json:"body"`
			}
			if err := json.Unmarshal(js, &v); err != nil {
				t.Fatalf("canonical form of %q is not JSON: %v", num, err)
			}
			if _, e, _ := strings.Cut(strings.ToLower(num), "e"); len(strings.TrimLeft(e, "+-0")) > 4 ||
				strings.IndexAny(string(v.Body.N[:1]), "-0123456789") < 0 {
				return // not a number, or a huge exponent that big.Rat would take long over
			}
			in, ok1 := new(big.Rat).SetString(strings.TrimSpace(num))
			out, ok2 := new(big.Rat).SetString(string(v.Body.N))
			if !ok1 || !ok2 || in.Cmp(out) != 0 {
				t.Fatalf("number %q became %s", num, v.Body.N)
			}
		}
		c, err = Canonical([]byte(`{"provider":"p","endpoint":"e","body":{"s":"` + str + `"}}`))
		if err != nil {
			return
		}
		var want string
		if err := json.Unmarshal([]byte(`"`+str+`"`), &want); err != nil {
			t.Fatalf("string %q accepted by Canonical, refused by encoding/json: %v", str, err)
		}
		js, _ := JSON(c)
		var v struct {
			Body struct {
				S string `json:"s"`
			} `json:"body"`
		}
		if err := json.Unmarshal(js, &v); err != nil || v.Body.S != norm.NFC.String(want) {
			t.Fatalf("string %q became %q (%v), want %q", str, v.Body.S, err, norm.NFC.String(want))
		}
	})
}

// TestCanonicalStrings checks string values that the encoder copies as
// read (escapes it writes itself, text in NFC) and those it must rewrite,
// each expected form written out by hand from the key rule: only '"',
// '\\' and control characters escaped, short escapes where JSON has them,
// \u00xx in lower case otherwise, text in NFC.
func TestCanonicalStrings(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", `plain text`, `plain text`},
		{"escapes kept", `a\"b\\c\nd\te\rf\bg\fh`, `a\"b\\c\nd\te\rf\bg\fh`},
		{"solidus unescaped", `a\/b`, `a/b`},
		{"letter escape", `\u00e9t\u00E9`, "été"},
		{"control escape in lower case", `\u001F`, `\u001f`},
		{"short escape from \\u", `\u000a\u0009\u0022\u005c`, `\n\t\"\\`},
		{"mark composed", "e\u0301", "\u00e9"},
		// '\n' does not compose with the mark; the text "\n" escaped
		// would (n + U+0301 is U+0144), which must not change it.
		{"mark after an escape", "\\n\u0301", "\\n\u0301"},
		{"mark after escaped backslash", "\\\\e\u0301", "\\\\\u00e9"},
		{"settled CJK kept", "中文，“引号”…한국", "中文，“引号”…한국"},
		{"CJK with escapes", "中\\n文\\\"", "中\\n文\\\""},
		{"jamo composed", "\u1100\u1161", "\uac00"},
		{"empty", ``, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Canonical([]byte(`{"provider":"p","endpoint":"e","body":{"s":"` + tt.in + `"}}`))
			if err != nil {
				t.Fatal(err)
			}
			want := Schema + "\n" + `{"body":{"s":"` + tt.want + `"},"endpoint":"e","provider":"p","sample":0}`
			if string(got) != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

// FuzzCanonicalStringBytes checks the exact bytes of every string value
// the key rule accepts against the rule written out here: the value as
// encoding/json decodes it, in x/text's NFC, with only '"', '\\' and
// control characters escaped (short escapes where JSON has them,
// \u00xx otherwise).
func FuzzCanonicalStringBytes(f *testing.F) {
	for _, s := range []string{`a\"b\\c\nd`, `\/`, `\u00e9`, `\u001F`, "\\n\u0301", "n\u0301", "\\\\e\u0301", "中\\t文", `\ud83d\ude00`, "\\b\u0308"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, str string) {
		c, err := Canonical([]byte(`{"provider":"p","endpoint":"e","body":{"s":"` + str + `"}}`))
		if err != nil {
			return
		}
		var u string
		if err := json.Unmarshal([]byte(`"`+str+`"`), &u); err != nil {
			t.Fatalf("string %q accepted by Canonical, refused by encoding/json: %v", str, err)
		}
		var w strings.Builder
		for _, r := range norm.NFC.String(u) {
			switch {
			case r == '"' || r == '\\':
				w.WriteString(`\` + string(r))
			case r == '\b':
				w.WriteString(`\b`)
			case r == '\f':
				w.WriteString(`\f`)
			case r == '\n':
				w.WriteString(`\n`)
			case r == '\r':
				w.WriteString(`\r`)
			case r == '\t':
				w.WriteString(`\t`)
			case r < 0x20:
				fmt.Fprintf(&w, `\u%04x`, r)
			default:
				w.WriteRune(r)
			}
		}
		want := Schema + "\n" + `{"body":{"s":"` + w.String() + `"},"endpoint":"e","provider":"p","sample":0}`
		if string(c) != want {
			t.Fatalf("string %q:\ngot  %s\nwant %s", str, c, want)
		}
	})
}

// BenchmarkCanonical keys the requests of synthetic judge traffic (one
// long report a request, its text with escapes, half of it Chinese).
func BenchmarkCanonical(b *testing.B) {
	var reqs [][]byte
	size := 0
	j := synth.NewJudge(1)
	for range 64 {
		var x struct{ Request json.RawMessage }
		if err := json.Unmarshal(j.Next(), &x); err != nil {
			b.Fatal(err)
		}
		reqs, size = append(reqs, x.Request), size+len(x.Request)
	}
	b.SetBytes(int64(size))
	for b.Loop() {
		for _, r := range reqs {
			if _, err := Canonical(r); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestMembers: the members of an object come in the order of their names,
// each with its canonical value and its value as written (white space
// around it gone, inside it kept); what Canonical refuses is refused.
func TestMembers(t *testing.T) {
	type m struct{ name, canonical, raw string }
	for _, c := range []struct {
		in   string
		want []m
		err  bool
	}{
		{`{}`, []m{}, false},
		{" {\"z\" :\t[1.0, {\"b\":1,\"a\":2}] ,\n\"a\":\"x\" } ", []m{{"a", `"x"`, `"x"`}, {"z", `[1,{"a":2,"b":1}]`, `[1.0, {"b":1,"a":2}]`}}, false},
		{`{"e\u0301":1e2}`, []m{{"\u00e9", `100`, `1e2`}}, false},
		{`[1]`, nil, true},
		{`{"a":1,"a":2}`, nil, true},
		{"{\"a\":\"\xff\"}", nil, true},
		{`{"a":1} x`, nil, true},
	} {
		got, err := Members([]byte(c.in))
		if (err != nil) != c.err {
			t.Errorf("Members(%q): %v", c.in, err)
			continue
		}
		if len(got) != len(c.want) {
			t.Errorf("Members(%q) = %d members, want %d", c.in, len(got), len(c.want))
			continue
		}
		for i, w := range c.want {
			if g := got[i]; g.Name != w.name || string(g.Canonical) != w.canonical || string(g.Raw) != w.raw {
				t.Errorf("Members(%q)[%d] = %q %q %q, want %q %q %q", c.in, i, g.Name, g.Canonical, g.Raw, w.name, w.canonical, w.raw)
			}
		}
	}
}
