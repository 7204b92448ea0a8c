// Package h1 is mcpx's transport to a plain-HTTP (http://) upstream: an
// [http.RoundTripper] that writes each request and reads its answer in
// the caller's goroutine, on a pooled HTTP/1.1 connection.
//
// net/http's Transport hands every request to its connection's write
// goroutine and every answer back from the connection's read goroutine.
// For the small calls a gateway mostly forwards, those two hand-offs (and
// the scheduler's wakeups behind them) were about a fifth of a
// byte-forwarding proxy's CPU per call on loopback (BENCHMARKS.md,
// eleventh round). Here the caller's goroutine does both, so a small call
// is one write and the reads of its answer, as in a synchronous client;
// the framing on both sides is net/http's ([http.ReadResponse], and
// [http.Request.Write]'s bytes: writeRequest writes the plain requests
// mcpx makes as it would, without its fmt and sorted header copy), so
// the bytes are the Transport's. A large body (or one of unknown length)
// is written by a goroutine of its own while the answer is read, as the
// Transport does, so that an upstream that answers before it has read it
// all (a 401, a 413) is heard.
//
// What h1 does not carry goes to the fallback transport unchanged: https
// (TLS and HTTP/2 are the Transport's), a request the environment's proxy
// settings send through a proxy, CONNECT.
//
// A pooled connection is checked before each reuse with a read that does
// not wait: one its upstream has closed (an idle timeout: Node's is 5 s;
// a shutdown) is found then, not by losing the call sent on it, as the
// Transport's read goroutine finds it. A sweep looks the idle ones over
// every second and closes those closed or idle for IdleTimeout.
package h1

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Defaults of [Options]' zero-valued fields, and h1's fixed limits.
const (
	// DefaultMaxIdlePerHost is how many idle connections a host keeps.
	DefaultMaxIdlePerHost = 256
	// DefaultIdleTimeout is how long a connection may stay idle, as
	// http.DefaultTransport's IdleConnTimeout.
	DefaultIdleTimeout = 90 * time.Second
	// MaxHeaderBytes bounds an answer's head, interim answers included,
	// as the Transport's default MaxResponseHeaderBytes does.
	MaxHeaderBytes = 10 << 20
	// ConcurrentWriteMin is the body length from which a request is
	// written by a goroutine of its own while its answer is read; a
	// shorter one fits the sockets' buffers and is written at once.
	ConcurrentWriteMin = 64 << 10
)

// bufferSize is each connection's read and write buffer, as the
// Transport's (4 kB each).
const bufferSize = 4 << 10

// Transport is an http.RoundTripper for http:// URLs; make one with [New].
type Transport struct {
	fallback    http.RoundTripper
	proxy       func(*http.Request) (*url.URL, error) // the fallback's; nil: none
	maxIdle     int
	idleTimeout time.Duration
	checkIdle   bool // check a pooled connection before reuse (tests turn it off)
	dial        func(ctx context.Context, network, addr string) (net.Conn, error)

	mu    sync.Mutex
	hosts map[string]*pool // by the URL's host, as written
	last  atomic.Pointer[pool]
}

// Options are [New]'s settings; the zero value of each field is its default.
type Options struct {
	// MaxIdlePerHost bounds the idle connections kept to one host; 0 is
	// DefaultMaxIdlePerHost.
	MaxIdlePerHost int
	// IdleTimeout closes a connection idle that long; 0 is
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
	// Dial opens a connection; nil is a net.Dialer with the Transport's
	// timeouts (30 s to connect, 30 s keep-alive).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// New returns a Transport that sends what it does not carry itself to
// fallback, whose Proxy setting also decides which http:// requests go
// through a proxy (and so to fallback).
func New(fallback *http.Transport, o Options) *Transport {
	t := &Transport{fallback: fallback, proxy: fallback.Proxy, maxIdle: o.MaxIdlePerHost, idleTimeout: o.IdleTimeout, checkIdle: true, dial: o.Dial, hosts: map[string]*pool{}}
	if t.maxIdle <= 0 {
		t.maxIdle = DefaultMaxIdlePerHost
	}
	if t.idleTimeout <= 0 {
		t.idleTimeout = DefaultIdleTimeout
	}
	if t.dial == nil {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
		t.dial = d.DialContext
	}
	return t
}

// RoundTrip sends req on a pooled connection when h1 carries it, else
// with the fallback transport.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil || req.URL.Scheme != "http" || req.URL.Host == "" || req.Method == http.MethodConnect {
		return t.fallback.RoundTrip(req)
	}
	p, err := t.pool(req)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	if p.proxied {
		return t.fallback.RoundTrip(req)
	}
	return p.roundTrip(req)
}

// CloseIdleConnections closes the idle connections of every host, and the
// fallback's. A connection in use then is closed when its call ends.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	pools := make([]*pool, 0, len(t.hosts))
	for _, p := range t.hosts {
		pools = append(pools, p)
	}
	t.mu.Unlock()
	for _, p := range pools {
		p.closeIdle()
	}
	if ci, ok := t.fallback.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// pool is the pool of req's host, made on its first request; whether the
// host's requests go through a proxy is decided then, as
// http.ProxyFromEnvironment reads the environment once. An upstream's
// transport sends to one host, whose pool is found without the lock.
func (t *Transport) pool(req *http.Request) (*pool, error) {
	host := req.URL.Host
	if p := t.last.Load(); p != nil && p.host == host {
		return p, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if p, ok := t.hosts[host]; ok {
		t.last.Store(p)
		return p, nil
	}
	p := &pool{t: t, host: host, addr: canonicalAddr(req)}
	if t.proxy != nil {
		u, err := t.proxy(req)
		if err != nil {
			return nil, err
		}
		p.proxied = u != nil
	}
	t.hosts[host] = p
	t.last.Store(p)
	return p, nil
}

// canonicalAddr is req's host with its port, 80 when the URL gives none.
func canonicalAddr(req *http.Request) string {
	host, port := req.URL.Hostname(), req.URL.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(host, port)
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// pool is one host's idle connections, the most recently used last.
type pool struct {
	t       *Transport
	host    string // the URL's, the key in Transport.hosts
	addr    string // host:port, dialed
	proxied bool

	mu     sync.Mutex
	idle   []*conn
	sweep  *time.Timer // sweepIdle, set while idle is not empty
	armed  bool        // sweep is set
	closes int         // closeIdle's calls: a connection taken out before the last one is not pooled again
}

// conn is one connection to the host. Its reads go through it (Read) to
// bound an answer's head; its writes are counted, to know whether any
// byte of a request left.
type conn struct {
	nc        net.Conn
	br        *bufio.Reader
	bw        *bufio.Writer
	idleSince time.Time
	closes    int   // the pool's closes when it was taken out
	headLeft  int64 // what an answer's head may still read; < 0: no bound (the body)
	sent      int64 // bytes written to nc for the request being sent
}

func (c *conn) close() { c.nc.Close() }

func (c *conn) Read(b []byte) (int, error) {
	if c.headLeft == 0 {
		return 0, fmt.Errorf("h1: the upstream's answer head is over %d bytes", MaxHeaderBytes)
	}
	if c.headLeft > 0 && int64(len(b)) > c.headLeft {
		b = b[:c.headLeft]
	}
	n, err := c.nc.Read(b)
	if c.headLeft > 0 {
		c.headLeft -= int64(n)
	}
	return n, err
}

func (c *conn) Write(b []byte) (int, error) {
	n, err := c.nc.Write(b)
	c.sent += int64(n)
	return n, err
}

// ReadFrom is how bufio.Writer hands a body over once its buffer is
// flushed: to the connection's own ReadFrom (a TCP connection's writes
// what it reads 32 kB at a time), not through the 4 kB buffer, which
// would cost a write each.
func (c *conn) ReadFrom(r io.Reader) (int64, error) {
	var n int64
	var err error
	if rf, ok := c.nc.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(r)
	} else {
		n, err = io.Copy(struct{ io.Writer }{c.nc}, r)
	}
	c.sent += n
	return n, err
}

// alive reports whether the idle connection c can carry a request: its
// upstream has neither closed it nor sent anything unasked. It looks
// with one read that does not wait ([peekClosed]); a deadline in the
// past would not do, as Go then fails the read without making it.
func (c *conn) alive() bool {
	if c.br.Buffered() > 0 {
		return false
	}
	sc, ok := c.nc.(syscall.Conn)
	if !ok {
		return true // nothing to look with: as the Transport without its reader
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	return !peekClosed(raw)
}

// get is an idle connection to reuse, the most recently used one that is
// still open, or nil.
func (p *pool) get() *conn {
	for {
		p.mu.Lock()
		n := len(p.idle)
		if n == 0 {
			p.mu.Unlock()
			return nil
		}
		c := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		c.closes = p.closes
		p.mu.Unlock()
		if !p.t.checkIdle || c.alive() {
			return c
		}
		c.close()
	}
}

// put keeps c for reuse, or closes it when the pool is full or its idle
// connections were closed since c was taken out.
func (p *pool) put(c *conn) {
	c.idleSince = time.Now()
	p.mu.Lock()
	if len(p.idle) >= p.t.maxIdle || c.closes != p.closes {
		p.mu.Unlock()
		c.close()
		return
	}
	p.idle = append(p.idle, c)
	if !p.armed {
		p.armSweep()
	}
	p.mu.Unlock()
}

// armSweep sets the sweep to run in sweepEvery; p.mu is held.
func (p *pool) armSweep() {
	p.armed = true
	if p.sweep == nil {
		p.sweep = time.AfterFunc(sweepEvery, p.sweepIdle)
	} else {
		p.sweep.Reset(sweepEvery)
	}
}

// sweepEvery is how often a pool with idle connections looks them over.
const sweepEvery = time.Second

// sweepIdle closes the idle connections that have been idle for
// IdleTimeout, and those idle for a sweep or more that their upstream has
// closed (found as [conn.alive] finds it): a connection its upstream
// closed is not left half-open until it times out.
func (p *pool) sweepIdle() {
	now := time.Now()
	p.mu.Lock()
	p.armed = false
	// idle is in the order of idleSince, the oldest first: the old ones
	// are a prefix, taken out while they are checked.
	n := 0
	for n < len(p.idle) && now.Sub(p.idle[n].idleSince) >= sweepEvery {
		n++
	}
	old := slices.Clone(p.idle[:n])
	p.idle = slices.Delete(p.idle, 0, n)
	closes := p.closes
	p.mu.Unlock()

	var kept []*conn
	for _, c := range old {
		if now.Sub(c.idleSince) < p.t.idleTimeout && c.alive() {
			kept = append(kept, c)
		} else {
			c.close()
		}
	}

	p.mu.Lock()
	if p.closes != closes { // CloseIdleConnections came meanwhile
		for _, c := range kept {
			c.close()
		}
		kept = nil
	}
	p.idle = slices.Insert(p.idle, 0, kept...) // still older than the rest
	if over := len(p.idle) - p.t.maxIdle; over > 0 {
		for _, c := range p.idle[:over] {
			c.close()
		}
		p.idle = slices.Delete(p.idle, 0, over)
	}
	if len(p.idle) > 0 {
		p.armSweep()
	}
	p.mu.Unlock()
}

// closeIdle closes every idle connection; those in use are closed when
// their calls end (put).
func (p *pool) closeIdle() {
	p.mu.Lock()
	gone := p.idle
	p.idle = nil
	p.closes++
	p.mu.Unlock()
	for _, c := range gone {
		c.close()
	}
}

// dial opens a new connection to the host.
func (p *pool) dial(ctx context.Context) (*conn, error) {
	nc, err := p.t.dial(ctx, "tcp", p.addr)
	if err != nil {
		return nil, err
	}
	c := &conn{nc: nc}
	c.br, c.bw = bufio.NewReaderSize(c, bufferSize), bufio.NewWriterSize(c, bufferSize)
	p.mu.Lock()
	c.closes = p.closes
	p.mu.Unlock()
	return c, nil
}

// roundTrip writes req on a connection and reads the answer's head; the
// body is read from the same connection, which goes back to the pool
// when the body has been read to its end (and neither side asked to
// close it), and is closed otherwise. The request's context ending closes
// the connection, which ends a write or read in progress.
//
// A request of which no byte could be written on a reused connection
// (its upstream had closed it) cannot have been served, and is sent again
// on another one when its body can be had again (GetBody), as the
// Transport does; one that was written, even in part, is not: a POST may
// have been acted on.
func (p *pool) roundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	for {
		if err := ctx.Err(); err != nil {
			closeBody(req)
			return nil, err
		}
		c, reused := p.get(), true
		if c == nil {
			reused = false
			var err error
			if c, err = p.dial(ctx); err != nil {
				closeBody(req)
				return nil, err
			}
		}
		resp, err := p.send(ctx, req, c)
		if err == nil || !reused || c.sent > 0 || ctx.Err() != nil {
			return resp, err
		}
		if req, err = rewind(req); err != nil {
			return nil, err
		}
	}
}

// rewind is req with its body to be read again from the start.
func rewind(req *http.Request) (*http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, nil
	}
	if req.GetBody == nil {
		return nil, errors.New("h1: the request could not be written on a reused connection and its body cannot be read again (no GetBody)")
	}
	b, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	again := *req
	again.Body = b
	return &again, nil
}

// concurrentWrite reports whether req's body is written while its answer
// is read: a long one, or one of unknown length.
func concurrentWrite(req *http.Request) bool {
	if req.Body == nil || req.Body == http.NoBody {
		return false
	}
	return req.ContentLength < 0 || req.ContentLength >= ConcurrentWriteMin
}

// write writes req on c; its body is closed.
func write(req *http.Request, c *conn) error {
	if err := writeRequest(c.bw, req); err != nil {
		return err
	}
	return c.bw.Flush()
}

// send writes req on c and reads the answer's head.
func (p *pool) send(ctx context.Context, req *http.Request, c *conn) (*http.Response, error) {
	c.sent = 0
	stop := context.AfterFunc(ctx, c.close)
	fail := func(err error) (*http.Response, error) {
		stop()
		c.close()
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, err
	}
	var wrote chan error // the writing goroutine's error, when there is one
	if concurrentWrite(req) {
		wrote = make(chan error, 1)
		go func() { wrote <- write(req, c) }()
	} else if err := write(req, c); err != nil {
		return fail(err)
	}

	c.headLeft = MaxHeaderBytes
	var resp *http.Response
	for {
		var err error
		if resp, err = http.ReadResponse(c.br, req); err != nil {
			if wrote != nil {
				// Closed first, so that a write still waiting on the
				// upstream ends. When the read failed as the write did
				// (the connection closed under both), the write's error
				// says why, and c.sent whether any of the request left.
				c.close()
				if werr := <-wrote; werr != nil && connectionLost(err) {
					err = werr
				}
			}
			return fail(err)
		}
		// An interim answer (100 Continue, 103 Early Hints) precedes the
		// final one, as the Transport reads them; 101 is final.
		if resp.StatusCode < 100 || resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
	}
	c.headLeft = -1

	b := &body{p: p, c: c, ctx: ctx, stop: stop, wrote: wrote,
		reuse: !req.Close && !resp.Close && resp.StatusCode != http.StatusSwitchingProtocols && !strings.EqualFold(req.Header.Get("Connection"), "close")}
	if resp.Body == http.NoBody {
		b.end(b.stop()) // nothing more to read: the connection is free now
		return resp, nil
	}
	b.rc = resp.Body
	resp.Body = b
	return resp, nil
}

// connectionLost reports whether err, a failed read of an answer, is the
// connection's end rather than what the upstream sent.
func connectionLost(err error) bool {
	var ne net.Error
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ne)
}

// body is an answer's body on its connection.
type body struct {
	p     *pool
	c     *conn
	rc    io.ReadCloser // http.ReadResponse's: framed by Content-Length or chunks
	ctx   context.Context
	stop  func() bool // stops the context's closing of c
	wrote chan error  // the request's writing goroutine's error; nil: written before
	reuse bool

	mu   sync.Mutex
	done bool // read to its end, or closed: c is the pool's or closed
	eof  bool // read to its end: later reads return io.EOF again
}

// end gives the connection of an answer read to its end back to the pool,
// or closes it: when the request is still being written (the upstream
// answered before reading it all), when either side asked to close it,
// or when the context ended (detached is false: it closed the connection,
// or is closing it).
func (b *body) end(detached bool) {
	written := true
	if b.wrote != nil {
		select {
		case err := <-b.wrote:
			written = err == nil
		default:
			written = false // closing the connection ends the write
		}
	}
	if detached && b.reuse && written {
		b.p.put(b.c)
	} else {
		b.c.close()
	}
}

var errClosedBody = errors.New("http: read on closed response body")

func (b *body) Read(dst []byte) (int, error) {
	b.mu.Lock()
	done, eof := b.done, b.eof
	b.mu.Unlock()
	if eof {
		return 0, io.EOF
	}
	if done {
		return 0, errClosedBody
	}
	n, err := b.rc.Read(dst)
	if err == nil {
		return n, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done { // closed while the read was in progress
		return n, errClosedBody
	}
	b.done = true
	if err == io.EOF {
		b.eof = true
		b.end(b.stop())
		return n, io.EOF
	}
	b.stop()
	b.c.close()
	if b.ctx.Err() != nil {
		err = b.ctx.Err()
	}
	return n, err
}

// Close ends the body. Closed before its end, the connection's rest of
// the answer is read in the background ([body.drain]) when the context
// has not ended; else, or when the connection cannot be reused anyway,
// the connection is closed.
func (b *body) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return nil
	}
	b.done = true
	// Detached from the context first: the caller's ends as soon as it has
	// its answer, which would close the connection under the drain.
	if !b.stop() || !b.reuse || b.ctx.Err() != nil {
		b.c.close()
		return nil
	}
	go b.drain()
	return nil
}

// Bounds of [body.drain].
const (
	drainWait = 50 * time.Millisecond
	drainMax  = 64 << 10
)

// drain reads what is left of an answer its caller closed before the end,
// for at most drainWait and drainMax bytes, and pools the connection when
// that was the end; else it closes it. The answer to a request sent as an
// event stream (how the SDKs' servers answer by default) is read up to
// the response, and the server ends the stream right after it: without
// the drain every such call would cost a new connection, as it does with
// net/http's Transport, which closes the connection then.
func (b *body) drain() {
	if b.c.nc.SetReadDeadline(time.Now().Add(drainWait)) != nil {
		b.c.close()
		return
	}
	n, err := io.Copy(io.Discard, io.LimitReader(b.rc, drainMax+1))
	if err == nil && n <= drainMax && b.c.nc.SetReadDeadline(time.Time{}) == nil {
		b.end(true) // io.Copy's nil is the body's end; Close detached it
		return
	}
	b.c.close()
}
