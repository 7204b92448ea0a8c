package streamhttp_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
)

// TestListenAndServe: on port 0 it reports http://127.0.0.1:PORT/mcp once
// accepting, serves the handler there and 404 (plain text) elsewhere; when
// the context ends it ends held streams (a listen gets its result), lets a
// running call finish, returns nil and stops accepting.
func TestListenAndServe(t *testing.T) {
	leakcheck.Check(t)
	h := streamhttp.New(newEdge(), streamhttp.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- streamhttp.ListenAndServe(ctx, "127.0.0.1:0", h, func(u string) { urls <- u }) }()
	var url string
	select {
	case url = <-urls:
	case err := <-done:
		t.Fatalf("ListenAndServe: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("ready was not called within 5s")
	}
	if !regexp.MustCompile(`^http://127\.0\.0\.1:[1-9][0-9]*/mcp$`).MatchString(url) {
		t.Fatalf("ready URL %q", url)
	}

	resp := do(t, nil, http.MethodPost, url, nil, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	decode(t, resp, http.StatusOK)
	for _, path := range []string{"/", "/other", "/mcp/x"} {
		resp := do(t, nil, http.MethodPost, strings.TrimSuffix(url, "/mcp")+path, nil, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
			t.Errorf("%s: %d %q %s", path, resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
	}

	listen := do(t, nil, http.MethodPost, url, modern("subscriptions/listen", ""), `{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{"notifications":{},`+modernMeta+`}}`)
	listenCh := readSSE(listen.Body)
	if ack, ok := next(t, listenCh, nil); !ok || ack.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("listen ack: %+v", ack)
	}
	slow := make(chan reply, 1)
	go func() {
		resp := do(t, nil, http.MethodPost, url, modern("tools/call", "slow"), `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"slow",`+modernMeta+`}}`)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var r reply
		json.Unmarshal(b, &r)
		slow <- r
	}()
	time.Sleep(50 * time.Millisecond) // let the slow call start

	began := time.Now()
	cancel()
	if r, ok := next(t, listenCh, nil); !ok || r.Method != "notifications/cancelled" {
		t.Errorf("listen's event at shutdown: %+v (open %v)", r, ok)
	}
	if r, ok := next(t, listenCh, nil); !ok || string(r.ID) != `"L"` || r.Result == nil {
		t.Errorf("listen's last event: %+v (open %v)", r, ok)
	}
	waitEnd(t, listenCh)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ListenAndServe after a graceful shutdown: %v", err)
		}
	case <-time.After(streamhttp.ShutdownTimeout):
		t.Fatal("ListenAndServe did not return")
	}
	if d := time.Since(began); d > 2*time.Second {
		t.Errorf("shutdown took %s; held streams should not delay it", d)
	}
	if r := <-slow; r.Result == nil {
		t.Errorf("the running call was cut off: %+v", r)
	}
	if c, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")); err == nil {
		c.Close()
		t.Error("still accepting connections after shutdown")
	}
}

// TestListenAndServeAddressInUse: a listen failure is returned, and ready
// is not called.
func TestListenAndServeAddressInUse(t *testing.T) {
	leakcheck.Check(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	err = streamhttp.ListenAndServe(context.Background(), ln.Addr().String(), http.NotFoundHandler(), func(string) { t.Error("ready called") })
	if err == nil {
		t.Fatal("want an error for an address in use")
	}
}
