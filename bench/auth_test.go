package bench

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jwt"

	"github.com/mcpx-dev/mcpx/runtime/auth"
)

// The auth benchmark serves the HTTP benchmark's 50 tools from mcpx three
// ways, side by side in one run: without auth, behind a static bearer
// token, and behind JWT access tokens of an issuer served by the test
// (its JWKS over httptest). The JWT is verified once and then found in the
// verified-token cache by its SHA-256, so what a request pays is one hash
// and one map lookup.

const staticBenchToken = "bench-static-token-0123456789"

// benchIssuer is an issuer's keys and a token for resource.
func benchIssuer(tb testing.TB, resource string) (iss string, token string) {
	raw, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		tb.Fatal(err)
	}
	key, _ := jwk.Import(raw)
	key.Set(jwk.KeyIDKey, "k1")
	key.Set(jwk.AlgorithmKey, jwa.RS256())
	pub, _ := key.PublicKey()
	set := jwk.NewSet()
	set.AddKey(pub)
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/jwks" {
			json.NewEncoder(w).Encode(set)
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"issuer": srv.URL, "jwks_uri": srv.URL + "/jwks"})
	}))
	tb.Cleanup(srv.Close)
	tok, _ := jwt.NewBuilder().Issuer(srv.URL).Subject("bench").Audience([]string{resource}).
		Expiration(time.Now().Add(time.Hour)).Build()
	signed, err := jwt.Sign(tok, jwt.WithKey(jwa.RS256(), key))
	if err != nil {
		tb.Fatal(err)
	}
	return srv.URL, string(signed)
}

type withBearer struct {
	token string
	next  http.RoundTripper
}

func (b withBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// authServers are the three endpoints and the token each wants.
func authServers(tb testing.TB) map[string][2]string { // name -> url, token
	out := map[string][2]string{}
	plain := httptest.NewServer(mcpxServer(true))
	tb.Cleanup(plain.Close)
	out["none"] = [2]string{plain.URL + "/mcp", ""}

	static, err := auth.New(auth.Config{Tokens: []auth.StaticToken{{Name: "bench", SHA256: auth.TokenHash(staticBenchToken)}}})
	if err != nil {
		tb.Fatal(err)
	}
	st := httptest.NewServer(static.Middleware(mcpxServer(true)))
	tb.Cleanup(st.Close)
	out["static"] = [2]string{st.URL + "/mcp", staticBenchToken}

	const resource = "http://mcpx.bench/mcp"
	iss, token := benchIssuer(tb, resource)
	ja, err := auth.New(auth.Config{Resource: resource, JWT: &auth.JWTConfig{Issuer: iss}})
	if err != nil {
		tb.Fatal(err)
	}
	jt := httptest.NewServer(ja.Middleware(mcpxServer(true)))
	tb.Cleanup(jt.Close)
	out["jwt"] = [2]string{jt.URL + "/mcp", token}
	return out
}

// BenchmarkAuth reports req/s of tools/call (2026-07-28, stateless) for
// each; read the ratios static/none and jwt/none from one run.
func BenchmarkAuth(b *testing.B) {
	servers := authServers(b)
	for _, name := range []string{"none", "static", "jwt"} {
		b.Run(name, func(b *testing.B) {
			s := servers[name]
			var rt http.RoundTripper = &http.Transport{MaxIdleConnsPerHost: Concurrency * 2}
			if s[1] != "" {
				rt = withBearer{s[1], rt}
			}
			drive(b, connectVia(b, s[0], "2026-07-28", rt), requests(true)["tools_call"])
		})
	}
}

// TestAuthBenchmarkAuthenticates: each endpoint answers the benchmarked
// call with a result given its token, and the protected ones refuse it
// without, so the benchmark measures authenticated requests.
func TestAuthBenchmarkAuthenticates(t *testing.T) {
	for name, s := range authServers(t) {
		r := requests(true)["tools_call"]
		var rt http.RoundTripper = http.DefaultTransport
		if s[1] != "" {
			rt = withBearer{s[1], rt}
		}
		body, err := connectVia(t, s[0], "2026-07-28", rt).post(r[0], r[1], r[2])
		if err != nil || !strings.Contains(string(body), `"result"`) {
			t.Errorf("%s: %v %.200s", name, err, body)
		}
		if s[1] == "" {
			continue
		}
		if _, err := connectVia(t, s[0], "2026-07-28", http.DefaultTransport).post(r[0], r[1], r[2]); err == nil || !strings.Contains(err.Error(), "HTTP 401") {
			t.Errorf("%s without a token: %v", name, fmt.Sprint(err))
		}
	}
}
