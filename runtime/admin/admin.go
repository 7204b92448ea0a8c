// Package admin is mcpx's admin listener (`mcpx serve --admin ADDR`),
// apart from the MCP endpoint: /metrics (Prometheus), /healthz (the
// process answers), /readyz (every eager upstream connected, else 503 and
// why, per upstream, as JSON) and /debug/pprof/.
package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"sync/atomic"
	"time"
)

// Readiness is what /readyz answers.
type Readiness struct {
	Ready bool `json:"ready"`
	// Reason says why not ready, when no upstream does (still starting).
	Reason string `json:"reason,omitempty"`
	// Upstreams are the eager upstreams, by name: their state and, when
	// not up, why.
	Upstreams map[string]UpstreamReadiness `json:"upstreams,omitempty"`
}

// UpstreamReadiness is one eager upstream's part of Readiness.
type UpstreamReadiness struct {
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
}

// Server is the admin listener's handler. Make it with [New]; set what
// /readyz reads with SetReady once the gateway exists (before, it answers
// 503, starting).
type Server struct {
	mux   *http.ServeMux
	ready atomic.Pointer[func() Readiness]
}

// New serves metrics at /metrics (nil: 404).
func New(metrics http.Handler) *Server {
	s := &Server{mux: http.NewServeMux()}
	if metrics != nil {
		s.mux.Handle("GET /metrics", metrics)
	}
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	s.mux.HandleFunc("GET /readyz", s.readyz)
	s.mux.HandleFunc("/debug/pprof/", pprof.Index)
	s.mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	s.mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	s.mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	s.mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return s
}

// SetReady sets what /readyz reports.
func (s *Server) SetReady(f func() Readiness) { s.ready.Store(&f) }

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	rd := Readiness{Reason: "starting: the gateway is not built yet"}
	if f := s.ready.Load(); f != nil {
		rd = (*f)()
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !rd.Ready {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(rd)
}

// Addr is where --admin ADDR listens: a bare port ("9090" or ":9090")
// is on loopback, 127.0.0.1 (pprof and the metrics are not for the
// world unless a host says so: "0.0.0.0:9090").
func Addr(addr string) (string, error) {
	if p, err := strconv.Atoi(addr); err == nil {
		if p < 0 || p > 65535 {
			return "", fmt.Errorf("--admin %q: a port is 0 to 65535", addr)
		}
		return net.JoinHostPort("127.0.0.1", addr), nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--admin %q: want a port or HOST:PORT", addr)
	}
	if _, err := strconv.Atoi(port); err != nil {
		return "", fmt.Errorf("--admin %q: the port is not a number", addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// Serve listens at addr (see [Addr]) and serves h until ctx is done; it
// returns once listening, with the address listened on, and errc gets
// the server's end.
func Serve(ctx context.Context, addr string, h http.Handler) (bound string, errc <-chan error, err error) {
	addr, err = Addr(addr)
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("--admin: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	out := make(chan error, 1)
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		out <- err
	}()
	context.AfterFunc(ctx, func() {
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx) // a pprof profile in progress may hold it the second
	})
	return ln.Addr().String(), out, nil
}
