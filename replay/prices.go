package replay

import (
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/finrepro/finrepro/results"
)

//go:embed prices.json
var defaultPrices []byte

// A Price is what a model costs in USD per million tokens.
type Price struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
}

// Prices is a price table: the date its prices were checked and a price
// per model name.
type Prices struct {
	Date   string           `json:"date"`
	Note   string           `json:"note,omitempty"`
	Models map[string]Price `json:"models"`
}

// DefaultPrices returns the built-in price table (prices.json).
func DefaultPrices() *Prices {
	p, err := ParsePrices(bytes.NewReader(defaultPrices), "prices.json")
	if err != nil {
		panic(err) // the embedded table is checked by the tests
	}
	return p
}

// ParsePrices reads a price table in the prices.json format, naming file
// in errors.
func ParsePrices(r io.Reader, file string) (*Prices, error) {
	var p Prices
	if err := results.ReadJSON(r, file, &p); err != nil {
		return nil, err
	}
	if p.Date == "" {
		return nil, results.Errorf(file, 0, "date", "empty")
	}
	for name, m := range p.Models {
		if m.Input < 0 || m.Output < 0 || math.IsNaN(m.Input) || math.IsNaN(m.Output) {
			return nil, results.Errorf(file, 0, "models."+name, "negative or NaN price")
		}
	}
	return &p, nil
}

// Lookup returns the price of model: an exact entry, else the entry that
// is the longest prefix of it ("gpt-4o-2024-08-06" costs as "gpt-4o").
func (p *Prices) Lookup(model string) (Price, bool) {
	if p == nil {
		return Price{}, false
	}
	if m, ok := p.Models[model]; ok {
		return m, true
	}
	best, found := "", false
	for name := range p.Models {
		if strings.HasPrefix(model, name) && len(name) > len(best) {
			best, found = name, true
		}
	}
	return p.Models[best], found
}

// Cost returns the cost in USD of the given token counts, and whether
// the model has a price.
func (p *Prices) Cost(model string, in, out int) (float64, bool) {
	m, ok := p.Lookup(model)
	if !ok {
		return 0, false
	}
	return (float64(in)*m.Input + float64(out)*m.Output) / 1e6, true
}

// DefaultOutputTokens is the output estimate of a request that sets no
// token limit.
const DefaultOutputTokens = 1000

// estimateTokens guesses the token count of text: a token per four ASCII
// bytes and one per other character (CJK text is about a token a
// character).
func estimateTokens(text string) int {
	ascii, other := 0, 0
	for _, r := range text {
		if r < utf8.RuneSelf {
			ascii++
		} else {
			other++
		}
	}
	return (ascii+3)/4 + other
}

// estimateRequest guesses input and output tokens of a provider body: the
// input from every string in it, the output from its token limit.
func estimateRequest(body []byte) (in, out int) {
	in = estimateTokens(string(body))
	out = DefaultOutputTokens
	for _, f := range []string{`"max_tokens":`, `"max_output_tokens":`, `"maxOutputTokens":`, `"max_completion_tokens":`} {
		if i := bytes.Index(body, []byte(f)); i >= 0 {
			var n int
			if _, err := fmt.Sscan(string(body[i+len(f):min(len(body), i+len(f)+12)]), &n); err == nil && n > 0 {
				out = n
			}
		}
	}
	return in, out
}
