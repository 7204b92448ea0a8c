package upstream

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/mcpx-dev/mcpx/runtime/budget"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
)

// sseConn is an upstream on the 2024-11-05 HTTP+SSE transport (config
// "type": "sse"): one GET opens the event stream, whose first event,
// "endpoint", names the URI every message is POSTed to; the server's
// answers, requests and notifications all arrive on that stream as
// "message" events. It is one long connection, like a process's stdout:
// responses are matched to their calls by id, and the stream ending ends
// the connection (the Client restarts it at the next call, with backoff).
type sseConn struct {
	spec    Spec
	client  *http.Client
	log     *slog.Logger
	noisy   *slog.Logger
	handler handlerFunc
	out     *outbox

	endpoint string // where messages go, resolved against spec.URL
	stop     context.CancelFunc
	reading  sync.WaitGroup

	mu      sync.Mutex
	d       *edge.Dialect
	pending waiting
	gone    chan struct{}
	why     error // why the connection ended
}

// maxRefusalBody is how much of a refused POST's body its error quotes.
const maxRefusalBody = 512

// dialSSE opens the event stream and waits, within ctx, for its endpoint
// event.
func dialSSE(ctx context.Context, spec Spec, log, noisy *slog.Logger, handler handlerFunc) (*sseConn, error) {
	base, err := url.Parse(spec.URL)
	if err != nil {
		return nil, fmt.Errorf("the SSE url: %w", err)
	}
	s := &sseConn{spec: spec, client: httpClient(spec), log: log, noisy: noisy, handler: handler,
		pending: waiting{}, gone: make(chan struct{})}
	s.out = newOutbox(s.post, noisy, spec.sendWait, spec.sendQueue)
	// The stream lives as long as the connection, not as the dial's ctx.
	sctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, spec.URL, nil)
	if err != nil {
		stop()
		return nil, err
	}
	for k, v := range spec.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	type dialed struct {
		resp *http.Response
		err  error
	}
	got := make(chan dialed, 1)
	go func() {
		resp, err := s.client.Do(req)
		got <- dialed{resp, err}
	}()
	var resp *http.Response
	select {
	case d := <-got:
		if d.err != nil {
			stop()
			return nil, fmt.Errorf("GET the SSE stream: %w", d.err)
		}
		resp = d.resp
	case <-ctx.Done():
		stop()
		go func() { // a response that comes now is closed, not leaked
			if d := <-got; d.resp != nil {
				d.resp.Body.Close()
			}
		}()
		return nil, fmt.Errorf("GET the SSE stream: no answer in time (%w)", ctx.Err())
	}
	ct, _, _ := streamhttp.MediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		resp.Body.Close()
		stop()
		return nil, fmt.Errorf("GET the SSE stream: HTTP %d with Content-Type %q, not an event stream (is it a Streamable HTTP server? then its \"type\" is \"http\")", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	endpoint := make(chan error, 1)
	s.reading.Add(1)
	go func() {
		defer s.reading.Done()
		defer resp.Body.Close()
		s.read(sctx, base, resp.Body, endpoint)
	}()
	select {
	case err := <-endpoint:
		if err != nil {
			s.close()
			return nil, err
		}
	case <-ctx.Done():
		s.close()
		return nil, fmt.Errorf("the SSE stream sent no endpoint event in time (%w)", ctx.Err())
	}
	return s, nil
}

// read serves the stream's events until it ends, then ends the
// connection. The first endpoint event (or the stream's end before one)
// is reported on endpoint. Each line is read into a buffer of its own,
// counted in the large-message budget, as on every other upstream stream;
// an event the budget has no room for is dropped, and the call it answers
// is told why.
func (s *sseConn) read(ctx context.Context, base *url.URL, body io.Reader, endpoint chan<- error) {
	found := false
	report := func(err error) {
		if !found {
			found = true
			endpoint <- err
		}
	}
	br := bufio.NewReaderSize(body, 64<<10)
	b := budget.Default()
	h := b.Hold() // the event's
	defer func() { h.Release() }()
	var event string
	var data []byte
	dropped := false
	for {
		line, err := budget.ReadLine(ctx, br, maxLine, h)
		var refused *budget.Refused
		if errors.As(err, &refused) {
			s.refused(refused)
			dropped, data, h = true, nil, b.Hold()
			continue
		}
		if errors.Is(err, budget.ErrTooLong) {
			err = fmt.Errorf("it sent an event line over %d MiB", maxLine>>20)
			report(err)
			s.die(err)
			return
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0: // the event ends (one cut short by the stream's end is not dispatched)
			if err == nil && !dropped && data != nil {
				if event == "endpoint" {
					if !found {
						u, eerr := endpointURL(base, string(data))
						if eerr == nil {
							s.endpoint = u
						}
						report(eerr)
						if eerr != nil {
							s.die(eerr)
							return
						}
					}
				} else if event == "" || event == "message" {
					s.message(data, h)
				}
			}
			event, data, dropped = "", nil, false
			h.Release()  // what the event counted, unless a caller took it
			h = b.Hold() // a caller that took it zeroed it
		case line[0] == ':': // a comment (keep-alive)
		default:
			field, value, _ := bytes.Cut(line, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			switch string(field) {
			case "event":
				event = string(value)
			case "data":
				if data == nil {
					data = value
				} else {
					data = append(append(data, '\n'), value...)
				}
			}
		}
		if err != nil {
			why := errors.New("the upstream's SSE stream ended")
			if err != io.EOF {
				why = fmt.Errorf("the upstream's SSE stream failed: %w", err)
			}
			if !found {
				why = fmt.Errorf("%w before its endpoint event", why)
			}
			report(why)
			s.die(why)
			return
		}
	}
}

// endpointURL resolves an endpoint event's URI against the SSE URL. Only
// one on the SSE URL's own origin is taken: messages carry the headers
// configured for that server (its credentials), which must not go to a
// host the config never named.
func endpointURL(base *url.URL, data string) (string, error) {
	ref, err := url.Parse(strings.TrimSpace(data))
	if err != nil || strings.TrimSpace(data) == "" {
		return "", fmt.Errorf("the upstream's endpoint event is not a URI (%q)", truncate([]byte(data), 200))
	}
	u := base.ResolveReference(ref)
	if u.Scheme != base.Scheme || u.Host != base.Host {
		return "", fmt.Errorf("the upstream's endpoint event names %s, not on the SSE url's origin %s://%s; mcpx posts only to the origin the config names",
			safeOrigin(u), base.Scheme, base.Host)
	}
	return u.String(), nil
}

// safeOrigin is u's scheme, host and path, without userinfo or query.
func safeOrigin(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.Fragment, c.RawFragment = nil, "", "", ""
	return c.String()
}

// message serves one message event; a response goes, with h, to the call
// waiting for it.
func (s *sseConn) message(data []byte, h *budget.Hold) {
	msgs, errs, _ := jsonrpc.Decode(data, false)
	if errs[0] != nil {
		s.noisy.Warn("the upstream sent an event that is not a JSON-RPC message; ignored", "data", truncate(data, 200))
		return
	}
	m := msgs[0]
	if !m.IsResponse() {
		s.handler(s, m, nil)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending.deliver(m, h) // under s.mu: see forget
}

// refused answers the call whose answer the budget had no room for.
func (s *sseConn) refused(r *budget.Refused) {
	s.mu.Lock()
	answer := s.pending.refuse(s.spec.Name, r)
	s.mu.Unlock()
	logDropped(s.log, s.noisy, r, answer)
}

// post sends one message to the endpoint. The transport answers it with
// 202 (its answer, if any, comes on the stream); any other status is the
// message refused, said with the start of the body. 404 is taken as the
// server having forgotten this connection (it restarted): the connection
// ends, and the next call opens a new one.
func (s *sseConn) post(ctx context.Context, m *jsonrpc.Message) error {
	body, err := jsonrpc.Encode(m)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	hd := make(http.Header, len(s.spec.Headers)+1)
	for k, v := range s.spec.Headers {
		hd.Set(k, v)
	}
	hd["Content-Type"] = jsonContentType
	req.Header = hd
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, maxRefusalBody))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // so the connection is reused
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	err = fmt.Errorf("the upstream refused the message with HTTP %d", resp.StatusCode)
	if t := strings.TrimSpace(validTail(excerpt)); t != "" {
		err = fmt.Errorf("%w: %s", err, truncate([]byte(t), 200))
	}
	if resp.StatusCode == http.StatusNotFound {
		s.die(fmt.Errorf("%w (it no longer knows this connection)", err))
	}
	return err
}

func (s *sseConn) roundTrip(ctx context.Context, m *jsonrpc.Message, _ string) (*jsonrpc.Message, error) {
	ch := make(chan reply, 1)
	s.mu.Lock()
	select {
	case <-s.gone:
		s.mu.Unlock()
		return nil, s.deadErr()
	default:
	}
	s.pending[string(m.ID)] = ch
	s.mu.Unlock()
	if err := s.post(ctx, m); err != nil {
		s.forget(m.ID, ch)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return nil, s.deadErr()
		}
		r.hold.Keep(ctx) // counted until the client has its answer
		return r.m, nil
	case <-ctx.Done():
		s.forget(m.ID, ch)
		return nil, ctx.Err()
	}
}

// forget stops waiting for the answer to id on ch, giving back what an
// answer already sent there held.
func (s *sseConn) forget(id []byte, ch chan reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, string(id))
	select {
	case r, ok := <-ch:
		if ok {
			r.hold.Release()
		}
	default:
	}
}

func (s *sseConn) notify(ctx context.Context, m *jsonrpc.Message) error { return s.post(ctx, m) }

func (s *sseConn) send(m *jsonrpc.Message) { s.out.send(m) }

func (s *sseConn) setDialect(d *edge.Dialect) {
	s.mu.Lock()
	s.d = d
	s.mu.Unlock()
}

func (s *sseConn) cancelsByNotification() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.d == nil || s.d.CancelsByNotification()
}

func (s *sseConn) dead() <-chan struct{} { return s.gone }

// die ends the connection for why: the stream is closed, and every call
// waiting on it fails saying why.
func (s *sseConn) die(why error) {
	s.mu.Lock()
	select {
	case <-s.gone:
		s.mu.Unlock()
		return
	default:
	}
	s.why = why
	s.pending.endAll()
	close(s.gone)
	s.mu.Unlock()
	s.stop()
	s.out.close() // the Client's watch logs why
}

func (s *sseConn) deadErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.why != nil {
		return s.why
	}
	return errors.New("the upstream's SSE connection was closed")
}

// close ends the stream (which is how this transport ends a session) and
// waits for its reader and what was being sent.
func (s *sseConn) close() error {
	s.die(nil)
	s.reading.Wait()
	s.out.wait()
	s.client.CloseIdleConnections()
	return nil
}
