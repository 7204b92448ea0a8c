package auth

import (
	"net/http/httptest"
	"testing"
)

// BenchmarkAuthenticate: what the middleware's check costs per request, a
// JWT found in the verified-token cache against one verified in full
// (RS256 signature, claims) each time, and a static token.
func BenchmarkAuthenticate(b *testing.B) {
	t := &testing.T{}
	is := newIssuer(t)
	defer is.srv.Close()
	a := newAuth(t, is)
	tok := is.token(t, is.key, nil)
	for _, c := range []struct {
		name   string
		header string
		forget bool
	}{{"jwt-cached", "Bearer " + tok, false}, {"jwt-full", "Bearer " + tok, true}, {"static", "Bearer s3cret-token", false}} {
		b.Run(c.name, func(b *testing.B) {
			r := httptest.NewRequest("POST", "http://mcpx.test/mcp", nil)
			r.Header.Set("Authorization", c.header)
			b.ReportAllocs()
			for b.Loop() {
				if c.forget {
					a.jwt.verified.Clear()
				}
				if _, f := a.authenticate(r); f != nil {
					b.Fatal(f)
				}
			}
		})
	}
}
