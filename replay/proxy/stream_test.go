package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"strings"
	"testing"
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

// FuzzStream holds the stored stream format to a round trip: any frames
// (valid UTF-8 or not) come back byte for byte, and whatever ParseStream
// accepts encodes back to something it parses to the same frames.
func FuzzStream(f *testing.F) {
	f.Add([]byte("data: a\n\n"), []byte("\xff\xfe\n\n"), `{"finrepro_stream":1,"content_type":"text/event-stream","frames":[{"at_us":0,"data":"x"}]}`)
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
		if s, err := ParseStream([]byte(stored)); err == nil {
			enc, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			s2, err := ParseStream(enc)
			if err != nil || len(s2.Frames) != len(s.Frames) {
				t.Fatalf("re-encoded stream does not parse: %v", err)
			}
			for i := range s.Frames {
				if !bytes.Equal(s.Frames[i].Bytes, s2.Frames[i].Bytes) {
					t.Fatalf("frame %d changed", i)
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
