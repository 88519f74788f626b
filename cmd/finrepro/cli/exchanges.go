package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/cache/reqkey"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/results"
	"github.com/finrepro/finrepro/site"
)

// exchangeLookup is the site's view of store: the exchange under a key
// with its record's metadata, read only. The store is safe for
// concurrent reads, as the site's parallel pages need.
func exchangeLookup(store *cache.Store) site.ExchangeLookup {
	if store == nil {
		return nil
	}
	return func(key string, texts bool, buf []byte) (*site.Exchange, []byte, error) {
		k, err := reqkey.Parse(key)
		if err != nil {
			return nil, buf, err
		}
		if !texts {
			m, err := store.GetMeta(k)
			if err != nil {
				return nil, buf, err
			}
			// an import's provenance is in its response
			if m.Source != results.SourceImport {
				return exchangeOf(&cache.Exchange{Meta: *m}), buf, nil
			}
		}
		x, buf, err := store.AppendExchange(buf, k)
		if err != nil {
			return nil, buf, err
		}
		return exchangeOf(x), buf, nil
	}
}

// exchangeOf is the site's view of x.
func exchangeOf(x *cache.Exchange) *site.Exchange {
	m := x.Meta
	return &site.Exchange{
		Request: x.Request, Response: x.Response,
		Model: m.Model, ReportedModel: m.ReportedModel,
		InputTokens: m.InputTokens, OutputTokens: m.OutputTokens, CostUSD: m.CostUSD,
		Source: m.Source, Provenance: provenanceOf(x), RecordedAt: m.RecordedAt,
	}
}

// provenanceOf says where an exchange came from beyond its source: the
// batch of a batch exchange, the provenance an imported report was stored
// with (see replay.ImportReport), and the provenance headers the provider
// sent.
func provenanceOf(x *cache.Exchange) string {
	var parts []string
	if x.Meta.BatchID != "" {
		parts = append(parts, "batch "+x.Meta.BatchID)
	}
	if x.Meta.Source == results.SourceImport {
		var body struct {
			Import *replay.Provenance `json:"finrepro_import"`
		}
		// A response without it (or not JSON) has no import provenance
		// to show; the response itself is shown anyway.
		if json.Unmarshal(x.Response, &body) == nil && body.Import != nil {
			p := body.Import
			s := fmt.Sprintf("collected from %s on %s, product version %s", p.Where, p.When, p.ProductVersion)
			if p.File != "" {
				s += ", file " + p.File
			}
			parts = append(parts, s)
		}
	}
	if x.Meta.Headers != "" {
		parts = append(parts, "headers: "+strings.ReplaceAll(x.Meta.Headers, "\n", "; "))
	}
	return strings.Join(parts, "; ")
}
