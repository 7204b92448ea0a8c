package auth

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jwt"
)

// issuer is a test authorization server: its own RSA keys, a JWKS and
// OpenID metadata over httptest.
type issuer struct {
	srv      *httptest.Server
	key      jwk.Key // private, kid "k1"
	public   jwk.Set
	jwksHits atomic.Int32
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	is := &issuer{}
	is.key = rsaKey(t, "k1")
	is.public = jwk.NewSet()
	pub, err := is.key.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	if err := is.public.AddKey(pub); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"issuer": is.srv.URL, "jwks_uri": is.srv.URL + "/jwks"})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		is.jwksHits.Add(1)
		json.NewEncoder(w).Encode(is.public)
	})
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	return is
}

func rsaKey(t *testing.T, kid string) jwk.Key {
	t.Helper()
	raw, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	k, err := jwk.Import(raw)
	if err != nil {
		t.Fatal(err)
	}
	k.Set(jwk.KeyIDKey, kid)
	k.Set(jwk.AlgorithmKey, jwa.RS256())
	return k
}

// token signs claims with key; the standard ones default to a valid
// token for resource.
func (is *issuer) token(t *testing.T, key jwk.Key, edit func(b *jwt.Builder)) string {
	t.Helper()
	now := time.Now()
	b := jwt.NewBuilder().Issuer(is.srv.URL).Subject("alice").Audience([]string{resource}).
		IssuedAt(now).Expiration(now.Add(time.Hour)).Claim("scope", "mcp:use other").
		Claim("groups", []string{"ops"})
	if edit != nil {
		edit(b)
	}
	tok, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	s, err := jwt.Sign(tok, jwt.WithKey(jwa.RS256(), key))
	if err != nil {
		t.Fatal(err)
	}
	return string(s)
}

const resource = "http://mcpx.test/mcp"

func newAuth(t *testing.T, is *issuer, scopes ...string) *Authenticator {
	t.Helper()
	a, err := New(Config{
		Resource: resource,
		Scopes:   scopes,
		Tokens:   []StaticToken{{Name: "ci", SHA256: TokenHash("s3cret-token"), Scopes: scopes}},
		JWT:      &JWTConfig{Issuer: is.srv.URL},
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// do sends one request through the middleware; seen is the principal the
// handler got, nil when it was not reached.
func do(a *Authenticator, header ...string) (rec *httptest.ResponseRecorder, seen *Principal) {
	h := a.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = From(r.Context()) }))
	r := httptest.NewRequest("POST", "http://mcpx.test/mcp", strings.NewReader("{}"))
	for _, v := range header {
		r.Header.Add("Authorization", v)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec, seen
}

func TestJWTChecks(t *testing.T) {
	is := newIssuer(t)
	a := newAuth(t, is)
	other := rsaKey(t, "k1") // same kid, other key: a forged signature
	stranger := rsaKey(t, "k9")
	now := time.Now()
	cases := []struct {
		name   string
		header []string
		status int
		code   string // error= in WWW-Authenticate, "" for none
	}{
		{"valid", []string{"Bearer " + is.token(t, is.key, nil)}, 200, ""},
		{"expired", []string{"Bearer " + is.token(t, is.key, func(b *jwt.Builder) { b.Expiration(now.Add(-time.Hour)) })}, 401, "invalid_token"},
		{"not yet valid", []string{"Bearer " + is.token(t, is.key, func(b *jwt.Builder) { b.NotBefore(now.Add(time.Hour)) })}, 401, "invalid_token"},
		{"no expiry", []string{"Bearer " + noExp(t, is)}, 401, "invalid_token"},
		{"wrong issuer", []string{"Bearer " + is.token(t, is.key, func(b *jwt.Builder) { b.Issuer("https://evil.example") })}, 401, "invalid_token"},
		{"wrong audience", []string{"Bearer " + is.token(t, is.key, func(b *jwt.Builder) { b.Audience([]string{"http://other/mcp"}) })}, 401, "invalid_token"},
		{"bad signature", []string{"Bearer " + is.token(t, other, nil)}, 401, "invalid_token"},
		{"unknown key id", []string{"Bearer " + is.token(t, stranger, nil)}, 401, "invalid_token"},
		{"alg none", []string{"Bearer " + algNone(is)}, 401, "invalid_token"},
		{"missing", nil, 401, ""},
		{"basic scheme", []string{"Basic dXNlcjpwYXNz"}, 401, ""},
		{"empty bearer", []string{"Bearer "}, 400, "invalid_request"},
		{"bad characters", []string{"Bearer a,b"}, 400, "invalid_request"},
		{"two headers", []string{"Bearer a", "Bearer b"}, 400, "invalid_request"},
		{"unknown opaque token", []string{"Bearer nope"}, 401, "invalid_token"},
		{"static token", []string{"Bearer s3cret-token"}, 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec, seen := do(a, c.header...)
			if rec.Code != c.status {
				t.Fatalf("status %d, want %d (%s)", rec.Code, c.status, rec.Body)
			}
			www := rec.Header().Get("WWW-Authenticate")
			if c.status == 200 {
				if seen == nil || www != "" {
					t.Fatalf("passed without principal or with a challenge: %v %q", seen, www)
				}
				return
			}
			if seen != nil {
				t.Fatal("the handler ran for a refused request")
			}
			if !strings.HasPrefix(www, `Bearer resource_metadata="http://mcpx.test/.well-known/oauth-protected-resource/mcp"`) {
				t.Fatalf("WWW-Authenticate = %q", www)
			}
			if got := param(www, "error"); got != c.code {
				t.Fatalf("error=%q, want %q (%s)", got, c.code, www)
			}
		})
	}
}

// param is a parameter of a WWW-Authenticate challenge.
func param(www, name string) string {
	i := strings.Index(www, " "+name+`="`)
	if i < 0 {
		return ""
	}
	rest := www[i+len(name)+3:]
	return rest[:strings.IndexByte(rest, '"')]
}

func noExp(t *testing.T, is *issuer) string {
	tok, _ := jwt.NewBuilder().Issuer(is.srv.URL).Subject("alice").Audience([]string{resource}).Build()
	s, err := jwt.Sign(tok, jwt.WithKey(jwa.RS256(), is.key))
	if err != nil {
		t.Fatal(err)
	}
	return string(s)
}

// algNone is a token with "alg": "none" and no signature, every claim
// otherwise valid.
func algNone(is *issuer) string {
	enc := base64.RawURLEncoding.EncodeToString
	h := enc([]byte(`{"alg":"none","typ":"JWT","kid":"k1"}`))
	c, _ := json.Marshal(map[string]any{"iss": is.srv.URL, "sub": "alice", "aud": resource, "exp": time.Now().Add(time.Hour).Unix()})
	return h + "." + enc(c) + "."
}

func TestPrincipalClaims(t *testing.T) {
	is := newIssuer(t)
	a := newAuth(t, is)
	_, p := do(a, "Bearer "+is.token(t, is.key, nil))
	if p == nil || p.ID() != "sub:alice" || p.Kind != "jwt" || len(p.Groups) != 1 || p.Groups[0] != "ops" ||
		len(p.Scopes) != 2 || p.Scopes[0] != "mcp:use" || p.Expires.IsZero() {
		t.Fatalf("principal %+v", p)
	}
	_, p = do(a, "Bearer s3cret-token")
	if p == nil || p.ID() != "token:ci" {
		t.Fatalf("static principal %+v", p)
	}
}

func TestScopes(t *testing.T) {
	is := newIssuer(t)
	a := newAuth(t, is, "mcp:use")
	if rec, _ := do(a, "Bearer "+is.token(t, is.key, nil)); rec.Code != 200 {
		t.Fatalf("token with the scope: %d", rec.Code)
	}
	rec, seen := do(a, "Bearer "+is.token(t, is.key, func(b *jwt.Builder) { b.Claim("scope", "read") }))
	www := rec.Header().Get("WWW-Authenticate")
	if rec.Code != 403 || seen != nil || param(www, "error") != "insufficient_scope" || param(www, "scope") != "mcp:use" {
		t.Fatalf("status %d, %q", rec.Code, www)
	}
	// A 401 names the scopes too, so a client asks for them at once.
	rec, _ = do(a)
	if rec.Code != 401 || param(rec.Header().Get("WWW-Authenticate"), "scope") != "mcp:use" {
		t.Fatalf("401 challenge %q", rec.Header().Get("WWW-Authenticate"))
	}
}

// A verified token is remembered: the keys are fetched once for many
// requests, and it still expires on time.
func TestVerifiedTokensCached(t *testing.T) {
	is := newIssuer(t)
	a := newAuth(t, is)
	tok := is.token(t, is.key, func(b *jwt.Builder) { b.Expiration(time.Now().Add(time.Minute)) })
	for range 20 {
		if rec, _ := do(a, "Bearer "+tok); rec.Code != 200 {
			t.Fatal(rec.Code)
		}
	}
	if n := is.jwksHits.Load(); n != 1 {
		t.Fatalf("keys fetched %d times, want 1", n)
	}
	a.now = func() time.Time { return time.Now().Add(2 * time.Minute) }
	if rec, _ := do(a, "Bearer "+tok); rec.Code != 401 {
		t.Fatalf("cached token past its expiry: %d", rec.Code)
	}
}

// The issuer rotates its key: a token with the new kid fetches the keys
// again and passes.
func TestKeyRotation(t *testing.T) {
	is := newIssuer(t)
	a := newAuth(t, is)
	if rec, _ := do(a, "Bearer "+is.token(t, is.key, nil)); rec.Code != 200 {
		t.Fatal(rec.Code)
	}
	next := rsaKey(t, "k2")
	pub, _ := next.PublicKey()
	is.public.AddKey(pub)
	a.now = func() time.Time { return time.Now().Add(keysMinInterval + time.Second) }
	if rec, _ := do(a, "Bearer "+is.token(t, next, nil)); rec.Code != 200 {
		t.Fatalf("rotated key: %d %s", rec.Code, rec.Header().Get("WWW-Authenticate"))
	}
}

func TestMetadataDocument(t *testing.T) {
	is := newIssuer(t)
	a := newAuth(t, is, "mcp:use")
	rec := httptest.NewRecorder()
	a.Metadata().ServeHTTP(rec, httptest.NewRequest("GET", "http://mcpx.test"+WellKnown+"/mcp", nil))
	var doc map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil || rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	// RFC 9728 section 2: resource is REQUIRED; the others as mcpx fills them.
	if doc["resource"] != resource {
		t.Fatalf("resource %v", doc["resource"])
	}
	if as, _ := doc["authorization_servers"].([]any); len(as) != 1 || as[0] != is.srv.URL {
		t.Fatalf("authorization_servers %v", doc["authorization_servers"])
	}
	if sc, _ := doc["scopes_supported"].([]any); len(sc) != 1 || sc[0] != "mcp:use" {
		t.Fatalf("scopes_supported %v", doc["scopes_supported"])
	}
	if bm, _ := doc["bearer_methods_supported"].([]any); len(bm) != 1 || bm[0] != "header" {
		t.Fatalf("bearer_methods_supported %v", doc["bearer_methods_supported"])
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatal(ct)
	}
}

func TestDiscoveryNamesAnotherIssuer(t *testing.T) {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"issuer": "https://elsewhere", "jwks_uri": srv.URL + "/jwks"})
	})
	a, err := New(Config{Resource: resource, JWT: &JWTConfig{Issuer: srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := do(a, "Bearer a.b.c")
	if rec.Code != 401 || !strings.Contains(rec.Body.String(), "names the issuer") {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}

func TestNewRefusesEmptyConfig(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Fatal("no tokens and no jwt accepted")
	}
	if _, err := New(Config{Tokens: []StaticToken{{Name: "a"}, {Name: "a"}}}); err == nil {
		t.Fatal("two tokens of one name accepted")
	}
}
