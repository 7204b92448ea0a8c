// Package auth makes mcpx an OAuth 2.0 resource server on Streamable HTTP:
// every request to /mcp carries a bearer token, which is a static token of
// the config (compared by SHA-256) or a JWT access token from a configured
// issuer (signature, issuer, expiry, audience bound to mcpx's own resource
// URL, required scopes). A request without valid credentials gets 401 with
// a WWW-Authenticate challenge naming the Protected Resource Metadata
// document (RFC 9728), which [Authenticator.Metadata] serves; a valid token
// lacking a scope gets 403 insufficient_scope (RFC 6750 section 3.1).
//
// What passes is a [Principal] in the request's context ([From]): the
// gateway binds state to it (sessions, requestState, tasks) and filters
// what it shows by the config's access rules ([Policy]).
//
// stdio is not authenticated: the process that started mcpx is trusted.
package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Principal is who a request comes from.
type Principal struct {
	// Kind is "token" for a static token of the config, "jwt" for an
	// access token of the issuer.
	Kind string
	// Name is the static token's name, or the JWT's subject (sub).
	Name string
	// Groups are the values of the configured groups claim (JWT only).
	Groups []string
	// Scopes the token grants.
	Scopes []string
	// Expires is when the credential stops being valid; zero for a static
	// token.
	Expires time.Time
}

// ID names the principal in one string, stable across requests and
// replicas: "token:<name>" or "sub:<subject>". State bound to a principal
// (a legacy session, a requestState, a task) records this.
func (p *Principal) ID() string {
	if p == nil {
		return ""
	}
	if p.Kind == "token" {
		return "token:" + p.Name
	}
	return "sub:" + p.Name
}

type principalKey struct{}

// With returns ctx carrying p.
func With(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// From is the principal of the request ctx belongs to, or nil when mcpx
// authenticates no one (no auth block, or stdio).
func From(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}

// Owner is the ID of the request's principal, "" without one: what state
// records as its owner.
func Owner(ctx context.Context) string { return From(ctx).ID() }

// Config is the "auth" member of the config's top-level mcpx block. At
// least one of Tokens and JWT is set.
type Config struct {
	// Resource is mcpx's own resource URL, the audience a JWT must name
	// and the "resource" of the metadata document, such as
	// "https://mcp.example.com/mcp". "" means the URL mcpx listens on.
	Resource string
	// AuthorizationServers are listed in the metadata document; "" entries
	// are not allowed. Empty means the JWT issuer, if any.
	AuthorizationServers []string
	// Scopes are required of every request (each one).
	Scopes []string
	// Tokens are static bearer tokens.
	Tokens []StaticToken
	// JWT, when set, accepts access tokens of one issuer.
	JWT *JWTConfig
}

// StaticToken is a bearer token given in the config, by its SHA-256 so the
// file holds no secret, or as the token itself (from ${VAR}).
type StaticToken struct {
	Name   string
	SHA256 [32]byte
	Scopes []string
}

// TokenHash is the SHA-256 a StaticToken holds for the token s.
func TokenHash(s string) [32]byte { return sha256.Sum256([]byte(s)) }

// Authenticator checks the credentials of HTTP requests. Create it with
// [New].
type Authenticator struct {
	cfg    Config
	tokens []StaticToken
	jwt    *jwtVerifier
	// now is the clock; tests set it.
	now func() time.Time
}

// New checks c and returns its Authenticator. An issuer is not contacted
// until the first JWT arrives, so mcpx starts while its issuer is down.
func New(c Config) (*Authenticator, error) {
	if len(c.Tokens) == 0 && c.JWT == nil {
		return nil, fmt.Errorf("auth: give static tokens, a jwt issuer, or both")
	}
	for i, t := range c.Tokens {
		if t.Name == "" {
			return nil, fmt.Errorf("auth: token %d has no name; the name is how logs and access rules refer to it", i)
		}
		for _, u := range c.Tokens[:i] {
			if u.Name == t.Name {
				return nil, fmt.Errorf("auth: two tokens are named %q", t.Name)
			}
		}
	}
	a := &Authenticator{cfg: c, tokens: c.Tokens, now: time.Now}
	if c.JWT != nil {
		v, err := newJWTVerifier(*c.JWT)
		if err != nil {
			return nil, err
		}
		a.jwt = v
	}
	return a, nil
}

// failure is why a request is not let in, as RFC 6750 says it.
type failure struct {
	status int    // 400, 401 or 403
	code   string // "", invalid_request, invalid_token, insufficient_scope
	desc   string
}

func (f *failure) Error() string { return f.desc }

// authenticate finds the principal of r, or why there is none.
func (a *Authenticator) authenticate(r *http.Request) (*Principal, *failure) {
	h := r.Header.Values("Authorization")
	if len(h) == 0 {
		return nil, &failure{status: http.StatusUnauthorized, desc: "no credentials: send an Authorization: Bearer header"}
	}
	if len(h) > 1 {
		return nil, &failure{status: http.StatusBadRequest, code: "invalid_request", desc: "more than one Authorization header"}
	}
	scheme, token, ok := strings.Cut(h[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		// Another scheme (Basic, ...) is not a bearer credential at all:
		// the challenge says which scheme is expected.
		return nil, &failure{status: http.StatusUnauthorized, desc: "the Authorization header is not a Bearer token"}
	}
	token = strings.TrimLeft(token, " ")
	if token == "" || !b64token(token) {
		return nil, &failure{status: http.StatusBadRequest, code: "invalid_request", desc: "the Bearer token is malformed"}
	}
	// A JWT-shaped token goes to the issuer's check first: hashing a
	// kilobyte of JWT for the static tokens would cost more than finding
	// it among the verified ones.
	jwtShaped := a.jwt != nil && strings.Count(token, ".") == 2
	var jwtErr error
	if jwtShaped {
		p, err := a.jwt.verify(r.Context(), token, a.audience(r), a.now())
		if err == nil {
			return p, nil
		}
		jwtErr = err
	}
	if p := a.static(token); p != nil {
		return p, nil
	}
	if jwtErr != nil {
		return nil, &failure{status: http.StatusUnauthorized, code: "invalid_token", desc: jwtErr.Error()}
	}
	return nil, &failure{status: http.StatusUnauthorized, code: "invalid_token", desc: "the token is not one mcpx accepts"}
}

// b64token is RFC 6750's b64token syntax: what a bearer token may hold
// (letters, digits, "-._~+/", then "=" padding only).
func b64token(s string) bool {
	i := 0
	for i < len(s) && tokenChar[s[i]] {
		i++
	}
	for i < len(s) && s[i] == '=' {
		i++
	}
	return i == len(s)
}

// tokenChar is a table: a token is checked byte by byte on every request.
var tokenChar = func() (t [256]bool) {
	for c := range 256 {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~+/", byte(c)) >= 0
	}
	return t
}()

// static finds the static token s, comparing hashes in constant time so
// the time taken says nothing about how close a guess was.
func (a *Authenticator) static(s string) *Principal {
	h := TokenHash(s)
	var found *StaticToken
	for i := range a.tokens {
		if subtle.ConstantTimeCompare(h[:], a.tokens[i].SHA256[:]) == 1 {
			found = &a.tokens[i]
		}
	}
	if found == nil {
		return nil
	}
	return &Principal{Kind: "token", Name: found.Name, Scopes: found.Scopes}
}

// Resource is mcpx's resource URL for r: the configured one, else the URL
// r was sent to.
func (a *Authenticator) Resource(r *http.Request) string {
	if a.cfg.Resource != "" {
		return a.cfg.Resource
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/mcp"
}

func (a *Authenticator) audience(r *http.Request) string { return a.Resource(r) }

// MetadataURL is where the Protected Resource Metadata of the resource
// lives: the well-known path with the resource's path appended (RFC 9728
// section 3.1).
func (a *Authenticator) MetadataURL(r *http.Request) string {
	res := a.Resource(r)
	scheme, rest, _ := strings.Cut(res, "://")
	host, path, _ := strings.Cut(rest, "/")
	u := scheme + "://" + host + WellKnown
	if path != "" {
		u += "/" + path
	}
	return u
}

// Middleware lets through requests with valid credentials, with their
// principal in the context, and answers the others.
func (a *Authenticator) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, f := a.authenticate(r)
		if f == nil {
			if missing := a.missingScopes(p); len(missing) > 0 {
				f = &failure{status: http.StatusForbidden, code: "insufficient_scope",
					desc: "the token lacks the scope " + strings.Join(missing, " ")}
			}
		}
		if f != nil {
			a.challenge(w, r, f)
			return
		}
		next.ServeHTTP(w, r.WithContext(With(r.Context(), p)))
	})
}

func (a *Authenticator) missingScopes(p *Principal) []string {
	var missing []string
	for _, s := range a.cfg.Scopes {
		if !slices.Contains(p.Scopes, s) {
			missing = append(missing, s)
		}
	}
	return missing
}

// challenge writes the 400, 401 or 403 with its WWW-Authenticate header
// (RFC 6750 section 3, RFC 9728 section 5.1) and an OAuth error body.
func (a *Authenticator) challenge(w http.ResponseWriter, r *http.Request, f *failure) {
	var b strings.Builder
	b.WriteString(`Bearer resource_metadata="`)
	b.WriteString(a.MetadataURL(r))
	b.WriteByte('"')
	if f.code != "" {
		fmt.Fprintf(&b, `, error="%s", error_description="%s"`, f.code, quoteSafe(f.desc))
	}
	if len(a.cfg.Scopes) > 0 && (f.code == "insufficient_scope" || f.status == http.StatusUnauthorized) {
		fmt.Fprintf(&b, `, scope="%s"`, strings.Join(a.cfg.Scopes, " "))
	}
	w.Header().Set("WWW-Authenticate", b.String())
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(f.status)
	body := map[string]string{"error": f.code, "error_description": f.desc}
	if f.code == "" {
		body["error"] = "unauthorized"
	}
	_ = json.NewEncoder(w).Encode(body)
}

// quoteSafe keeps a description inside its quoted-string: RFC 6750 allows
// printable ASCII except '"' and '\'.
func quoteSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return '\''
		}
		return r
	}, s)
}
