package upstream

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// ClientCredentials is how mcpx gets its own token for an HTTP upstream:
// the OAuth 2.0 client credentials grant (RFC 6749 section 4.4). The
// client's token is never passed on (the MCP authorization page forbids
// token passthrough); this token is mcpx's, for that upstream.
type ClientCredentials struct {
	TokenURL     string
	ClientID     string
	ClientSecret string
	Scopes       []string
	// Resource, when set, is sent as the resource parameter (RFC 8707),
	// binding the token to the upstream.
	Resource string
}

// refreshBefore is how long before its expiry a token is fetched again.
const refreshBefore = 30 * time.Second

// CredentialsTransport returns a RoundTripper that sends every request
// over base (nil: mcpx's own transport) with a bearer token of cc: fetched
// when first needed, cached, and fetched again before it expires. An
// upstream that answers 401 gets one retry with a fresh token.
func CredentialsTransport(cc ClientCredentials, base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = ownTransport()
	}
	conf := &clientcredentials.Config{
		ClientID:     cc.ClientID,
		ClientSecret: cc.ClientSecret,
		TokenURL:     cc.TokenURL,
		Scopes:       cc.Scopes,
	}
	if cc.Resource != "" {
		conf.EndpointParams = url.Values{"resource": {cc.Resource}}
	}
	return &credentialsTransport{base: base, conf: conf, tokenHost: hostOf(cc.TokenURL)}
}

type credentialsTransport struct {
	base      http.RoundTripper
	conf      *clientcredentials.Config
	tokenHost string

	mu  sync.Mutex
	src oauth2.TokenSource // caching; replaced to force a fetch
}

// fetchTimeout bounds one request to the token endpoint.
const fetchTimeout = 10 * time.Second

func (t *credentialsTransport) source() oauth2.TokenSource {
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, &http.Client{Timeout: fetchTimeout})
	return oauth2.ReuseTokenSourceWithExpiry(nil, t.conf.TokenSource(ctx), refreshBefore)
}

// token is the current token; stale names a token the upstream refused,
// which is then replaced unless another request replaced it already.
func (t *credentialsTransport) token(stale string) (*oauth2.Token, error) {
	t.mu.Lock()
	if t.src == nil {
		t.src = t.source()
	}
	src := t.src
	t.mu.Unlock()
	tok, err := src.Token()
	if err == nil && stale != "" && tok.AccessToken == stale {
		t.mu.Lock()
		if t.src == src {
			t.src = t.source()
		}
		src = t.src
		t.mu.Unlock()
		tok, err = src.Token()
	}
	if err != nil {
		// The error names the endpoint and what it said, never the
		// client secret.
		return nil, fmt.Errorf("mcpx could not get a token for the upstream from %s: %v", t.tokenHost, describeTokenError(err))
	}
	return tok, nil
}

func describeTokenError(err error) string {
	if re, ok := err.(*oauth2.RetrieveError); ok {
		if re.ErrorCode != "" {
			return "the token endpoint answered " + re.ErrorCode
		}
		if re.Response != nil {
			return "the token endpoint answered " + re.Response.Status
		}
	}
	return err.Error()
}

func (t *credentialsTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	tok, err := t.token("")
	if err != nil {
		return nil, err
	}
	resp, err := t.base.RoundTrip(authorized(req, tok))
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	// Refused: the token was revoked or expired early. Once more with a
	// fresh one, if the request can be sent again.
	if req.Body != nil && req.GetBody == nil {
		return resp, nil
	}
	fresh, err := t.token(tok.AccessToken)
	if err != nil {
		return resp, nil // the upstream's 401 says more than our failure
	}
	retry := authorized(req, fresh)
	if req.GetBody != nil {
		if retry.Body, err = req.GetBody(); err != nil {
			return resp, nil
		}
	}
	resp.Body.Close()
	return t.base.RoundTrip(retry)
}

func authorized(req *http.Request, tok *oauth2.Token) *http.Request {
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	return r
}

func hostOf(u string) string {
	if p, err := url.Parse(u); err == nil && p.Host != "" {
		return p.Host
	}
	return "the token endpoint"
}
