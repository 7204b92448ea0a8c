package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// answerAll is a transport that answers every request with 200 and an
// empty body, keeping the last request.
type answerAll struct {
	last *http.Request
	resp http.Response
}

func (a *answerAll) RoundTrip(r *http.Request) (*http.Response, error) {
	a.last = r
	a.resp = http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Header: http.Header{}, Request: r}
	return &a.resp, nil
}

func testConn(t *testing.T, rawURL string, rt http.RoundTripper) *httpConn {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	h, err := dialHTTP(Spec{Name: "up", URL: rawURL, Transport: rt}, log, log, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.die)
	return h
}

// TestPostAllocations: a POST to the upstream is the message's encoding,
// its request (one http.Request, its URL and body together, the body's
// closer and GetBody) and its header map: 8. With NewRequestWithContext
// (the URL parsed again) and the Client on the first hop (its copies of
// the headers and URL, kept for a redirect) it was 16.
func TestPostAllocations(t *testing.T) {
	rt := &answerAll{}
	h := testConn(t, "http://up.example/mcp", rt)
	m := jsonrpc.Request(json.RawMessage(`7`), mcp.MethodToolsCall, json.RawMessage(`{"name":"echo"}`))
	ctx := context.Background()
	n := testing.AllocsPerRun(200, func() {
		resp, err := h.post(ctx, m, "echo")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	})
	if n > 8 {
		t.Errorf("post: %v allocations, want at most 8", n)
	}
}

// TestPostRequestAsNetHTTP: the request is NewRequestWithContext's: the
// same fields, a body net/http knows is in memory (headers and body in
// one write), GetBody giving the body again.
func TestPostRequestAsNetHTTP(t *testing.T) {
	for _, raw := range []string{"http://up.example/mcp", "http://up.example:/mcp?x=1", "http://[::1]:8080/a%20b/mcp"} {
		h := testConn(t, raw, &answerAll{})
		if h.tmpl == nil {
			t.Fatalf("%s: no direct POST", raw)
		}
		ctx := context.WithValue(context.Background(), struct{}{}, 1)
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		got, err := h.newPost(ctx, body)
		if err != nil {
			t.Fatal(err)
		}
		want, err := http.NewRequestWithContext(ctx, http.MethodPost, raw, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if got.Method != want.Method || got.URL.String() != want.URL.String() || got.Host != want.Host ||
			got.Proto != want.Proto || got.ProtoMajor != want.ProtoMajor || got.ProtoMinor != want.ProtoMinor ||
			got.ContentLength != want.ContentLength || got.Context() != ctx || got.URL == h.tmpl.URL {
			t.Errorf("%s: request %+v, want %+v", raw, got, want)
		}
		if reflect.TypeOf(got.Body) != reflect.TypeOf(want.Body) {
			t.Errorf("%s: body a %T, want %T", raw, got.Body, want.Body)
		}
		checkBodies(t, raw, got, body)
	}
	for _, raw := range []string{"http://user:pw@up.example/mcp", "::not a url"} {
		if h := testConn(t, raw, &answerAll{}); h.tmpl != nil {
			t.Errorf("%s: a direct POST, want the Client's", raw)
		}
	}
}

// checkBodies fails unless req's body, then GetBody twice, give want.
func checkBodies(t *testing.T, raw string, req *http.Request, want []byte) {
	t.Helper()
	for i, open := range []func() (io.ReadCloser, error){func() (io.ReadCloser, error) { return req.Body, nil }, req.GetBody, req.GetBody} {
		r, err := open()
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := io.ReadAll(r); !bytes.Equal(b, want) {
			t.Errorf("%s: body %d is %.80q, want %.80q", raw, i, b, want)
		}
	}
}

// TestPostRedirectFollowed: a redirect is followed as net/http's Client
// follows it: a 307 sends the body again to the new place, a 303 gets it.
func TestPostRedirectFollowed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/307":
			http.Redirect(w, r, "/end", http.StatusTemporaryRedirect)
		case "/303":
			http.Redirect(w, r, "/end", http.StatusSeeOther)
		case "/end":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, r.Method+" "+string(b)+" "+r.Header.Get("Mcp-Session-Id"))
		}
	}))
	defer srv.Close()
	// A ping, and a call whose params go in pieces (framedMin).
	long := json.RawMessage(`{"name":"echo","arguments":{"text":"` + strings.Repeat("x", framedMin) + `"}}`)
	for _, m := range []*jsonrpc.Message{
		jsonrpc.Request(json.RawMessage(`1`), mcp.MethodPing, nil),
		jsonrpc.Request(json.RawMessage(`2`), mcp.MethodToolsCall, long),
	} {
		body, _ := jsonrpc.Encode(m)
		for path, want := range map[string]string{"/307": "POST " + string(body) + " s1", "/303": "GET  s1"} {
			h := testConn(t, srv.URL+path, nil)
			h.session = "s1"
			resp, err := h.post(context.Background(), m, "")
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(got) != want {
				t.Errorf("%s %s: %.80q, want %.80q", m.Method, path, got, want)
			}
		}
	}
}

// TestFramedPost: a request with long params is sent in its pieces, with
// its length, and GetBody gives the same body again; the params are not
// copied.
func TestFramedPost(t *testing.T) {
	long := json.RawMessage(`{"name":"echo","arguments":{"text":"` + strings.Repeat("y", framedMin) + `"}}`)
	m := jsonrpc.Request(json.RawMessage(`9`), mcp.MethodToolsCall, long)
	want, _ := jsonrpc.Encode(m)
	for _, raw := range []string{"http://up.example/mcp", "http://user:pw@up.example/mcp"} {
		h := testConn(t, raw, &answerAll{})
		req, err := h.newMessagePost(context.Background(), m)
		if err != nil {
			t.Fatal(err)
		}
		if req.ContentLength != int64(len(want)) || req.URL.String() != raw {
			t.Errorf("%s: length %d, URL %s; want %d", raw, req.ContentLength, req.URL, len(want))
		}
		checkBodies(t, raw, req, want)
	}
	var p pieces = [3][]byte{[]byte("ab"), []byte("cde"), []byte("f")}
	var got []byte
	for buf := make([]byte, 2); ; {
		n, err := p.Read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
	}
	if string(got) != "abcdef" {
		t.Errorf("pieces read in twos: %q", got)
	}
}

// TestPostErrorAsClient: a request that fails is the Client's error,
// word for word.
func TestPostErrorAsClient(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	raw := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	m := jsonrpc.Request(json.RawMessage(`1`), mcp.MethodPing, nil)
	h := testConn(t, raw, nil)
	_, got := h.post(context.Background(), m, "")
	req, _ := http.NewRequest(http.MethodPost, raw, strings.NewReader("{}"))
	_, want := h.client.Do(req)
	var ue *url.Error
	if got == nil || want == nil || got.Error() != want.Error() || !errors.As(got, &ue) {
		t.Errorf("error %v, want %v", got, want)
	}
}
