package streamhttp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Path is where [ListenAndServe] mounts the MCP endpoint.
const Path = "/mcp"

// DefaultAddr is the address [ListenAndServe] listens on when given "":
// loopback only, as the transports pages recommend for a local server.
const DefaultAddr = "127.0.0.1:7777"

// ShutdownTimeout is how long [ListenAndServe] waits for requests still
// running when its context ends before it closes their connections.
const ShutdownTimeout = 5 * time.Second

// Mount is one more handler ListenAndServe serves beside the endpoint,
// under a net/http ServeMux pattern (the OAuth metadata of package auth).
type Mount struct {
	Pattern string
	Handler http.Handler
}

// ListenAndServe listens on addr (DefaultAddr when ""), serves h at Path
// and answers 404 everywhere else. ready, if not nil, is called with the
// endpoint's URL (http://ADDR/mcp, with the port chosen when addr asked
// for port 0) once the listener is accepting connections.
//
// When ctx ends it shuts down gracefully: it stops accepting connections,
// calls h.Close() if h has one (ending held SSE streams, which would
// otherwise never finish), waits up to ShutdownTimeout for the requests
// still running, then closes what is left. It returns nil after a
// graceful shutdown, an error if the listener failed or requests had to
// be cut off.
func ListenAndServe(ctx context.Context, addr string, h http.Handler, ready func(url string), mounts ...Mount) error {
	if addr == "" {
		addr = DefaultAddr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(Path, h)
	for _, m := range mounts {
		mux.Handle(m.Pattern, m.Handler)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		// Plain text on purpose: a JSON-RPC error body would tell a
		// 2026-07-28 client that this URL is a modern MCP endpoint.
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, "Not found: the MCP endpoint is %s.\n", Path)
	})
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		// No ReadTimeout or WriteTimeout: SSE streams are long-lived, and
		// an expired read deadline would cancel them.
	}
	if c, ok := h.(interface{ Close() }); ok {
		srv.RegisterOnShutdown(c.Close)
	}
	// net/http counts a connection that has not sent a request yet as busy
	// for its first seconds, so Shutdown would wait for a client that only
	// opened one (browsers and some SDKs keep one ready). Such connections
	// are closed when shutdown begins.
	fresh := newConns{set: map[net.Conn]bool{}}
	srv.ConnState = fresh.track
	srv.RegisterOnShutdown(fresh.closeAll)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if ready != nil {
		ready(endpointURL(ln.Addr()))
	}

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	err = srv.Shutdown(sctx)
	if t, ok := h.(interface{ waitTaken(context.Context) }); ok {
		t.waitTaken(sctx) // held streams' connections, which Shutdown does not track
	}
	if err != nil {
		srv.Close()
		err = fmt.Errorf("streamhttp: requests still running after %s were cut off: %w", ShutdownTimeout, err)
	}
	if serr := <-served; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// endpointURL is the URL a client on this machine uses to reach the
// listener: an unspecified address (0.0.0.0, ::) becomes loopback.
func endpointURL(a net.Addr) string {
	host, port := a.String(), ""
	if t, ok := a.(*net.TCPAddr); ok {
		ip := t.IP
		switch {
		case ip.IsUnspecified() && ip.To4() != nil:
			ip = net.IPv4(127, 0, 0, 1)
		case ip.IsUnspecified():
			ip = net.IPv6loopback
		}
		host, port = ip.String(), strconv.Itoa(t.Port)
		host = net.JoinHostPort(host, port)
	}
	return "http://" + host + Path
}

// newConns are the connections that have not begun a request.
type newConns struct {
	mu      sync.Mutex
	set     map[net.Conn]bool
	closing bool // shutdown began: a connection accepted just now is closed at once
}

func (n *newConns) track(c net.Conn, state http.ConnState) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case state == http.StateNew && n.closing:
		c.Close() // accepted while shutdown was closing the others
	case state == http.StateNew:
		n.set[c] = true
	default:
		delete(n.set, c)
	}
}

func (n *newConns) closeAll() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closing = true
	for c := range n.set {
		c.Close()
	}
}
