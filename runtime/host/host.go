// Package host runs one server over a transport until it is told to stop:
// what `mcpx serve`, `mcpx stdio` and `mcpx-fixture` share.
package host

import (
	"context"
	"io"
	"log/slog"
	"net/http"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/metrics"
	"github.com/mcpx-dev/mcpx/runtime/observe"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/transport/stdio"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
)

// Config says what to serve. The zero value of each field is documented.
type Config struct {
	NS           server.Namespace
	Info         mcp.Implementation // the server's identity (serverInfo)
	Instructions string             // "" sends none
	TTLMs        int64              // caching hint on 2026-07-28 lists and reads; 0 = immediately stale
	Log          *slog.Logger       // mcpx's own log; nil = slog.Default() (stderr)
	// HTTP holds the Streamable HTTP endpoint's limits; its zero fields
	// take streamhttp's defaults, and a nil Logger is Log.
	HTTP streamhttp.Options
	// Metrics, if set, observes every client request; over HTTP it also
	// counts the bytes clients send and receive and reads the endpoint's
	// sessions and streams when scraped.
	Metrics *metrics.Metrics
	// Observer, if set, is told of every client request too (traces).
	Observer observe.Observer
}

func (c Config) edge() *edge.Edge {
	var m observe.Observer
	if c.Metrics != nil {
		m = c.Metrics
	}
	return &edge.Edge{
		Server:   &server.Server{NS: c.NS, Info: c.Info, Instructions: c.Instructions, TTLMs: c.TTLMs},
		Log:      c.Log,
		Observer: observe.Tee(m, c.Observer),
	}
}

// Stdio serves on r and w (stdin and stdout) until r ends or ctx is done.
func Stdio(ctx context.Context, c Config, r io.Reader, w io.Writer) error {
	e := c.edge()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go e.WatchChanges(ctx)
	return stdio.Serve(ctx, e, r, w, stdio.Options{})
}

// HTTP serves Streamable HTTP at http://addr/mcp ("" = 127.0.0.1:7777)
// until ctx is done, then shuts down gracefully; ready gets the URL once
// connections are accepted.
func HTTP(ctx context.Context, c Config, addr string, ready func(url string)) error {
	e := c.edge()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go e.WatchChanges(wctx)
	opt := c.HTTP
	if opt.Logger == nil {
		opt.Logger = c.Log
	}
	h := streamhttp.New(e, opt)
	defer h.Close()
	var served http.Handler = h
	if c.Metrics != nil {
		c.Metrics.WatchSessions(func() int { return h.Stats().Sessions }, func() int { return h.Stats().Streams })
		served = c.Metrics.CountHTTP(h)
	}
	return streamhttp.ListenAndServe(ctx, addr, served, ready)
}
