package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/budget"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/tracing"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
	"github.com/mcpx-dev/mcpx/runtime/upstream/h1"
)

// maxBody bounds what mcpx reads from an upstream's HTTP answer.
const maxBody = 64 << 20

// maxIdleConns is how many idle connections mcpx keeps to one upstream.
const maxIdleConns = 256

// httpConn is an upstream reached over Streamable HTTP. Each request is
// its own POST; a legacy upstream's session id is kept and sent back.
type httpConn struct {
	spec    Spec
	client  *http.Client
	log     *slog.Logger
	handler handlerFunc
	out     *outbox // cancellations and replies, each a POST within spec.sendWait

	// version is the Mcp-Protocol-Version value last sent, shared by
	// the requests that send it again (net/http only reads it).
	version atomic.Pointer[[]string]
	// names are the Mcp-Name values sent, by name, shared likewise: a
	// call names one of the upstream's tools, prompts or resources.
	names atomic.Pointer[map[string][]string]

	// tmpl and rt, when set, are how a POST is made and sent without
	// net/http's Client on its first hop (outreq.go): tmpl is the
	// request every POST copies (its URL parsed once), rt the Client's
	// transport.
	tmpl *http.Request
	rt   http.RoundTripper

	mu      sync.Mutex
	session string
	d       *edge.Dialect
	gone    chan struct{}
	once    sync.Once
	streams sync.WaitGroup // the GET stream, waited for by close
}

// httpClient is the client an HTTP upstream (either transport) is reached
// with: spec.Transport, else its own (ownTransport).
func httpClient(spec Spec) *http.Client {
	tr := spec.Transport
	if tr == nil {
		tr = ownTransport()
	}
	return &http.Client{Transport: tr}
}

// ownTransport is mcpx's transport to an HTTP upstream: h1's for http://
// (each call written and answered in its own goroutine), a clone of
// http.DefaultTransport for the rest (https, proxied). Its own, since the
// default keeps 2 idle connections per host, so 32 concurrent calls to
// one upstream would dial most of the time. With the environment's
// MCPX_UPSTREAM_HTTP=nethttp the clone carries http:// too.
func ownTransport() http.RoundTripper {
	own := http.DefaultTransport.(*http.Transport).Clone()
	own.MaxIdleConns, own.MaxIdleConnsPerHost = maxIdleConns, maxIdleConns
	if netHTTPOnly() {
		return own
	}
	return h1.New(own, h1.Options{MaxIdlePerHost: maxIdleConns})
}

// netHTTPOnly reports whether MCPX_UPSTREAM_HTTP asks for net/http's
// Transport for every upstream: a way back should h1 not suit one, and
// the other side of an A/B of the two in one binary (BENCHMARKS.md).
var netHTTPOnly = sync.OnceValue(func() bool { return os.Getenv("MCPX_UPSTREAM_HTTP") == "nethttp" })

func dialHTTP(spec Spec, log, noisy *slog.Logger, handler handlerFunc) (*httpConn, error) {
	h := &httpConn{spec: spec, client: httpClient(spec), log: log, handler: handler, gone: make(chan struct{})}
	h.tmpl, h.rt = directPost(h.client, spec.URL)
	h.out = newOutbox(h.notify, noisy, spec.sendWait, spec.sendQueue)
	return h, nil
}

func (h *httpConn) setDialect(d *edge.Dialect) {
	h.mu.Lock()
	h.d = d
	session := h.session
	h.mu.Unlock()
	if session != "" {
		// A legacy session: the server speaks unasked (list changes) on
		// the stream a GET opens.
		h.streams.Add(1)
		go h.standalone()
	}
}

// standalone holds the legacy session's GET stream open until the
// connection closes, handing what arrives to the handler. A server that
// offers none answers 405, which is fine.
func (h *httpConn) standalone() {
	defer h.streams.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-h.gone:
			cancel()
		case <-ctx.Done():
		}
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.spec.URL, nil)
	if err != nil {
		return
	}
	for k, v := range h.spec.Headers {
		req.Header.Set(k, v)
	}
	h.mu.Lock()
	version, _ := edge.VersionHeader(h.d, nil)
	req.Header.Set("Mcp-Session-Id", h.session)
	h.mu.Unlock()
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("MCP-Protocol-Version", version)
	resp, err := h.client.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	if ct, _, _ := streamhttp.MediaType(resp.Header.Get("Content-Type")); resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		return
	}
	if _, err := h.readSSE(ctx, nil, resp.Body); err != nil && ctx.Err() == nil {
		h.log.Info("the upstream's GET stream ended", "err", err)
	}
}

func (h *httpConn) cancelsByNotification() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.d == nil || h.d.CancelsByNotification()
}

func (h *httpConn) dead() <-chan struct{} { return h.gone }

func (h *httpConn) die() {
	h.once.Do(func() {
		close(h.gone)
		h.out.close()
	})
}

// Header values every request shares: net/http only reads them, and one
// slice each saves allocating them per request.
var (
	jsonContentType = []string{"application/json"}
	acceptBoth      = []string{"application/json, text/event-stream"}
	// methodHeader is the Mcp-Method value of each method mcpx sends.
	methodHeader = func() map[string][]string {
		m := map[string][]string{}
		for _, cm := range mcp.ClientMethods {
			m[cm.Name] = []string{cm.Name}
		}
		return m
	}()
)

// versionHeader is the Mcp-Protocol-Version value of version.
func (h *httpConn) versionHeader(version string) []string {
	if v := h.version.Load(); v != nil && (*v)[0] == version {
		return *v
	}
	v := []string{version}
	h.version.Store(&v)
	return v
}

// maxNameHeaders bounds httpConn.names; a name past it is made per request.
const maxNameHeaders = 512

// nameHeader is the Mcp-Name value of name. names is copied to add one:
// lookups take no lock, and the names an upstream has are few.
func (h *httpConn) nameHeader(name string) []string {
	old := h.names.Load()
	var names map[string][]string
	if old != nil {
		names = *old
	}
	if v, ok := names[name]; ok {
		return v
	}
	v := []string{headerSafe(name)}
	if len(names) < maxNameHeaders {
		m := make(map[string][]string, len(names)+1)
		maps.Copy(m, names)
		m[name] = v
		h.names.CompareAndSwap(old, &m) // lost to another: made again next time
	}
	return v
}

// headers sets what the request's revision requires. mcpName is the value
// Mcp-Name mirrors, "" for a method that mirrors none.
func (h *httpConn) headers(req *http.Request, m *jsonrpc.Message, mcpName string) {
	hd := make(http.Header, len(h.spec.Headers)+6)
	for k, v := range h.spec.Headers {
		hd.Set(k, v)
	}
	hd["Content-Type"] = jsonContentType
	hd["Accept"] = acceptBoth
	h.mu.Lock()
	d, session := h.d, h.session
	h.mu.Unlock()
	version, modern := edge.VersionHeader(d, m)
	if version != "" {
		hd["Mcp-Protocol-Version"] = h.versionHeader(version)
	}
	if modern {
		method, ok := methodHeader[m.Method]
		if !ok {
			method = []string{m.Method}
		}
		hd["Mcp-Method"] = method
		if mcpName != "" {
			hd["Mcp-Name"] = h.nameHeader(mcpName)
		}
	}
	if session != "" {
		hd["Mcp-Session-Id"] = []string{session}
	}
	req.Header = hd
}

// headerSafe is v as a header value: itself when it is visible ASCII
// without surrounding space, else the base64 form 2026-07-28 defines.
func headerSafe(v string) string {
	safe := strings.TrimSpace(v) == v && !(strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?="))
	for i := 0; i < len(v) && safe; i++ {
		safe = v[i] >= 0x20 && v[i] <= 0x7e
	}
	if safe {
		return v
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}

func (h *httpConn) post(ctx context.Context, m *jsonrpc.Message, mcpName string) (*http.Response, error) {
	req, err := h.newMessagePost(ctx, m)
	if err != nil {
		return nil, err
	}
	h.headers(req, m, mcpName)
	tracing.InjectHeaders(ctx, req.Header) // W3C trace context: the call's span, as in _meta
	resp, err := h.do(req)
	if err != nil {
		return nil, err
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" && m.Method == mcp.MethodInitialize {
		h.mu.Lock()
		h.session = id
		h.mu.Unlock()
	}
	if resp.StatusCode == http.StatusNotFound && h.hasSession() {
		resp.Body.Close()
		h.die() // the session is gone: the next call starts a new one
		return nil, errors.New("the upstream ended the session (HTTP 404)")
	}
	return resp, nil
}

// newMessagePost is the POST of m, its long params sent from where they
// are rather than copied in with the envelope.
func (h *httpConn) newMessagePost(ctx context.Context, m *jsonrpc.Message) (*http.Request, error) {
	if len(m.Params) >= framedMin {
		if head, params, tail, ok := jsonrpc.FramedRequest(m); ok {
			return h.newFramedPost(ctx, head, params, tail)
		}
	}
	body, err := jsonrpc.Encode(m)
	if err != nil {
		return nil, err
	}
	return h.newPost(ctx, body)
}

func (h *httpConn) hasSession() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.session != ""
}

func (h *httpConn) roundTrip(ctx context.Context, m *jsonrpc.Message, mcpName string) (*jsonrpc.Message, error) {
	resp, err := h.post(ctx, m, mcpName)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	ct, _, _ := streamhttp.MediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "text/event-stream":
		return h.readSSE(ctx, m.ID, resp.Body)
	case "application/json":
		hold := budget.Default().Hold()
		b, err := readAnswer(ctx, resp, hold)
		if budget.IsBusy(err) {
			h.log.Warn("a large answer from the upstream was dropped", "why", err)
			return busyAnswer(h.spec.Name, &budget.Refused{ID: m.ID, Err: err}), nil
		}
		if err != nil {
			return nil, err
		}
		msgs, errs, _ := jsonrpc.Decode(b, false)
		if errs[0] != nil || !msgs[0].IsResponse() {
			hold.Release()
			return nil, fmt.Errorf("HTTP %d with a body that is not a JSON-RPC response", resp.StatusCode)
		}
		hold.Keep(ctx)      // counted until the client has its answer
		return msgs[0], nil // an error body (400 with -32022, say) is the answer too
	}
	return nil, fmt.Errorf("HTTP %d with Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
}

// readAnswer reads a JSON answer of at most maxBody bytes into one buffer,
// counted in h: of its declared length when it has one (the upstream's
// word, within maxBody and the budget), else grown as it arrives. A body
// the budget has no room for is a *budget.BusyError.
func readAnswer(ctx context.Context, resp *http.Response, h *budget.Hold) ([]byte, error) {
	size := int64(512)
	if n := resp.ContentLength; n > maxBody {
		return nil, fmt.Errorf("HTTP %d with a body of %d bytes, over the %d MiB mcpx reads", resp.StatusCode, n, maxBody>>20)
	} else if n >= 0 {
		size = n + 1 // +1: io.EOF is read without growing
	}
	if err := h.Add(ctx, size); err != nil {
		return nil, err
	}
	b := make([]byte, 0, size)
	body := io.LimitReader(resp.Body, maxBody+1)
	for {
		if len(b) == cap(b) {
			grown := append(b, 0)[:len(b)]
			if err := h.Add(ctx, int64(cap(grown)-cap(b))); err != nil {
				return nil, err
			}
			b = grown
		}
		n, err := body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if len(b) > maxBody {
			h.Release()
			return nil, fmt.Errorf("HTTP %d with a body over the %d MiB mcpx reads", resp.StatusCode, maxBody>>20)
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			h.Release()
			return nil, err
		}
	}
}

// readSSE reads events until the response to id arrives; the others go to
// the handler. Each line is read into a buffer of its own, counted in the
// large-message budget; an event the budget has no room for is dropped,
// and when it is on a request's stream, the request is answered with an
// error saying so (the event was most likely its answer).
func (h *httpConn) readSSE(ctx context.Context, id json.RawMessage, body io.Reader) (*jsonrpc.Message, error) {
	br := bufio.NewReaderSize(io.LimitReader(body, maxBody), 64<<10)
	b := budget.Default()
	hold := b.Hold() // the event's
	defer func() { hold.Release() }()
	var data []byte
	dropped := false
	for {
		line, err := budget.ReadLine(ctx, br, maxLine, hold)
		var refused *budget.Refused
		if errors.As(err, &refused) {
			if id != nil {
				h.log.Warn("a large answer from the upstream was dropped", "why", refused.Err)
				return busyAnswer(h.spec.Name, &budget.Refused{ID: id, Err: refused.Err}), nil
			}
			h.log.Warn("a large message from the upstream was dropped", "why", refused.Err)
			data, dropped, hold = nil, true, b.Hold()
			continue
		}
		if errors.Is(err, budget.ErrTooLong) {
			return nil, bufio.ErrTooLong
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case bytes.HasPrefix(line, []byte("data:")) && !dropped:
			v := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
			if data == nil {
				data = v // the line's own buffer: no copy for a one-line event
			} else {
				data = append(data, v...)
			}
		case len(line) == 0: // the event ends
			if len(data) > 0 && !dropped {
				msgs, errs, _ := jsonrpc.Decode(data, false)
				if errs[0] == nil {
					m := msgs[0]
					if id != nil && m.IsResponse() && bytes.Equal(m.ID, id) {
						hold.Keep(ctx) // counted until the client has its answer
						hold = nil
						return m, nil
					}
					h.handler(h, m, id)
				}
			}
			data, dropped = nil, false
			hold.Release() // what the event's lines (comments too) counted
		}
		if err != nil {
			if err == io.EOF {
				return nil, errors.New("the upstream's event stream ended without a response")
			}
			return nil, err
		}
	}
}

func (h *httpConn) send(m *jsonrpc.Message) { h.out.send(m) }

func (h *httpConn) notify(ctx context.Context, m *jsonrpc.Message) error {
	resp, err := h.post(ctx, m, "")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		return fmt.Errorf("the upstream refused a %s with HTTP %d", m.Method, resp.StatusCode)
	}
	return nil
}

// close ends a legacy session with DELETE, as the transport asks, within
// spec.sendWait; what was still being sent in the background is dropped.
func (h *httpConn) close() error {
	h.die()
	defer h.client.CloseIdleConnections() // last: the GET stream's and the DELETE's too
	defer h.streams.Wait()
	h.out.wait()
	h.mu.Lock()
	session := h.session
	h.mu.Unlock()
	if session == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), h.spec.sendWait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, h.spec.URL, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Mcp-Session-Id", session)
	for k, v := range h.spec.Headers {
		req.Header.Set(k, v)
	}
	resp, err := h.client.Do(req)
	if err == nil {
		resp.Body.Close()
	}
	return nil
}
