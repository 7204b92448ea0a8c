// Package host runs one server over a transport until it is told to stop:
// what `mcpx serve`, `mcpx stdio` and `mcpx-fixture` share.
package host

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"io"
	"log/slog"
	"net"
	"net/http"

	"github.com/mcpx-dev/mcpx/runtime/auth"
	"github.com/mcpx-dev/mcpx/runtime/cluster"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/config"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/metrics"
	"github.com/mcpx-dev/mcpx/runtime/observe"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/tasks"
	"github.com/mcpx-dev/mcpx/runtime/tasks/redisstore"
	"github.com/mcpx-dev/mcpx/runtime/tracing"
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
	// Auth, when set, is who may connect over HTTP (stdio is trusted);
	// nil lets anyone who reaches the port in.
	Auth *auth.Authenticator
	// Access is what each authenticated principal may use; nil is
	// everything.
	Access *auth.Policy
	// Reloader, for a gateway served from a config file, also serves the
	// /v1 API over HTTP (its servers; restarting one).
	Reloader *Reloader
	// APITools makes the /v1 API's operations tools of the gateway too
	// (mcpx_listServers, ...; config mcpx.apiTools).
	APITools bool
	// Metrics, if set, observes every client request; over HTTP it also
	// counts the bytes clients send and receive and reads the endpoint's
	// sessions and streams when scraped.
	Metrics *metrics.Metrics
	// Observer, if set, is told of every client request too (traces).
	Observer observe.Observer
	// Tasks are how the edge holds tasks (zero: its defaults).
	Tasks edge.TaskOptions
	// Cluster, when shared (Redis), is the replicas this one serves with:
	// legacy sessions, list changes and parked calls' retries cross it
	// (cluster.go). Nil or not shared: this process alone.
	Cluster *cluster.Cluster
}

func (c Config) edge() *edge.Edge {
	var m observe.Observer
	if c.Metrics != nil {
		m = c.Metrics
	}
	return &edge.Edge{
		Server:   &server.Server{NS: c.NS, Info: c.Info, Instructions: c.Instructions, TTLMs: c.TTLMs, Access: c.access()},
		Log:      c.Log,
		Observer: observe.Tee(m, c.Observer),
		Tasks:    c.Tasks,
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
	opt := c.HTTP
	if opt.Logger == nil {
		opt.Logger = c.Log
	}
	withCluster(wctx, c.Cluster, e, &opt, c.log()) // cluster.go
	go e.WatchChanges(wctx)
	h := streamhttp.New(e, opt)
	defer h.Close()
	mounts, err := c.serveAPI(ctx, e.Server, h)
	if err != nil {
		return err
	}
	var served http.Handler = h
	if c.Metrics != nil {
		c.Metrics.WatchSessions(func() int { return h.Stats().Sessions }, func() int { return h.Stats().Streams })
		served = closer{c.Metrics.CountHTTP(h), h.Close}
	}
	if c.Auth == nil {
		if !loopback(addr) {
			c.log().Warn("mcpx serves without authentication beyond loopback: anyone who reaches " + addr + " may use every tool; set mcpx.auth in the config")
		}
		return streamhttp.ListenAndServe(ctx, addr, tracing.Handler(served), ready, mounts...) // trace context from the headers
	}
	md := c.Auth.Metadata()
	// Traced outermost, so a refused request is a span too.
	mounts = append(mounts, streamhttp.Mount{Pattern: auth.WellKnown, Handler: md}, streamhttp.Mount{Pattern: auth.WellKnown + "/", Handler: md})
	return streamhttp.ListenAndServe(ctx, addr, tracing.Handler(closer{c.Auth.Middleware(served), h.Close}), ready, mounts...)
}

// closer is the endpoint wrapped (auth, metrics) that still closes as the endpoint
// does (ListenAndServe closes its handler at shutdown).
type closer struct {
	http.Handler
	close func()
}

func (c closer) Close() { c.close() }

func (c Config) log() *slog.Logger {
	if c.Log != nil {
		return c.Log
	}
	return slog.Default()
}

// access is the server's Access: the policy's view of the request's
// principal. A request without one (stdio, or no auth) sees everything.
func (c Config) access() func(context.Context) server.Access {
	if c.Access == nil {
		return nil
	}
	return func(ctx context.Context) server.Access {
		p := auth.From(ctx)
		if p == nil {
			return nil
		}
		return c.Access.ViewOf(p)
	}
}

// loopback reports whether addr ("host:port"; "" is the default, on
// loopback) listens on loopback only.
func loopback(addr string) bool {
	if addr == "" {
		return true
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// TaskOptions are the edge's task settings from a config's mcpx block.
func TaskOptions(t config.TaskSettings) edge.TaskOptions {
	return TaskOptionsIn(t, &tasks.Memory{Max: t.Max})
}

// TaskOptionsIn is [TaskOptions] with the tasks kept in store. A store
// other than this process's memory is shared by replicas: its tasks get
// leases of DefaultLease, so that a replica's death fails its tasks.
func TaskOptionsIn(t config.TaskSettings, store tasks.Store) edge.TaskOptions {
	r := &tasks.Runner{Store: store, TTL: t.TTL}
	if _, own := store.(*tasks.Memory); !own {
		r.Lease = DefaultLease
	}
	return edge.TaskOptions{Runner: r, Eager: t.Eager, After: t.After}
}

// DefaultLease is a shared store's task lease (tasks.Runner.Lease): a
// task whose replica died is failed within it; a replica that cannot
// reach the store for longer loses its running tasks too.
const DefaultLease = 30 * time.Second

// TaskStore is the store the --store flag names: "memory" (or ""), this
// process's own, or a Redis URL (redis://[user:password@]host:port[/db],
// rediss:// for TLS) that replicas share. A Redis that does not answer
// now is not an error: requests that need it fail saying so, until it
// does. close releases the connection.
func TaskStore(url string, max int, log *slog.Logger) (store tasks.Store, close func() error, err error) {
	if url == "" || url == "memory" {
		return &tasks.Memory{Max: max}, func() error { return nil }, nil
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, nil, fmt.Errorf("--store: %v (want memory, or redis://host:port)", err)
	}
	if log != nil {
		// go-redis's own lines (a failed dial while Redis is away) go
		// to mcpx's log, in its format, not as bare lines on stderr.
		redis.SetLogger(redisLog{log})
	}
	rdb := redis.NewClient(opt)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		log.Warn("the task store does not answer yet; requests that need it fail until it does", "store", opt.Addr, "err", err)
	}
	return redisstore.New(rdb, redisstore.Options{Max: max}), rdb.Close, nil
}

// redisLog writes go-redis's messages to mcpx's log.
type redisLog struct{ log *slog.Logger }

func (l redisLog) Printf(ctx context.Context, format string, v ...any) {
	l.log.Warn("task store (Redis): " + fmt.Sprintf(format, v...))
}
