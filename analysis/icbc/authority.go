package icbc

import (
	"net/url"
	"strings"
)

// multiSuffixes are the public suffixes of more than one label that the
// authors' domain lists meet (China, the UK, Hong Kong, Japan and the
// like). The registrable domain of www.sse.com.cn is sse.com.cn, never
// com.cn.
var multiSuffixes = map[string]bool{
	"com.cn": true, "net.cn": true, "org.cn": true, "gov.cn": true, "edu.cn": true, "ac.cn": true,
	"co.uk": true, "org.uk": true, "ac.uk": true, "gov.uk": true, "me.uk": true, "ltd.uk": true, "plc.uk": true,
	"com.hk": true, "org.hk": true, "gov.hk": true, "edu.hk": true, "net.hk": true,
	"co.jp": true, "or.jp": true, "ne.jp": true, "ac.jp": true, "go.jp": true,
	"com.sg": true, "gov.sg": true, "edu.sg": true, "com.au": true, "gov.au": true, "edu.au": true,
	"com.tw": true, "gov.tw": true, "co.kr": true, "go.kr": true, "co.in": true, "gov.in": true,
	"com.br": true, "gov.br": true, "co.nz": true, "govt.nz": true,
}

// Host returns the lower-case host name of a URL without "www." and port,
// or "" when raw is not an http(s) URL.
func Host(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	h := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	return strings.TrimPrefix(h, "www.")
}

// RegistrableDomain returns the registrable domain of host: the public
// suffix and one more label (bloomberg.com, sse.com.cn,
// bankofengland.co.uk).
func RegistrableDomain(host string) string {
	labels := strings.Split(host, ".")
	n := 2
	if len(labels) >= 3 && multiSuffixes[strings.Join(labels[len(labels)-2:], ".")] {
		n = 3
	}
	if len(labels) <= n {
		return host
	}
	return strings.Join(labels[len(labels)-n:], ".")
}

// Tier returns the authority tier (1 to 4) of a URL under the authors'
// lists: tier 1 for a host under a high-trust suffix (.gov, .gov.cn,
// .edu, ...) or a high-trust domain, tier 2 for a medium-high-trust
// domain, tier 3 for a medium-trust domain, tier 4 otherwise. A listed
// domain matches itself and its subdomains, on label boundaries and never
// above the registrable domain (a list entry can not make all of com.cn
// trusted, and notice.com is not ice.com).
func (a *Authority) Tier(rawURL string) int {
	host := Host(rawURL)
	if host == "" {
		return 4
	}
	for _, s := range a.HighTrustSuffixes {
		s = strings.ToLower(strings.TrimPrefix(s, "."))
		if host == s || strings.HasSuffix(host, "."+s) {
			return 1
		}
	}
	reg := RegistrableDomain(host)
	for tier, list := range [][]string{a.HighTrustDomains, a.MediumHighTrustDomains, a.MediumTrustDomains} {
		for _, d := range list {
			d = strings.ToLower(d)
			if len(d) < len(reg) || !(host == d || strings.HasSuffix(host, "."+d)) {
				continue
			}
			return tier + 1
		}
	}
	return 4
}
