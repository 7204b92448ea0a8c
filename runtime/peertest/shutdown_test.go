package peertest

import (
	"context"
	"net"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/demo"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
)

// TestShutdownWithAnUnusedConnection: a client may hold a connection on
// which it has sent nothing yet. Go's http.Transport pools a connection it
// dialed for a request that another connection served (go-sdk does this
// when a call is cancelled and the next requests race for connections);
// browsers preconnect. No request is running on it, so a graceful shutdown
// must not wait for it, let alone report requests cut off.
//
// net/http's Shutdown treats a connection that has not sent a request as
// busy for its first 5 seconds, and streamhttp.ListenAndServe gives up at
// ShutdownTimeout, also 5 seconds: it returns "requests still running after
// 5s were cut off", and `mcpx serve` exits 1 on Ctrl-C. The other tests
// close their clients' idle connections before shutting down to stay clear
// of this. PEERTEST_KNOWN_BUGS=1 runs it.
func TestShutdownWithAnUnusedConnection(t *testing.T) {
	if os.Getenv("PEERTEST_KNOWN_BUGS") == "" {
		t.Skip("mcpx bug: streamhttp.ListenAndServe waits ShutdownTimeout (5s) for a connection that never sent a request, then reports requests cut off (runtime/transport/streamhttp/serve.go, Shutdown at line 75)")
	}
	t.Parallel()
	e := &edge.Edge{Server: &server.Server{NS: demo.New(), Info: serverInfo}}
	h := streamhttp.New(e, streamhttp.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan string, 1)
	served := make(chan error, 1)
	go func() { served <- streamhttp.ListenAndServe(ctx, "127.0.0.1:0", h, func(u string) { ready <- u }) }()
	u, err := url.Parse(<-ready)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	cancel()
	err = <-served
	if took := time.Since(start); err != nil || took > time.Second {
		t.Errorf("shutdown with an unused connection open took %s and returned %v; want nil at once", took.Round(time.Millisecond), err)
	}
}
