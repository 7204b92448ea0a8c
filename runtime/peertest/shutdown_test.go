package peertest

import (
	"context"
	"net"
	"net/url"
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
// busy for its first 5 seconds; streamhttp.ListenAndServe used to wait
// ShutdownTimeout (also 5 seconds) for it and report requests cut off, so
// `mcpx serve` exited 1 on Ctrl-C. It now closes such connections when
// shutdown begins.
func TestShutdownWithAnUnusedConnection(t *testing.T) {
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
