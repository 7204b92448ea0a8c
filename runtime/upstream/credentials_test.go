package upstream

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// tokenEndpoint issues token-N for the client credentials it knows, each
// valid for life; valid reports whether a token is the current one.
type tokenEndpoint struct {
	srv   *httptest.Server
	life  int // expires_in, seconds
	hits  atomic.Int32
	mu    sync.Mutex
	valid map[string]bool
}

func newTokenEndpoint(t *testing.T, life int) *tokenEndpoint {
	te := &tokenEndpoint{life: life, valid: map[string]bool{}}
	te.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		id, secret, _ := r.BasicAuth()
		if id == "" {
			id, secret = r.Form.Get("client_id"), r.Form.Get("client_secret")
		}
		if id != "mcpx" || secret != "hunter2-secret" || r.Form.Get("grant_type") != "client_credentials" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(401)
			json.NewEncoder(w).Encode(map[string]string{"error": "invalid_client"})
			return
		}
		n := te.hits.Add(1)
		tok := fmt.Sprintf("token-%d", n)
		te.mu.Lock()
		te.valid[tok] = true
		te.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": te.life, "scope": r.Form.Get("scope")})
	}))
	t.Cleanup(te.srv.Close)
	return te
}

func (te *tokenEndpoint) revoke(tok string) {
	te.mu.Lock()
	defer te.mu.Unlock()
	delete(te.valid, tok)
}

// protected answers 200 with the token it got when that token is valid,
// else 401.
func protected(t *testing.T, te *tokenEndpoint) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		te.mu.Lock()
		ok := te.valid[tok]
		te.mu.Unlock()
		if !ok {
			w.WriteHeader(401)
			return
		}
		body := new(strings.Builder)
		fmt.Fprint(body, tok)
		w.Write([]byte(body.String()))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := c.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b := new(strings.Builder)
	buf := make([]byte, 512)
	n, _ := resp.Body.Read(buf)
	b.Write(buf[:n])
	return resp.StatusCode, b.String()
}

func creds(te *tokenEndpoint) ClientCredentials {
	return ClientCredentials{TokenURL: te.srv.URL, ClientID: "mcpx", ClientSecret: "hunter2-secret", Scopes: []string{"mcp"}}
}

// TestCredentialsCached: one token serves many requests.
func TestCredentialsCached(t *testing.T) {
	te := newTokenEndpoint(t, 3600)
	up := protected(t, te)
	c := &http.Client{Transport: CredentialsTransport(creds(te), nil)}
	for range 10 {
		if st, body := get(t, c, up.URL); st != 200 || body != "token-1" {
			t.Fatalf("%d %q", st, body)
		}
	}
	if n := te.hits.Load(); n != 1 {
		t.Errorf("%d token requests for 10 calls", n)
	}
}

// TestCredentialsRefreshedBeforeExpiry: a token about to expire is
// replaced before it is sent.
func TestCredentialsRefreshedBeforeExpiry(t *testing.T) {
	te := newTokenEndpoint(t, int(refreshBefore/time.Second)+1) // stale a second after it is issued
	up := protected(t, te)
	c := &http.Client{Transport: CredentialsTransport(creds(te), nil)}
	get(t, c, up.URL)
	time.Sleep(1100 * time.Millisecond)
	if st, body := get(t, c, up.URL); st != 200 || body != "token-2" {
		t.Fatalf("%d %q: the stale token was sent", st, body)
	}
}

// TestCredentials401RefreshesOnce: a token the upstream refuses is
// replaced once and the request sent again, body and all.
func TestCredentials401RefreshesOnce(t *testing.T) {
	te := newTokenEndpoint(t, 3600)
	up := protected(t, te)
	c := &http.Client{Transport: CredentialsTransport(creds(te), nil)}
	get(t, c, up.URL)
	te.revoke("token-1")
	if st, body := get(t, c, up.URL); st != 200 || body != "token-2" {
		t.Fatalf("%d %q", st, body)
	}
	// Refused again at once: one retry, then the 401 is the answer.
	te.revoke("token-2")
	te.life = 3600
	rt := CredentialsTransport(creds(te), nil).(*credentialsTransport)
	rt.src = nil
	deny := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(401) }))
	defer deny.Close()
	before := te.hits.Load()
	if st, _ := get(t, &http.Client{Transport: rt}, deny.URL); st != 401 {
		t.Fatalf("%d", st)
	}
	if n := te.hits.Load() - before; n != 2 {
		t.Errorf("%d token requests for a refused call, want 2 (the first and one refresh)", n)
	}
}

// TestCredentialsErrorKeepsTheSecret: a token endpoint that refuses mcpx
// is an error naming the endpoint, not the secret.
func TestCredentialsErrorKeepsTheSecret(t *testing.T) {
	te := newTokenEndpoint(t, 3600)
	cc := creds(te)
	cc.ClientSecret = "wrong-secret-value"
	c := &http.Client{Transport: CredentialsTransport(cc, nil)}
	_, err := c.Get(te.srv.URL)
	if err == nil || !strings.Contains(err.Error(), "invalid_client") || strings.Contains(err.Error(), "wrong-secret-value") {
		t.Fatalf("%v", err)
	}
}
