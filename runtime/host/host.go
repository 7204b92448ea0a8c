// Package host runs one server over a transport until it is told to stop:
// what `mcpx serve`, `mcpx stdio` and `mcpx-fixture` share.
package host

import (
	"context"
	"io"
	"log/slog"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/config"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/tasks"
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
	// Tasks are how the edge holds tasks (zero: its defaults).
	Tasks edge.TaskOptions
}

func (c Config) edge() *edge.Edge {
	return &edge.Edge{
		Server: &server.Server{NS: c.NS, Info: c.Info, Instructions: c.Instructions, TTLMs: c.TTLMs},
		Log:    c.Log,
		Tasks:  c.Tasks,
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
	return streamhttp.ListenAndServe(ctx, addr, h, ready)
}

// TaskOptions are the edge's task settings from a config's mcpx block.
func TaskOptions(t config.TaskSettings) edge.TaskOptions {
	return edge.TaskOptions{
		Runner: &tasks.Runner{Store: &tasks.Memory{Max: t.Max}, TTL: t.TTL},
		Eager:  t.Eager, After: t.After,
	}
}
