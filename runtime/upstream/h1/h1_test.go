package h1

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
)

// server is an httptest server counting the connections it accepted.
type server struct {
	*httptest.Server
	conns atomic.Int64
}

func newServer(t *testing.T, h http.Handler) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewUnstartedServer(h)
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// rawServer serves each connection it accepts with serve, in a goroutine
// of its own, and returns its address; it stops with the test.
func rawServer(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return l.Addr().String()
}

// idle is how many connections to rawURL's host tr keeps idle.
func idle(tr *Transport, rawURL string) int {
	tr.mu.Lock()
	u, _ := url.Parse(rawURL)
	p := tr.hosts[u.Host]
	tr.mu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}

func newTransport(t *testing.T, o Options) *Transport {
	t.Helper()
	fb := http.DefaultTransport.(*http.Transport).Clone()
	fb.Proxy = nil
	tr := New(fb, o)
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

func echo() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"method":%q,"body":%q}`, r.Method, b)
	})
}

func post(t *testing.T, c *http.Client, u, body string) string {
	t.Helper()
	resp, err := c.Post(u, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read the answer: %v", err)
	}
	return string(b)
}

// TestReuse: calls one after another share one connection, and each
// answer is its own request's; the bytes are the Transport's (the server
// sees the same method, body and headers).
func TestReuse(t *testing.T) {
	leakcheck.Check(t)
	var got []http.Header
	var mu sync.Mutex
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Clone())
		mu.Unlock()
		echo().ServeHTTP(w, r)
	}))
	c := &http.Client{Transport: newTransport(t, Options{})}
	for i := range 20 {
		body := fmt.Sprintf(`{"n":%d}`, i)
		if a := post(t, c, s.URL, body); a != fmt.Sprintf(`{"method":"POST","body":%q}`, body) {
			t.Fatalf("call %d answered %s", i, a)
		}
	}
	if n := s.conns.Load(); n != 1 {
		t.Errorf("20 calls in turn used %d connections, want 1", n)
	}
	// The same request through the Transport carries the same headers,
	// less the Accept-Encoding it adds to decompress for its caller.
	std := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer std.CloseIdleConnections()
	post(t, std, s.URL, `{}`)
	mu.Lock()
	defer mu.Unlock()
	mine, theirs := got[0], got[len(got)-1]
	theirs.Del("Accept-Encoding")
	mine.Del("Content-Length") // the bodies differ
	theirs.Del("Content-Length")
	if fmt.Sprint(mine) != fmt.Sprint(theirs) {
		t.Errorf("headers %v, the Transport's %v", mine, theirs)
	}
}

// TestConcurrent: 32 goroutines calling at once each get their own
// answer, on at most 32 connections, under the race detector.
func TestConcurrent(t *testing.T) {
	leakcheck.Check(t)
	s := newServer(t, echo())
	c := &http.Client{Transport: newTransport(t, Options{})}
	var wg sync.WaitGroup
	errs := make(chan error, 32*50)
	for g := range 32 {
		wg.Go(func() {
			for i := range 50 {
				body := fmt.Sprintf(`{"g":%d,"i":%d}`, g, i)
				resp, err := c.Post(s.URL, "application/json", strings.NewReader(body))
				if err != nil {
					errs <- err
					return
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if want := fmt.Sprintf(`{"method":"POST","body":%q}`, body); err != nil || string(b) != want {
					errs <- fmt.Errorf("answer %q (%v), want %q", b, err, want)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := s.conns.Load(); n > 32 {
		t.Errorf("32 callers used %d connections", n)
	}
}

// TestConnectionClose: an answer saying Connection: close, and a request
// saying it, leave their connection closed, not pooled.
func TestConnectionClose(t *testing.T) {
	leakcheck.Check(t)
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("close") {
			w.Header().Set("Connection", "close")
		}
		io.WriteString(w, "ok")
	}))
	tr := newTransport(t, Options{})
	c := &http.Client{Transport: tr}
	post(t, c, s.URL+"?close", "")
	post(t, c, s.URL, "")
	if n := s.conns.Load(); n != 2 {
		t.Errorf("%d connections after an answer with Connection: close, want 2", n)
	}
	req, _ := http.NewRequest(http.MethodPost, s.URL, nil)
	req.Close = true
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	post(t, c, s.URL, "")
	if n := s.conns.Load(); n != 3 {
		t.Errorf("%d connections after a request with Connection: close, want 3", n)
	}
}

// TestNoBody: an answer without a body (202, as to a notification) frees
// its connection at once, even when the caller closes the body unread.
func TestNoBody(t *testing.T) {
	leakcheck.Check(t)
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
	}))
	c := &http.Client{Transport: newTransport(t, Options{})}
	for range 5 {
		resp, err := c.Post(s.URL, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	if n := s.conns.Load(); n != 1 {
		t.Errorf("5 bodiless answers used %d connections, want 1", n)
	}
}

// TestEarlyClose: a body closed before its end closes its connection (what
// is left of it is not read), and a later call dials anew.
func TestEarlyClose(t *testing.T) {
	leakcheck.Check(t)
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("x", 1<<20))
	}))
	c := &http.Client{Transport: newTransport(t, Options{})}
	resp, err := c.Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 10)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := resp.Body.Read(buf); err == nil {
		t.Error("a read after Close succeeded")
	}
	if a := post(t, c, s.URL, ""); len(a) != 1<<20 {
		t.Errorf("the next call's answer is %d bytes", len(a))
	}
	if n := s.conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2 (the first closed early)", n)
	}
}

// TestStream: an event stream is read as it is written, and the caller's
// context ending ends the read in progress with the context's error, the
// connection closed.
func TestStream(t *testing.T) {
	leakcheck.Check(t)
	gone := make(chan struct{})
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the client went away
		close(gone)
	}))
	c := &http.Client{Transport: newTransport(t, Options{})}
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); err != nil || line != "data: one\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	br.ReadString('\n')
	read := make(chan error, 1)
	go func() {
		_, err := br.ReadString('\n')
		read <- err
	}()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case err := <-read:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the read ended with %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelling did not end the read")
	}
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not see the connection close")
	}
}

// TestCancelWaiting: a call whose answer does not come ends when its
// context does, with the context's error, and the server sees the
// connection close (a modern upstream's cancellation over HTTP).
func TestCancelWaiting(t *testing.T) {
	leakcheck.Check(t)
	gone := make(chan struct{})
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // the server watches the connection from then on
		<-r.Context().Done()
		close(gone)
	}))
	c := &http.Client{Transport: newTransport(t, Options{})}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, strings.NewReader(`{}`))
	_, err := c.Do(req)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the call ended with %v, want context.DeadlineExceeded", err)
	}
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not see the connection close")
	}
	// An ended context sends nothing.
	n := s.conns.Load()
	req, _ = http.NewRequestWithContext(ctx, http.MethodPost, s.URL, strings.NewReader(`{}`))
	if _, err := c.Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a call with an ended context: %v", err)
	}
	if s.conns.Load() != n {
		t.Error("a call with an ended context dialed")
	}
}

// TestInterim: a 103 before the answer is read past, as the Transport
// reads it.
func TestInterim(t *testing.T) {
	leakcheck.Check(t)
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</a>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		io.WriteString(w, "final")
	}))
	c := &http.Client{Transport: newTransport(t, Options{})}
	resp, err := c.Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(b) != "final" {
		t.Errorf("%d %q, want 200 final", resp.StatusCode, b)
	}
}

// TestClosedIdle: a pooled connection its server closed (an idle timeout)
// is found before it is used, and the call goes on a new one; the sweep
// also closes it on its own within a second or two.
func TestClosedIdle(t *testing.T) {
	leakcheck.Check(t)
	s := newServer(t, echo())
	tr := newTransport(t, Options{})
	c := &http.Client{Transport: tr}
	post(t, c, s.URL, "1")
	s.CloseClientConnections() // the server's side closes; ours is idle in the pool
	time.Sleep(20 * time.Millisecond)
	if a := post(t, c, s.URL, "2"); a != `{"method":"POST","body":"2"}` {
		t.Errorf("the call after the server closed the idle connection: %s", a)
	}
	if n := s.conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}

	// The sweep: the pool is empty of it without a call.
	s.CloseClientConnections()
	for deadline := time.Now().Add(5 * time.Second); idle(tr, s.URL) > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d closed connections still pooled after 5 s", idle(tr, s.URL))
		}
	}
}

// TestUnaskedBytes: a pooled connection on which the server sent bytes
// nobody asked for is not reused.
func TestUnaskedBytes(t *testing.T) {
	leakcheck.Check(t)
	var accepted atomic.Int64
	addr := rawServer(t, func(c net.Conn) {
		accepted.Add(1)
		defer c.Close()
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			// The answer, and garbage after it.
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokGARBAGE")
		}
	})
	tr := newTransport(t, Options{})
	c := &http.Client{Transport: tr}
	for range 2 {
		if a := post(t, c, "http://"+addr, ""); a != "ok" {
			t.Fatalf("answer %q", a)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := accepted.Load(); n != 2 {
		t.Errorf("%d connections, want 2: one with unasked bytes is not reused", n)
	}
}

// TestRetryUnwritten: a request that cannot be written on a reused
// connection (the server reset it) goes again on a new one; one that was
// written and got no answer is not sent again.
func TestRetryUnwritten(t *testing.T) {
	leakcheck.Check(t)
	var posts atomic.Int64
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "ok")
	}))
	tr := newTransport(t, Options{})
	tr.checkIdle = false // the dead connection is used
	// A connection that fails every write, as a reset one does.
	var first atomic.Bool
	tr.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil && first.CompareAndSwap(false, true) {
			return &failAfter{Conn: c, writes: 1}, nil
		}
		return c, err
	}
	c := &http.Client{Transport: tr}
	post(t, c, s.URL, "1") // dials the connection that fails its next write
	if a := post(t, c, s.URL, strings.Repeat("y", 10)); a != "ok" {
		t.Errorf("the call retried on a new connection answered %q", a)
	}
	if n := posts.Load(); n != 2 {
		t.Errorf("the server served %d posts, want 2", n)
	}

	// Written, and the connection closed before any answer: not again.
	var served atomic.Int64
	s2 := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		hj, _, _ := w.(http.Hijacker).Hijack()
		hj.Close()
	}))
	if _, err := c.Post(s2.URL, "application/json", strings.NewReader(`{}`)); err == nil {
		t.Error("a call whose connection closed unanswered succeeded")
	}
	if n := served.Load(); n != 1 {
		t.Errorf("the server saw the unanswered call %d times, want 1", n)
	}
}

// failAfter fails every write after the first writes ones.
type failAfter struct {
	net.Conn
	writes int
}

func (c *failAfter) Write(b []byte) (int, error) {
	if c.writes == 0 {
		return 0, errors.New("connection reset by peer (test)")
	}
	c.writes--
	return c.Conn.Write(b)
}

// TestIdleLimits: no more than MaxIdlePerHost connections are kept, and a
// connection idle for IdleTimeout is closed.
func TestIdleLimits(t *testing.T) {
	leakcheck.Check(t)
	hold := make(chan struct{})
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-hold
		io.WriteString(w, "ok")
	}))
	tr := newTransport(t, Options{MaxIdlePerHost: 2, IdleTimeout: 1500 * time.Millisecond})
	c := &http.Client{Transport: tr}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { post(t, c, s.URL, "") })
	}
	for s.conns.Load() < 4 {
		time.Sleep(5 * time.Millisecond)
	}
	close(hold)
	wg.Wait()
	if n := idle(tr, s.URL); n != 2 {
		t.Errorf("%d idle connections kept, want 2 (MaxIdlePerHost)", n)
	}
	for deadline := time.Now().Add(5 * time.Second); idle(tr, s.URL) > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d idle connections left past IdleTimeout", idle(tr, s.URL))
		}
	}
}

// TestFallback: https, and an http:// request the proxy setting sends
// through a proxy, go to the fallback transport.
func TestFallback(t *testing.T) {
	leakcheck.Check(t)
	tls := httptest.NewTLSServer(echo())
	defer tls.Close()
	fb := tls.Client().Transport.(*http.Transport).Clone()
	var proxied atomic.Int64
	proxy := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		io.WriteString(w, "via proxy "+r.URL.String())
	}))
	pu, _ := url.Parse(proxy.URL)
	fb.Proxy = func(r *http.Request) (*url.URL, error) {
		if r.URL.Host == "upstream.invalid" {
			return pu, nil
		}
		return nil, nil
	}
	tr := New(fb, Options{})
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	if a := post(t, c, tls.URL, "s"); a != `{"method":"POST","body":"s"}` {
		t.Errorf("https answered %q", a)
	}
	if a := post(t, c, "http://upstream.invalid/mcp", ""); a != "via proxy http://upstream.invalid/mcp" || proxied.Load() != 1 {
		t.Errorf("the proxied request answered %q", a)
	}
	if len(tr.hosts) != 1 {
		t.Errorf("%d pools, want 1 (the proxied host's, marked so)", len(tr.hosts))
	}
	fb.CloseIdleConnections()
}

// TestFramedBody: a body of unknown length goes chunked, and a large one
// arrives whole.
func TestFramedBody(t *testing.T) {
	leakcheck.Check(t)
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%d %v", len(b), r.TransferEncoding)
	}))
	c := &http.Client{Transport: newTransport(t, Options{})}
	big := bytes.Repeat([]byte("z"), 256<<10)
	req, _ := http.NewRequest(http.MethodPost, s.URL, io.MultiReader(bytes.NewReader(big)))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != fmt.Sprintf("%d [chunked]", len(big)) {
		t.Errorf("answer %q", b)
	}
}

// TestDrainEndedStream: an event stream its caller closes after the event
// it wanted, and which the server ends right after (as the SDKs' servers
// end a request's stream once it is answered), leaves its connection
// pooled; one the server holds open is closed once drainWait passes.
func TestDrainEndedStream(t *testing.T) {
	leakcheck.Check(t)
	held := make(chan struct{})
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message\ndata: {\"answer\":1}\n\n")
		w.(http.Flusher).Flush()
		if r.URL.Query().Has("hold") {
			<-r.Context().Done() // ends when the client closes the connection
			close(held)
			return
		}
		time.Sleep(3 * time.Millisecond) // the end comes after the caller has closed
	}))
	c := &http.Client{Transport: newTransport(t, Options{})}
	call := func(u string) {
		t.Helper()
		resp, err := c.Post(u, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(resp.Body).ReadString('\n')
		resp.Body.Close() // before the end: the event read is all the caller wants
		if err != nil || line != "event: message\n" {
			t.Fatalf("first line %q, %v", line, err)
		}
	}
	for range 5 {
		call(s.URL)
		time.Sleep(10 * time.Millisecond) // the drain's
	}
	if n := s.conns.Load(); n != 1 {
		t.Errorf("5 event-stream answers used %d connections, want 1", n)
	}
	start := time.Now()
	call(s.URL + "?hold")
	select {
	case <-held:
		if d := time.Since(start); d < drainWait/2 {
			t.Errorf("a held stream was closed after %v, before drainWait (%v)", d, drainWait)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a stream the server holds open was not closed")
	}
}

// TestEarlyAnswer: an upstream that answers a large request before reading
// it (a 401 from its auth, say) and closes is heard: the caller gets the
// 401, and the request is not sent again on the other pooled connections.
func TestEarlyAnswer(t *testing.T) {
	leakcheck.Check(t)
	var big atomic.Int64
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			big.Add(1)
			http.Error(w, "no", http.StatusUnauthorized) // the body unread
			return
		}
		io.Copy(io.Discard, r.Body)
	}))
	c := &http.Client{Transport: newTransport(t, Options{})}
	var wg sync.WaitGroup
	for range 4 { // connections in the pool
		wg.Go(func() { post(t, c, s.URL+"/small", "{}") })
	}
	wg.Wait()
	resp, err := c.Post(s.URL+"/big", "application/json", strings.NewReader(strings.Repeat("x", 8<<20)))
	if err != nil {
		t.Fatalf("the large call: %v, want its 401", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("status %d, want 401", resp.StatusCode)
	}
	if n := big.Load(); n != 1 {
		t.Errorf("the server saw the large call %d times, want 1", n)
	}
}

// TestClosedRightAfter: a server that closes each connection just after
// answering (without saying so) costs no call: every reuse is checked.
func TestClosedRightAfter(t *testing.T) {
	leakcheck.Check(t)
	addr := rawServer(t, func(c net.Conn) {
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err == nil {
			io.Copy(io.Discard, req.Body)
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
			time.Sleep(time.Millisecond)
		}
		c.Close()
	})
	c := &http.Client{Transport: newTransport(t, Options{})}
	for i := range 20 {
		resp, err := c.Post("http://"+addr, "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCloseIdleDuringDrain: a connection whose drain ends after
// CloseIdleConnections is closed, not pooled again.
func TestCloseIdleDuringDrain(t *testing.T) {
	leakcheck.Check(t)
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: 1\n\n")
		w.(http.Flusher).Flush()
		time.Sleep(10 * time.Millisecond)
	}))
	tr := newTransport(t, Options{})
	c := &http.Client{Transport: tr}
	resp, err := c.Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	bufio.NewReader(resp.Body).ReadString('\n')
	resp.Body.Close() // the drain starts
	tr.CloseIdleConnections()
	time.Sleep(100 * time.Millisecond) // the drain has ended
	if n := idle(tr, s.URL); n != 0 {
		t.Errorf("%d connections pooled after CloseIdleConnections", n)
	}
}

// TestHugeHead: an answer whose head is over MaxHeaderBytes is an error,
// not read on.
func TestHugeHead(t *testing.T) {
	leakcheck.Check(t)
	addr := rawServer(t, func(c net.Conn) {
		defer c.Close()
		http.ReadRequest(bufio.NewReader(c))
		io.WriteString(c, "HTTP/1.1 200 OK\r\nX-Big: ")
		chunk := strings.Repeat("a", 64<<10)
		for range (MaxHeaderBytes / len(chunk)) + 2 {
			if _, err := io.WriteString(c, chunk); err != nil {
				return
			}
		}
	})
	c := &http.Client{Transport: newTransport(t, Options{})}
	_, err := c.Get("http://" + addr)
	if err == nil || !strings.Contains(err.Error(), "head is over") {
		t.Errorf("an answer with a head over %d bytes: %v", MaxHeaderBytes, err)
	}
}

// countWrites counts a connection's writes.
type countWrites struct {
	net.Conn
	n *atomic.Int64
}

func (c countWrites) Write(b []byte) (int, error) {
	c.n.Add(1)
	return c.Conn.Write(b)
}

// TestLargeBodyWrites: a large body goes to the connection in large
// writes, not one for each 4 kB of the write buffer.
func TestLargeBodyWrites(t *testing.T) {
	leakcheck.Check(t)
	s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		fmt.Fprint(w, n)
	}))
	var writes atomic.Int64
	tr := newTransport(t, Options{Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countWrites{c, &writes}, nil
	}})
	c := &http.Client{Transport: tr}
	const size = 256 << 10
	for _, body := range []io.Reader{bytes.NewReader(make([]byte, size)), io.MultiReader(bytes.NewReader(make([]byte, size)))} {
		writes.Store(0)
		req, _ := http.NewRequest(http.MethodPost, s.URL, body)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != fmt.Sprint(size) {
			t.Errorf("the server read %s bytes, want %d", b, size)
		}
		if n := writes.Load(); n > 16 {
			t.Errorf("a %d kB body (%T) took %d writes; want 16 or fewer (32 kB each)", size>>10, body, n)
		}
	}
}

// TestTwoHosts: one transport calling two hosts in turn keeps a pool for
// each, and each call reaches its own host.
func TestTwoHosts(t *testing.T) {
	leakcheck.Check(t)
	a := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "a") }))
	b := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "b") }))
	c := &http.Client{Transport: newTransport(t, Options{})}
	for range 5 {
		if got := post(t, c, a.URL, ""); got != "a" {
			t.Fatalf("a call to a answered %q", got)
		}
		if got := post(t, c, b.URL, ""); got != "b" {
			t.Fatalf("a call to b answered %q", got)
		}
	}
	if a.conns.Load() != 1 || b.conns.Load() != 1 {
		t.Errorf("connections: %d to a, %d to b; want 1 each", a.conns.Load(), b.conns.Load())
	}
}

// TestBadHeadWhileWriting: an answer that cannot be read while a large
// body is still being written (its upstream reads none of it) ends the
// call with the read's error, and the write with it.
func TestBadHeadWhileWriting(t *testing.T) {
	leakcheck.Check(t)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) }) // before the leak check
	addr := rawServer(t, func(c net.Conn) {
		defer c.Close()
		bufio.NewReader(c).ReadString('\n') // the request line, then nothing more is read
		io.WriteString(c, "NOT HTTP\r\n\r\n")
		<-stop // the connection stays open, unread
	})
	c := &http.Client{Transport: newTransport(t, Options{})}
	done := make(chan error, 1)
	go func() {
		_, err := c.Post("http://"+addr, "application/json", strings.NewReader(strings.Repeat("x", 32<<20)))
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "malformed HTTP") {
			t.Errorf("the call ended with %v, want the malformed answer's error", err)
		}
	case <-time.After(time.Second):
		t.Fatal("the call waited on its write after its answer failed")
	}
}
