package proxy

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
)

// TestGrammar checks terminal and error detection on hand-written streams
// of each family.
func TestGrammar(t *testing.T) {
	for _, c := range []struct {
		name   string
		f      family
		frames []string
		done   bool
		err    bool
	}{
		{"chat done", openAI, []string{"data: {\"model\":\"m\",\"choices\":[]}\n\n", "data: [DONE]\n\n"}, true, false},
		{"chat no done", openAI, []string{"data: {\"choices\":[]}\n\n"}, false, false},
		{"chat error chunk", openAI, []string{"data: {\"error\":{\"message\":\"x\"}}\n\n"}, false, true},
		{"chat data after done", openAI, []string{"data: [DONE]\n\n", "data: {}\n\n"}, true, true},
		{"responses completed", openAI, []string{"event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r1\"}}\n\n", "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r1\",\"error\":null}}\n\n"}, true, false},
		{"responses failed", openAI, []string{"event: response.failed\ndata: {\"type\":\"response.failed\"}\n\n"}, false, true},
		{"responses error", openAI, []string{"event: error\ndata: {\"type\":\"error\",\"message\":\"x\"}\n\n"}, false, true},
		{"anthropic stop with ping", anthropic, []string{"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"c\"}}\n\n", "event: ping\ndata: {\"type\": \"ping\"}\n\n", "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"}, true, false},
		{"anthropic no stop", anthropic, []string{"event: message_start\ndata: {\"type\":\"message_start\"}\n\n"}, false, false},
		{"anthropic error", anthropic, []string{"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}\n\n"}, false, true},
		{"gemini finish", gemini, []string{"data: {\"candidates\":[{\"content\":{}}]}\r\n\r\n", "data: {\"candidates\":[{\"finishReason\":\"STOP\"}]}\r\n\r\n"}, true, false},
		{"gemini no finish", gemini, []string{"data: {\"candidates\":[{\"content\":{}}]}\r\n\r\n"}, false, false},
		{"gemini error", gemini, []string{"data: {\"error\":{\"code\":500}}\r\n\r\n"}, false, true},
		{"comment only", openAI, []string{": keep-alive\n\n"}, false, false},
	} {
		g := grammar{family: c.f}
		for _, f := range c.frames {
			g.add([]byte(f))
		}
		if g.done != c.done || (g.err != "") != c.err {
			t.Errorf("%s: done %v err %q, want done %v err %v", c.name, g.done, g.err, c.done, c.err)
		}
	}
}

// TestFrameReader splits streams with LF and CRLF line ends, a leading
// keep-alive blank line and a cut at the end.
func TestFrameReader(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		cut  bool
	}{
		{"data: a\n\ndata: b\n\n", []string{"data: a\n\n", "data: b\n\n"}, false},
		{"data: a\r\n\r\nevent: x\r\ndata: b\r\n\r\n", []string{"data: a\r\n\r\n", "event: x\r\ndata: b\r\n\r\n"}, false},
		{"\ndata: a\n\n", []string{"\ndata: a\n\n"}, false},
		{"data: a\n\ndata: b", []string{"data: a\n\n"}, true},
		{"data: a\n\n\n", []string{"data: a\n\n"}, false},
		{"", nil, false},
	} {
		fr := newFrameReader(strings.NewReader(c.in), 1<<20)
		var got []string
		var err error
		for {
			var f []byte
			f, err = fr.next()
			if err != nil {
				break
			}
			got = append(got, string(f))
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") || errors.Is(err, errCut) != c.cut {
			t.Errorf("%q: frames %q err %v, want %q cut %v", c.in, got, err, c.want, c.cut)
		}
	}
}

// FuzzFrameReader holds the frame reader to its properties: the frames
// it returns are the input's bytes in order, each ends with a blank line,
// and after the last only white space remains unless the stream is cut.
func FuzzFrameReader(f *testing.F) {
	for _, s := range []string{"data: a\n\ndata: b\n\n", "data: a\r\n\r\n", "\n\n\n", "data: x", "event: e\ndata: 1\ndata: 2\n\n: c\n\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		fr := newFrameReader(bytes.NewReader(in), 1<<20)
		var all []byte
		for {
			fb, err := fr.next()
			if errors.Is(err, io.EOF) {
				if !bytes.HasPrefix(in, all) || len(bytes.TrimSpace(in[len(all):])) != 0 {
					t.Fatalf("EOF with %q left of %q", in[len(all):], in)
				}
				return
			}
			if errors.Is(err, errCut) {
				if !bytes.HasPrefix(in, all) || len(bytes.TrimSpace(in[len(all):])) == 0 {
					t.Fatalf("cut with %q left", in[len(all):])
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasSuffix(fb, []byte("\n\n")) && !bytes.HasSuffix(fb, []byte("\n\r\n")) {
				t.Fatalf("frame %q does not end with a blank line", fb)
			}
			all = append(all, fb...)
			var g grammar
			g.add(fb) // must not panic
		}
	})
}

// TestParseStream checks stored streams written by hand: what each
// accepted one holds, and the reason each rejected one is refused.
func TestParseStream(t *testing.T) {
	const head = `{"finrepro_stream":1,"content_type":"text/event-stream","frames":`
	for _, c := range []struct {
		name, in string
		frames   []string // accepted: the frames' bytes
		atUS     []int64
		err      string // rejected: part of the error
	}{
		{name: "plain", in: head + `[{"at_us":0,"data":"data: a\n\n"},{"at_us":12,"data":"data: [DONE]\n\n"}]}`,
			frames: []string{"data: a\n\n", "data: [DONE]\n\n"}, atUS: []int64{0, 12}},
		// Escapes: \" \\ \/ \t, \u00e9 (é, 2 bytes), the pair
		// \ud83d\ude00 (U+1F600, 4 bytes), raw UTF-8 (中); b64 "/w==" is
		// the byte 0xff.
		{name: "escapes and b64", in: " {\"frames\" : [ {\"data\":\"\\\"\\\\\\/\\t\\u00e9\\ud83d\\ude00中\",\"at_us\":3}, {\"b64\":\"/w==\",\"at_us\":4} ] ,\"finrepro_stream\":1} \n",
			frames: []string{"\"\\/\t\u00e9\U0001F600中", "\xff"}, atUS: []int64{3, 4}},
		{name: "version", in: `{"finrepro_stream":2,"frames":[{"at_us":0,"data":"x"}]}`, err: "version 2, want 1"},
		{name: "no version", in: `{"frames":[{"at_us":0,"data":"x"}]}`, err: "no finrepro_stream version"},
		{name: "no frames", in: head + `[]}`, err: "no frames"},
		{name: "frames missing", in: `{"finrepro_stream":1}`, err: "no frames"},
		{name: "both", in: head + `[{"at_us":0,"data":"x","b64":"eA=="}]}`, err: "frame 0: want exactly one of data and b64"},
		{name: "neither", in: head + `[{"at_us":0}]}`, err: "frame 0: want exactly one"},
		{name: "negative", in: head + `[{"at_us":-1,"data":"x"}]}`, err: "negative at_us"},
		{name: "fraction", in: head + `[{"at_us":1.5,"data":"x"}]}`, err: "without fraction"},
		{name: "exponent", in: head + `[{"at_us":1e3,"data":"x"}]}`, err: "without fraction"},
		{name: "leading zero", in: head + `[{"at_us":01,"data":"x"}]}`, err: "want an integer"},
		{name: "huge", in: head + `[{"at_us":99999999999999999999,"data":"x"}]}`, err: "out of range"},
		{name: "unknown", in: head + `[{"at_us":0,"data":"x","extra":1}]}`, err: `unknown member "extra"`},
		{name: "unknown top", in: `{"finrepro_stream":1,"Frames":[]}`, err: `unknown member "Frames"`},
		{name: "duplicate", in: head + `[{"at_us":0,"data":"x","data":"y"}]}`, err: `duplicate member "data"`},
		{name: "bad b64", in: head + `[{"at_us":0,"b64":"!!"}]}`, err: "b64:"},
		{name: "null data", in: head + `[{"at_us":0,"data":null}]}`, err: `want '"'`},
		{name: "control", in: head + "[{\"at_us\":0,\"data\":\"a\nb\"}]}", err: "control character"},
		{name: "invalid UTF-8", in: head + "[{\"at_us\":0,\"data\":\"\xff\"}]}", err: "not valid UTF-8"},
		{name: "lone surrogate", in: head + `[{"at_us":0,"data":"\ud83d"}]}`, err: "invalid surrogate"},
		{name: "bad escape", in: head + `[{"at_us":0,"data":"\x"}]}`, err: `invalid escape \x`},
		{name: "short \\u", in: head + `[{"at_us":0,"data":"\u12"}]}`, err: `invalid escape \u`},
		{name: "unterminated", in: head + `[{"at_us":0,"data":"abc`, err: "unterminated string"},
		{name: "cut", in: head + `[{"at_us":0,"data":"x"}`, err: "offset"},
		{name: "trailing", in: head + `[{"at_us":0,"data":"x"}]}{}`, err: "data after"},
		{name: "empty", in: ``, err: `want '{'`},
	} {
		t.Run(c.name, func(t *testing.T) {
			// encoding/json decodes a Stream by ParseStream's rules.
			var viaJSON Stream
			if jerr := json.Unmarshal([]byte(c.in), &viaJSON); (jerr == nil) != (c.err == "") {
				t.Errorf("json.Unmarshal: %v, want an error: %v", jerr, c.err != "")
			} else if jerr == nil && len(viaJSON.Frames) != len(c.frames) {
				t.Errorf("json.Unmarshal: %d frames, want %d", len(viaJSON.Frames), len(c.frames))
			}
			for _, parse := range streamParsers {
				s, err := parse.f([]byte(c.in))
				if c.err != "" {
					if err == nil || !strings.Contains(err.Error(), c.err) {
						t.Fatalf("%s: error %v, want one containing %q", parse.name, err, c.err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", parse.name, err)
				}
				if len(s.Frames) != len(c.frames) {
					t.Fatalf("%s: %d frames, want %d", parse.name, len(s.Frames), len(c.frames))
				}
				for i, f := range s.Frames {
					if string(f.Bytes) != c.frames[i] || f.AtUS != c.atUS[i] {
						t.Errorf("%s: frame %d: %d %q, want %d %q", parse.name, i, f.AtUS, f.Bytes, c.atUS[i], c.frames[i])
					}
				}
			}
		})
	}
}

// streamParsers are the two ways of parsing a stored stream, each given
// a buffer of its own.
var streamParsers = []struct {
	name string
	f    func([]byte) (*Stream, error)
}{
	{"ParseStream", ParseStream},
	{"parseStreamInPlace", parseStreamInPlace},
}

// TestStopsWord checks the word test against the byte table on every
// word of plain bytes holding any two bytes at any two places (a borrow
// from a lower byte must not hide a higher one), and on the words of
// one byte anywhere.
func TestStopsWord(t *testing.T) {
	for c1 := range 256 {
		for c2 := range 256 {
			for k1 := range 8 {
				for k2 := k1; k2 < 8; k2++ {
					w := []byte("abcdefgh")
					w[k1], w[k2] = byte(c1), byte(c2)
					want := stopsRun[w[0]] || stopsRun[w[1]] || stopsRun[w[2]] || stopsRun[w[3]] ||
						stopsRun[w[4]] || stopsRun[w[5]] || stopsRun[w[6]] || stopsRun[w[7]]
					if got := stopsWord(binary.LittleEndian.Uint64(w)); got != want {
						t.Fatalf("%q: stopsWord %v, want %v", w, got, want)
					}
				}
			}
		}
	}
}

// strictStream decodes a stored stream with go-json-experiment's strict
// decoding (unknown members rejected; duplicate names and invalid UTF-8
// are rejected by default) and the format's rules of docs/proxy.md: the
// oracle ParseStream is held to.
func strictStream(b []byte) (*Stream, error) {
	var j struct {
		Version     *int   `json:"finrepro_stream"`
		ContentType string `json:"content_type"`
		Frames      []struct {
			AtUS int64   `json:"at_us"`
			Data *string `json:"data"`
			B64  *string `json:"b64"`
		} `json:"frames"`
	}
	if err := jsonv2.Unmarshal(b, &j, jsonv2.RejectUnknownMembers(true)); err != nil {
		return nil, err
	}
	if j.Version == nil || *j.Version != StreamVersion || len(j.Frames) == 0 {
		return nil, errors.New("version or frames")
	}
	s := &Stream{Version: *j.Version, ContentType: j.ContentType}
	for i, f := range j.Frames {
		var raw []byte
		switch {
		case (f.Data == nil) == (f.B64 == nil) || f.AtUS < 0:
			return nil, fmt.Errorf("frame %d", i)
		case f.Data != nil:
			raw = []byte(*f.Data)
		default:
			var err error
			if raw, err = base64.StdEncoding.DecodeString(*f.B64); err != nil {
				return nil, err
			}
		}
		s.Frames = append(s.Frames, Frame{AtUS: f.AtUS, Bytes: raw})
	}
	return s, nil
}

// FuzzStream holds the stored stream format to a round trip, any frames
// (valid UTF-8 or not) coming back byte for byte, and ParseStream and
// parseStreamInPlace to strictStream: what one accepts the other
// accepts with the same frames
// (null, which strict decoding takes for a missing member, is left to
// ParseStream, which refuses it).
func FuzzStream(f *testing.F) {
	f.Add([]byte("data: a\n\n"), []byte("\xff\xfe\n\n"), `{"finrepro_stream":1,"content_type":"text/event-stream","frames":[{"at_us":0,"data":"x"}]}`)
	f.Add([]byte("data: {\"a\":\"\u00e9\"}\n\n"), []byte{}, `{"frames":[{"b64":"/w==","at_us":1},{"data":"\ud83d\ude00\t","at_us":2}],"finrepro_stream":1}`)
	f.Add([]byte{}, []byte{0}, `{"finrepro_stream":1,"frames":[{"at_us":1e3,"data":"x","data":"y"}]}`)
	f.Fuzz(func(t *testing.T, a, b []byte, stored string) {
		st := Stream{Version: StreamVersion, ContentType: "text/event-stream", Frames: []Frame{{0, a}, {7, b}}}
		enc, err := json.Marshal(&st)
		if err != nil {
			t.Fatal(err)
		}
		if !isStream(enc) {
			t.Fatalf("%s lacks the stream marker", enc)
		}
		back, err := ParseStream(enc)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(back.Frames[0].Bytes, a) || !bytes.Equal(back.Frames[1].Bytes, b) || back.Frames[1].AtUS != 7 {
			t.Fatalf("round trip changed the frames: %q %q", back.Frames[0].Bytes, back.Frames[1].Bytes)
		}
		want, werr := strictStream([]byte(stored))
		for _, parse := range streamParsers {
			got, err := parse.f([]byte(stored))
			switch {
			case err == nil && werr != nil:
				t.Fatalf("%s accepts %q, strict decoding refuses it: %v", parse.name, stored, werr)
			case err != nil && werr == nil && !strings.Contains(stored, "null"):
				t.Fatalf("%s refuses %q (%v), strict decoding accepts it", parse.name, stored, err)
			case err == nil:
				if got.ContentType != want.ContentType || len(got.Frames) != len(want.Frames) {
					t.Fatalf("%s: %q: content type %q and %d frames, strict decoding %q and %d", parse.name, stored, got.ContentType, len(got.Frames), want.ContentType, len(want.Frames))
				}
				for i := range got.Frames {
					if !bytes.Equal(got.Frames[i].Bytes, want.Frames[i].Bytes) || got.Frames[i].AtUS != want.Frames[i].AtUS {
						t.Fatalf("%s: %q: frame %d is %d %q, strict decoding %d %q", parse.name, stored, i, got.Frames[i].AtUS, got.Frames[i].Bytes, want.Frames[i].AtUS, want.Frames[i].Bytes)
					}
				}
			}
		}
	})
}

// FuzzRoute holds routing to its property: whatever path a client sends,
// the endpoint of an accepted route is a plain relative path that replay
// accepts (no leading slash, no dot-dot, no query).
func FuzzRoute(f *testing.F) {
	for _, s := range []string{"/v1/chat/completions", "/anthropic/v1/messages", "/gemini/v1beta/models/m:generateContent", "/v1/../x", "/v1/models/a:b", "/v1//x"} {
		f.Add("POST", s)
	}
	f.Fuzz(func(t *testing.T, method, path string) {
		u, err := url.Parse(path)
		if err != nil {
			return
		}
		rt, err := routeOf(method, u, func(n string) bool { return n == "openai" || n == "gemini" || n == "anthropic" })
		if err != nil {
			return
		}
		e := rt.endpoint
		if e == "" || strings.HasPrefix(e, "/") || strings.Contains(e, "..") || strings.ContainsAny(e, "?#\\ \t\r\n") || rt.provider == "" {
			t.Fatalf("%s %q: route %+v", method, path, rt)
		}
	})
}
