package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/lestrrat-go/jwx/v3/jwt"
)

// JWTConfig accepts the access tokens of one issuer.
type JWTConfig struct {
	// Issuer is the authorization server's issuer identifier; a token's
	// iss must equal it.
	Issuer string
	// JWKSURL is where the issuer's keys are. "" means discovery: the
	// jwks_uri of the issuer's OpenID Provider metadata
	// (/.well-known/openid-configuration), else of its OAuth 2.0
	// Authorization Server Metadata (RFC 8414).
	JWKSURL string
	// Audience a token's aud must contain; "" means the Resource of
	// [Config] (the URL mcpx serves), as RFC 8707 and the MCP
	// authorization page bind a token to its resource.
	Audience string
	// GroupsClaim names the claim whose strings become the principal's
	// Groups; "" means "groups".
	GroupsClaim string
	// Client fetches metadata and keys; nil means a client with a 10 s
	// timeout.
	Client *http.Client
}

// The verifier's fixed choices.
const (
	clockSkew       = 30 * time.Second // tolerated between mcpx's clock and the issuer's
	keysMaxAge      = 10 * time.Minute // keys are fetched again after this
	keysMinInterval = 30 * time.Second // an unknown kid fetches again at most this often
	verifiedMax     = 10000            // tokens remembered as verified
)

// jwtVerifier checks access tokens against an issuer's keys, fetched when
// first needed and again when stale or when a token names a key id not in
// the set (the issuer rotated), no more often than keysMinInterval.
// Verified tokens are remembered until they expire (at most verifiedMax
// of them), so the hot path pays one map lookup.
type jwtVerifier struct {
	c      JWTConfig
	client *http.Client

	mu      sync.Mutex
	keys    jwk.Set
	fetched time.Time // when keys were fetched, zero before
	jwksURL string    // resolved by discovery

	verified sync.Map // token -> verifiedToken
	count    int      // entries in verified, under mu
}

func newJWTVerifier(c JWTConfig) (*jwtVerifier, error) {
	if c.Issuer == "" {
		return nil, errors.New("auth: jwt needs the issuer")
	}
	client := c.Client
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	if c.GroupsClaim == "" {
		c.GroupsClaim = "groups"
	}
	return &jwtVerifier{c: c, client: client, jwksURL: c.JWKSURL}, nil
}

// verify checks token for audience aud at now.
func (v *jwtVerifier) verify(ctx context.Context, token, aud string, now time.Time) (*Principal, error) {
	if v.c.Audience != "" {
		aud = v.c.Audience
	}
	if e, ok := v.verified.Load(token); ok {
		// The audience is part of the check: a token verified for one
		// resource URL is not thereby good for another.
		if e := e.(verifiedToken); e.aud == aud {
			if now.Before(e.p.Expires) {
				return e.p, nil
			}
			v.forget(token)
			return nil, errors.New("the token has expired")
		}
	}
	keys, err := v.keySet(ctx, now, kidOf(token))
	if err != nil {
		return nil, err
	}
	t, err := jwt.ParseString(token,
		jwt.WithKeySet(keys, jws.WithInferAlgorithmFromKey(true)),
		jwt.WithIssuer(v.c.Issuer),
		jwt.WithAudience(aud),
		jwt.WithAcceptableSkew(clockSkew),
		jwt.WithClock(jwt.ClockFunc(func() time.Time { return now })),
		jwt.WithRequiredClaim("exp"),
	)
	if err != nil {
		return nil, explain(err)
	}
	p := &Principal{Kind: "jwt"}
	p.Name, _ = t.Subject()
	if p.Name == "" {
		return nil, errors.New("the token has no subject (sub)")
	}
	p.Expires, _ = t.Expiration()
	var scope string
	if t.Get("scope", &scope) == nil {
		p.Scopes = strings.Fields(scope)
	}
	var groups []any
	if t.Get(v.c.GroupsClaim, &groups) == nil {
		for _, g := range groups {
			if s, ok := g.(string); ok {
				p.Groups = append(p.Groups, s)
			}
		}
	}
	v.remember(token, verifiedToken{aud, p})
	return p, nil
}

// explain turns the library's error into one sentence for the
// error_description: which check failed, not the token's content.
func explain(err error) error {
	switch {
	case errors.Is(err, jwt.TokenExpiredError()):
		return errors.New("the token has expired")
	case errors.Is(err, jwt.TokenNotYetValidError()):
		return errors.New("the token is not valid yet (nbf)")
	case errors.Is(err, jwt.InvalidIssuerError()):
		return errors.New("the token is from another issuer")
	case errors.Is(err, jwt.InvalidAudienceError()):
		return errors.New("the token is for another audience (aud does not name this resource)")
	case errors.Is(err, jwt.ValidateError()):
		return fmt.Errorf("the token is not valid: %v", err)
	default:
		return errors.New("the token's signature does not verify with the issuer's keys")
	}
}

// kidOf is the key id in token's protected header, "" when there is none
// or the header does not parse (Parse then says why).
func kidOf(token string) string {
	msg, err := jws.ParseString(token)
	if err != nil || len(msg.Signatures()) != 1 {
		return ""
	}
	kid, _ := msg.Signatures()[0].ProtectedHeaders().KeyID()
	return kid
}

// verifiedToken is a token that verified for aud.
type verifiedToken struct {
	aud string
	p   *Principal
}

func (v *jwtVerifier) remember(token string, e verifiedToken) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.count >= verifiedMax {
		// Full: start over rather than track recency; the next request
		// of each client verifies once more.
		v.verified.Clear()
		v.count = 0
	}
	if _, loaded := v.verified.LoadOrStore(token, e); !loaded {
		v.count++
	}
}

func (v *jwtVerifier) forget(token string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, ok := v.verified.LoadAndDelete(token); ok {
		v.count--
	}
}

// keySet is the issuer's keys, fetched again when older than keysMaxAge or
// when kid is not among them (at most every keysMinInterval).
func (v *jwtVerifier) keySet(ctx context.Context, now time.Time, kid string) (jwk.Set, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	stale := v.keys == nil || now.Sub(v.fetched) > keysMaxAge
	if !stale && kid != "" {
		if _, ok := v.keys.LookupKeyID(kid); !ok && now.Sub(v.fetched) > keysMinInterval {
			stale = true
		}
	}
	if !stale {
		return v.keys, nil
	}
	keys, err := v.fetch(ctx)
	if err != nil {
		if v.keys != nil {
			return v.keys, nil // keep serving with the keys we have
		}
		return nil, err
	}
	v.keys, v.fetched = keys, now
	return keys, nil
}

func (v *jwtVerifier) fetch(ctx context.Context) (jwk.Set, error) {
	if v.jwksURL == "" {
		u, err := v.discover(ctx)
		if err != nil {
			return nil, err
		}
		v.jwksURL = u
	}
	keys, err := jwk.Fetch(ctx, v.jwksURL, jwk.WithHTTPClient(v.client))
	if err != nil {
		return nil, fmt.Errorf("the issuer's keys could not be fetched from %s: %v", v.jwksURL, err)
	}
	return keys, nil
}

// discover reads the issuer's jwks_uri from its metadata, checking that
// the metadata names the same issuer (RFC 8414 section 3.3).
func (v *jwtVerifier) discover(ctx context.Context) (string, error) {
	base := strings.TrimSuffix(v.c.Issuer, "/")
	var errs []string
	for _, u := range []string{base + "/.well-known/openid-configuration", oauthMetadataURL(v.c.Issuer)} {
		var meta struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := v.getJSON(ctx, u, &meta); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if meta.Issuer != v.c.Issuer {
			errs = append(errs, fmt.Sprintf("%s names the issuer %q, not %q", u, meta.Issuer, v.c.Issuer))
			continue
		}
		if meta.JWKSURI == "" {
			errs = append(errs, u+" has no jwks_uri")
			continue
		}
		return meta.JWKSURI, nil
	}
	return "", fmt.Errorf("the issuer's metadata could not be read (%s); set jwt.jwksUrl", strings.Join(errs, "; "))
}

// oauthMetadataURL is RFC 8414's well-known URL: the path is inserted
// after the host.
func oauthMetadataURL(issuer string) string {
	scheme, rest, _ := strings.Cut(issuer, "://")
	host, path, _ := strings.Cut(rest, "/")
	u := scheme + "://" + host + "/.well-known/oauth-authorization-server"
	if path = strings.TrimSuffix(path, "/"); path != "" {
		u += "/" + path
	}
	return u
}

func (v *jwtVerifier) getJSON(ctx context.Context, u string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := v.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", u, resp.Status)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(out)
}
