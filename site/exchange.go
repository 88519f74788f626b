package site

import (
	"bytes"
	"hash/maphash"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/finrepro/finrepro/analysis"
)

// An Exchange is a recorded exchange as a task page shows it: the request
// and the response as stored, and what the cache's record says about them.
type Exchange struct {
	// Request and Response are the stored bytes (JSON as a rule; shown as
	// text whatever they hold).
	Request, Response []byte
	// Model is the model requested; ReportedModel the one the provider
	// said it ran.
	Model, ReportedModel      string
	InputTokens, OutputTokens int
	CostUSD                   float64
	// Source is "api", "batch", "import" or "sim".
	Source string
	// Provenance says where an exchange of source batch or import came
	// from (the batch id; where, when and the product version of an
	// imported report); empty when nothing is known.
	Provenance string
	// RecordedAt is when the exchange was recorded, as stored.
	RecordedAt string
}

// An ExchangeLookup returns the exchange stored under a hex cache key;
// with texts false it may leave Request and Response out (a page that
// has no room left for them shows the metadata alone, and reading what
// it would drop was most of the lookups' cost on large pages). Pages are
// written in parallel, one benchmark or all at once, so it must be safe
// for concurrent use; it is only read from. buf is a buffer the lookup
// may read Request and Response into, from buf[:0] on; it returns the
// buffer to hand to the next lookup, which may overwrite them (a page
// reads thousands of exchanges, and the texts of each it copies into
// its block).
type ExchangeLookup func(key string, texts bool, buf []byte) (x *Exchange, next []byte, err error)

// exchangeBudget is the most bytes of request and response text (JSON
// encoded, each distinct piece once) a task page embeds; exchanges past
// it are listed with their metadata only. With textBudget it keeps a
// task page under MaxPage.
const exchangeBudget = 256 << 10

// longString is the shortest JSON string token, in bytes, that a page's
// exchanges share rather than repeat: the report a judge request quotes,
// the prompt every system was sent.
const longString = 256

// splitJSON appends to out the pieces b is cut into, which concatenate
// to b: every JSON string token (from its opening quote to its closing
// one) of at least n bytes is a piece of its own, and the bytes between
// them are pieces. It reads any bytes (an unterminated string runs to
// the end), so that hostile stored bytes still split in one pass.
func splitJSON(out [][]byte, b []byte, n int) [][]byte {
	lit := 0 // start of the pending literal
	for i := 0; i < len(b); {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			break
		}
		start := i + q
		end := len(b) // past the closing quote; the end when unterminated
		for j := start + 1; j < len(b); {
			k := bytes.IndexByte(b[j:], '"')
			if k < 0 {
				break
			}
			j += k
			// the quote closes the string unless an odd run of
			// backslashes escapes it
			bs := 0
			for bs < j-start-1 && b[j-1-bs] == '\\' {
				bs++
			}
			j++
			if bs%2 == 0 {
				end = j
				break
			}
		}
		if end-start >= n {
			if lit < start {
				out = append(out, b[lit:start])
			}
			out = append(out, b[start:end])
			lit = end
		}
		i = end
	}
	if lit < len(b) {
		out = append(out, b[lit:])
	}
	return out
}

// maxExchanges is the most exchanges a task page lists: with the texts
// (textBudget, exchangeBudget) the folds' metadata, about 1 KB each, must
// keep the page under MaxPage. The verdicts of exchanges past it show the
// key alone.
const maxExchanges = 300

// An exchangeSet is a task page's exchanges: each distinct key once, and
// each distinct piece of their texts once (see splitJSON), JSON encoded
// for the page's exchange block.
type exchangeSet struct {
	lookup ExchangeLookup
	keys   map[string]int // key -> index in xs
	xs     []pageExchange
	owner  []int // the detail whose entry lists each exchange
	// The pieces of the block, in index order: their encodings in enc,
	// each followed by a comma, and the pieces themselves in raw, piece
	// k at raw[rawAt[k]:rawAt[k+1]]. A piece is found by its hash in
	// byHash, or, when another piece has its hash, in other. One buffer
	// of each per page, not a string per piece: the texts are 100 MB of
	// a full-scale site, and copying each piece into a map key and an
	// encoding of its own was about a tenth of the exchanges' cost in a
	// profile of reproduce.
	seed   maphash.Seed
	hashFn func([]byte) uint64 // replaces maphash in tests
	byHash map[uint64]int
	other  map[string]int
	raw    []byte
	rawAt  []int
	enc    []byte
	idx    []int // the pieces of the embedded exchanges; see pageExchange
	// scratch of fetch: the pieces of an exchange and their hashes, and
	// the buffer the lookup reads texts into
	split  [][]byte
	hashes []uint64
	buf    []byte
	// full is set once an exchange did not fit: later ones are looked
	// up without their texts
	full bool
	// left are the keys past maxExchanges, not listed
	left map[string]bool
}

// exchangeSets keeps exchange sets, with their buffers, from page to
// page: a set's block and pieces grow to about exchangeBudget each, and
// growing them anew on every task page was a quarter of what reproduce
// allocated at full scale (2.4 GB; heap profile, alloc_space).
var exchangeSets = sync.Pool{New: func() any { return new(exchangeSet) }}

// newExchangeSet returns an empty set looking exchanges up with lookup;
// free gives it back once its page is written.
func newExchangeSet(lookup ExchangeLookup) *exchangeSet {
	s := exchangeSets.Get().(*exchangeSet)
	s.lookup = lookup
	return s
}

// free empties s and puts it back for the next page; s must not be
// used after.
func (s *exchangeSet) free() {
	s.reset()
	exchangeSets.Put(s)
}

// reset empties s, keeping its buffers and maps.
func (s *exchangeSet) reset() {
	clear(s.xs) // the exchanges' metadata
	clear(s.split)
	clear(s.keys)
	clear(s.byHash)
	clear(s.other)
	clear(s.left)
	*s = exchangeSet{
		keys: s.keys, xs: s.xs[:0], owner: s.owner[:0],
		seed: s.seed, byHash: s.byHash, other: s.other,
		raw: s.raw[:0], rawAt: s.rawAt[:0], enc: s.enc[:0], idx: s.idx[:0],
		split: s.split[:0], hashes: s.hashes[:0], buf: s.buf[:0], left: s.left,
	}
}

// A pageExchange is one exchange of a page.
type pageExchange struct {
	call analysis.Call
	role string // "judge" or "output"
	name string // the judge or the system
	x    *Exchange
	err  error
	// req and resp are the indexes of the pieces of the request and the
	// response; nil when the texts are not embedded.
	req, resp []int
	embedded  bool
	tried     bool // fetch has looked it up
}

// add adds the exchange call names, once per key, and returns its index;
// -1 when call names no exchange. fetch looks it up.
func (s *exchangeSet) add(call *analysis.Call, role, name string) int {
	if call == nil || call.Key == "" {
		return -1
	}
	c := *call
	if i, ok := s.keys[c.Key]; ok {
		return i
	}
	if s.keys == nil {
		s.keys, s.left = map[string]int{}, map[string]bool{}
	}
	if len(s.xs) >= maxExchanges {
		s.left[c.Key] = true
		return -1
	}
	px := pageExchange{call: c, role: role, name: name}
	s.keys[c.Key] = len(s.xs)
	s.xs = append(s.xs, px)
	return len(s.xs) - 1
}

// pieces is the number of pieces in the block.
func (s *exchangeSet) pieces() int { return max(len(s.rawAt)-1, 0) }

// hash is the hash of piece p.
func (s *exchangeSet) hash(p []byte) uint64 {
	if s.hashFn != nil {
		return s.hashFn(p)
	}
	return maphash.Bytes(s.seed, p)
}

// find returns the index of piece p, whose hash is h, or -1.
func (s *exchangeSet) find(p []byte, h uint64) int {
	if k, ok := s.byHash[h]; ok && bytes.Equal(s.raw[s.rawAt[k]:s.rawAt[k+1]], p) {
		return k
	}
	if k, ok := s.other[string(p)]; ok {
		return k
	}
	return -1
}

// insert adds piece p, whose hash is h, to the block.
func (s *exchangeSet) insert(p []byte, h uint64) int {
	if len(s.rawAt) == 0 {
		s.rawAt = append(s.rawAt, 0)
	}
	k := s.pieces()
	if _, taken := s.byHash[h]; taken {
		if s.other == nil {
			s.other = map[string]int{}
		}
		s.other[string(p)] = k
	} else {
		s.byHash[h] = k
	}
	s.raw = append(s.raw, p...)
	s.rawAt = append(s.rawAt, len(s.raw))
	// p is read, not kept: appendJSONString copies what it writes
	s.enc, _ = appendJSONString(s.enc, bytesString(p), -1)
	s.enc = append(s.enc, ',')
	return k
}

// truncate drops the pieces from index n on, whose encodings start at
// enc[e].
func (s *exchangeSet) truncate(n, e int) {
	for k := n; k < s.pieces(); k++ {
		p := s.raw[s.rawAt[k]:s.rawAt[k+1]]
		if h := s.hash(p); s.byHash[h] == k {
			delete(s.byHash, h)
		} else {
			delete(s.other, string(p))
		}
	}
	if s.pieces() > n {
		s.raw, s.rawAt = s.raw[:s.rawAt[n]], s.rawAt[:n+1]
	}
	s.enc = s.enc[:e]
}

// fetch looks exchange i up and puts its texts into the page's block
// when they fit in exchangeBudget with what is there (once one does not,
// the later ones are looked up without their texts); then it lets go of
// the exchange's bytes (the block holds what the page shows), so that a
// page being written holds one exchange at a time. The raw size of the
// new pieces is a lower bound of their encoded size, so an exchange that
// cannot fit is not encoded at all.
func (s *exchangeSet) fetch(i int) {
	px := &s.xs[i]
	if px.tried || s.lookup == nil {
		return
	}
	px.tried = true
	px.x, s.buf, px.err = s.lookup(px.call.Key, !s.full, s.buf)
	if px.x == nil || s.full {
		if px.x != nil {
			x := *px.x
			x.Request, x.Response = nil, nil
			px.x = &x
		}
		return
	}
	x := *px.x // a copy: the lookup's value is not ours to change
	px.x = &x
	// the texts are in s.buf, which the next lookup reuses
	defer func() { x.Request, x.Response = nil, nil }()
	s.split = splitJSON(s.split[:0], x.Request, longString)
	nreq := len(s.split)
	s.split = splitJSON(s.split, x.Response, longString)
	if s.byHash == nil {
		s.seed, s.byHash = maphash.MakeSeed(), map[uint64]int{}
	}
	s.hashes = s.hashes[:0]
	raw := 0
	for _, p := range s.split {
		h := s.hash(p)
		s.hashes = append(s.hashes, h)
		if s.find(p, h) < 0 {
			raw += len(p)
		}
	}
	if len(s.enc)+raw > exchangeBudget {
		s.full = true
		return
	}
	// new pieces are encoded once, and kept only when all fit
	n, e, at := s.pieces(), len(s.enc), len(s.idx)
	for j, p := range s.split {
		k := s.find(p, s.hashes[j])
		if k < 0 {
			k = s.insert(p, s.hashes[j])
		}
		s.idx = append(s.idx, k)
	}
	if len(s.enc) > exchangeBudget {
		s.truncate(n, e)
		s.idx = s.idx[:at]
		s.full = true
		return
	}
	px.req, px.resp = s.idx[at:at+nreq:at+nreq], s.idx[at+nreq:len(s.idx):len(s.idx)]
	px.embedded = true
}

// bytesString is b as a string, without a copy, for a reader that does
// not keep it while b may change.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// appendBlock appends the page's exchange block: a JSON object with the
// strings ("s") and, per exchange, the indexes of its request's and its
// response's pieces ("x"), or null when not embedded.
func (s *exchangeSet) appendBlock(b []byte, id string) []byte {
	b = append(b, "\n<script type=\"application/json\" id=\""...)
	b = append(b, id...)
	b = append(b, `">{"s":[`...)
	if len(s.enc) > 0 {
		b = append(b, s.enc[:len(s.enc)-1]...) // the last comma
	}
	b = append(b, `],"x":[`...)
	ints := func(ns []int) {
		b = append(b, '[')
		for k, n := range ns {
			if k > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(n), 10)
		}
		b = append(b, ']')
	}
	for i, px := range s.xs {
		if i > 0 {
			b = append(b, ',')
		}
		if !px.embedded {
			b = append(b, "null"...)
			continue
		}
		b = append(b, '[')
		ints(px.req)
		b = append(b, ',')
		ints(px.resp)
		b = append(b, ']')
	}
	return append(b, "]}</script>"...)
}

// sourceNames say how an exchange was obtained, by source.
var sourceNames = map[string]string{
	"api":    "api: recorded from the provider's API",
	"batch":  "batch: recorded through the provider's batch API",
	"import": "import: imported from results produced elsewhere",
	"sim":    "sim: produced by the built-in simulator (synthetic)",
}

// appendExchange appends exchange i's fold: a summary line, its metadata
// and, when embedded, two empty blocks that site.js fills from the page's
// exchange block when the fold opens.
func (s *exchangeSet) appendExchange(b []byte, i int, id string) []byte {
	px := &s.xs[i]
	c := px.call
	b = append(b, "\n<details class=\"exchange\" id=\""...)
	b = append(b, id...)
	b = append(b, '"')
	if px.embedded {
		b = append(b, ` data-x="`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, '"')
	}
	b = append(b, "><summary>"...)
	if px.role == "output" {
		b = append(b, "Output exchange"...)
	} else {
		b = append(b, "Judge exchange: "...)
		b = appendEscaped(b, px.name)
	}
	b = append(b, " · "...)
	b = appendEscaped(b, c.Source)
	b = append(b, " · sample "...)
	b = strconv.AppendInt(b, int64(c.Sample), 10)
	b = append(b, " · key <code>"...)
	b = appendEscaped(b, keyPrefix(c.Key, 12))
	b = append(b, "</code></summary>\n<dl class=\"meta\">"...)
	row := func(term, val string) {
		if val == "" {
			return
		}
		b = append(b, "<dt>"...)
		b = append(b, term...)
		b = append(b, "</dt><dd>"...)
		b = appendEscaped(b, val)
		b = append(b, "</dd>"...)
	}
	row("Cache key", c.Key)
	row("Sample", strconv.Itoa(c.Sample))
	src := c.Source
	if x := px.x; x != nil && x.Source != "" {
		src = x.Source
	}
	if n, ok := sourceNames[src]; ok {
		row("Obtained", n)
	} else {
		row("Obtained", src)
	}
	if x := px.x; x != nil {
		row("Provenance", x.Provenance)
		row("Model requested", x.Model)
		row("Model reported", x.ReportedModel)
		row("Input tokens", strconv.Itoa(x.InputTokens))
		row("Output tokens", strconv.Itoa(x.OutputTokens))
		row("Cost (USD)", strconv.FormatFloat(x.CostUSD, 'f', -1, 64))
		row("Recorded at", x.RecordedAt)
	} else {
		row("Model reported", c.Model)
	}
	b = append(b, "</dl>"...)
	switch {
	case px.err != nil:
		b = append(b, "\n<p class=\"note\">The cache could not give this exchange: "...)
		b = appendEscaped(b, px.err.Error())
		b = append(b, "</p>"...)
	case px.x == nil:
		b = append(b, "\n<p class=\"note\">The request and the response are in the cache (<code>finrepro cache dump</code>).</p>"...)
	case !px.embedded:
		b = append(b, "\n<p class=\"note\">The request and the response are not on this page, which holds as much as it can; they are in the cache (<code>finrepro cache dump</code>).</p>"...)
	default:
		b = append(b, "\n<h4>Request, as stored</h4><pre class=\"text raw\" data-part=\"0\"></pre>\n<h4>Response, as stored</h4><pre class=\"text raw\" data-part=\"1\"></pre>"...)
	}
	return append(b, "</details>"...)
}

// keyPrefix is the first n characters of a key, for a summary line
// or a link.
func keyPrefix(k string, n int) string {
	if len(k) > n {
		return strings.ToValidUTF8(k[:n], "")
	}
	return k
}
