// Package streamhttp serves MCP over Streamable HTTP at one endpoint, for
// every revision mcpx serves: 2025-03-26 to 2025-11-25 with their sessions
// (Mcp-Session-Id, DELETE, the GET stream), and 2026-07-28 statelessly,
// each request on its own. The caller mounts the [Handler] at its MCP
// endpoint (for example /mcp); [ListenAndServe] does that.
//
// Which revision a POST is in is decided once, by [edge.Classify], from
// the MCP-Protocol-Version header and params._meta. A 2026-07-28 request
// gets a fresh edge session, its Mcp-Method, Mcp-Name and Mcp-Param-*
// headers are checked against the body, and any Mcp-Session-Id is ignored.
// A legacy one's Mcp-Session-Id names the session whose negotiated
// revision governs; without one, the header does; without that,
// 2025-03-26 (edge.Headerless). The edge does the rest (package edge).
//
// A request is answered with JSON unless it produces notifications while
// it runs and the client accepts text/event-stream: the response then
// becomes an SSE stream carrying them and, last, the response.
// subscriptions/listen is an SSE stream held until the client closes it
// (which cancels the request) or [Handler.Close]. Streams are not
// resumable: Last-Event-ID is ignored.
//
// Every request is checked against DNS rebinding first: an Origin that is
// neither loopback nor configured, or (on a loopback listener) a Host that
// does not name this machine, is 403. Every 4xx and 5xx answer carries a
// JSON-RPC error object; a panic while serving is 500 with -32603. The
// limits are in [Options].
package streamhttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcpx-dev/mcpx/runtime/auth"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/budget"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// Options are the limits of one endpoint. The zero value uses the defaults
// named on each field.
type Options struct {
	// MaxBody is the largest request body accepted, in bytes; 0 means
	// 4 MiB. A larger body is answered 413, at once when its declared
	// Content-Length is larger.
	MaxBody int64
	// BodyTimeout is how long a request body may take to arrive once its
	// headers are read; 0 means 30 seconds. A slower body is answered 408.
	BodyTimeout time.Duration
	// ShutdownGrace is how long requests still running when the handler
	// is closed (a shutdown) may take to finish on their own; 0 means 2
	// seconds. Then they are cancelled, and each is answered with a
	// JSON-RPC error (-32603) saying the server is shutting down, well
	// within ListenAndServe's ShutdownTimeout.
	ShutdownGrace time.Duration
	// MaxSessions is how many legacy sessions are held at once; 0 means
	// 1024. An initialize beyond that ends the session unused the longest
	// of those with no request in progress and no stream held (its id
	// then gets 404); when every session is in use it is answered 503
	// with Retry-After.
	MaxSessions int
	// SessionIdle drops a legacy session that no request or stream has
	// used for this long; 0 means 30 minutes. Its id then gets 404.
	SessionIdle time.Duration
	// MaxStreams is how many SSE streams may be held open at once: GET
	// streams, subscriptions/listen and POST responses that turned into
	// streams; 0 means 256. A GET or subscriptions/listen beyond it is
	// answered 503 with Retry-After; any other request beyond it is answered with JSON and
	// its notifications are dropped.
	MaxStreams int
	// MaxInFlight is how many requests may be in progress at once, held
	// streams (GET, subscriptions/listen) aside; 0 means 1024. A request
	// beyond it is answered 503 with Retry-After, before it is handled.
	// It also bounds how many POST bodies are being read at once: a POST
	// beyond that is answered 503 with Retry-After before its body is
	// read, so that slow uploads cannot hold more than MaxInFlight bodies.
	MaxInFlight int
	// KeepAlive is how often a held SSE stream gets a comment line so that
	// intermediaries and clients do not time it out; 0 means 15 seconds.
	KeepAlive time.Duration
	// WriteTimeout bounds each write on an SSE stream (an event, a
	// keep-alive comment, the headers); 0 means 10 seconds. A client that
	// does not take one for that long has its stream ended and its request
	// cancelled. Notifications wait for the stream's writer in a queue of
	// StreamQueue, so that no one else waits on a slow client.
	WriteTimeout time.Duration
	// AllowedOrigins are the origins (scheme://host[:port], compared
	// exactly but for case) allowed besides loopback ones, which are
	// always allowed. A request with any other Origin header is answered
	// 403. When the server listens on a loopback address, the hosts of
	// these origins are also accepted in the Host header.
	AllowedOrigins []string
	// Logger receives the transport's own log lines; nil means
	// slog.Default().
	Logger *slog.Logger
	// Shared, when set, shares the legacy sessions with other replicas
	// (shared.go); nil keeps them in this process.
	Shared *Shared
}

// Handler is the MCP endpoint. Create it with [New]; stop it with Close.
type Handler struct {
	e            *edge.Edge
	log          *slog.Logger
	maxBody      int64
	bodyTimeout  time.Duration
	writeTimeout time.Duration
	origins      []string
	originHosts  []string

	sessions *sessions
	shared   *Shared        // nil: sessions are this process's alone
	unasked  chan unasked   // notifications for sessions' streams elsewhere (shared.go)
	live     liveness       // which replicas answer on the bus (sharedsubs.go)
	beats    keepAlives     // the held streams' keep-alives (sse.go)
	taken    sync.WaitGroup // streams whose connection was taken over (held.go)
	streams  chan struct{}  // one token per open SSE stream
	inFlight chan struct{}  // one token per request in progress
	reading  chan struct{}  // one token per POST body being read

	// hold ends the held streams (GET, subscriptions/listen) on Close.
	hold     context.Context
	stopHold context.CancelFunc
	closed   atomic.Bool
	once     sync.Once

	// running ends the requests in progress ShutdownGrace after Close;
	// a single POST's is cancelled through posts.
	running     context.Context
	stopRunning context.CancelFunc
	posts       liveSet
	grace       time.Duration
}

// New returns the endpoint serving e.
func New(e *edge.Edge, opt Options) *Handler {
	if opt.MaxBody <= 0 {
		opt.MaxBody = 4 << 20
	}
	if opt.BodyTimeout <= 0 {
		opt.BodyTimeout = 30 * time.Second
	}
	if opt.MaxSessions <= 0 {
		opt.MaxSessions = 1024
	}
	if opt.SessionIdle <= 0 {
		opt.SessionIdle = 30 * time.Minute
	}
	if opt.MaxStreams <= 0 {
		opt.MaxStreams = 256
	}
	if opt.MaxInFlight <= 0 {
		opt.MaxInFlight = 1024
	}
	if opt.KeepAlive <= 0 {
		opt.KeepAlive = 15 * time.Second
	}
	if opt.WriteTimeout <= 0 {
		opt.WriteTimeout = 10 * time.Second
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	h := &Handler{
		e:            e,
		log:          opt.Logger,
		maxBody:      opt.MaxBody,
		bodyTimeout:  opt.BodyTimeout,
		writeTimeout: opt.WriteTimeout,
		sessions:     newSessions(opt.MaxSessions, opt.SessionIdle),
		beats:        keepAlives{every: opt.KeepAlive},
		streams:      make(chan struct{}, opt.MaxStreams),
		inFlight:     make(chan struct{}, opt.MaxInFlight),
		reading:      make(chan struct{}, opt.MaxInFlight),
	}
	for _, o := range opt.AllowedOrigins {
		o = strings.TrimSuffix(o, "/")
		h.origins = append(h.origins, o)
		if u, err := url.Parse(o); err == nil && u.Hostname() != "" {
			h.originHosts = append(h.originHosts, u.Hostname())
		}
	}
	h.hold, h.stopHold = context.WithCancel(context.Background())
	h.running, h.stopRunning = context.WithCancel(context.Background())
	h.grace = opt.ShutdownGrace
	if h.grace <= 0 {
		h.grace = 2 * time.Second
	}
	if opt.Shared != nil {
		h.shared, h.unasked = opt.Shared, make(chan unasked, 1024)
		ended, stop := opt.Shared.Bus.Subscribe(topicEnded)
		go h.watchShared(h.hold, ended, stop)
		unsubs, stopUnsubs := opt.Shared.Bus.Subscribe(topicUnsubscribe)
		go h.watchUnsubscribes(h.hold, unsubs, stopUnsubs)
		go h.publishUnasked(h.hold)
		opt.Shared.Bus.Handle(requestAlive, func(context.Context, string, []byte) ([]byte, error) { return nil, nil })
	}
	return h
}

// Close ends the held streams (GET streams and subscriptions/listen,
// which get their final result) and forgets every session; later requests
// are answered 503. Requests still running get ShutdownGrace to finish,
// so that a graceful shutdown can wait for them; then they are cancelled
// and answered with a JSON-RPC error saying the server is shutting down.
// It may be called more than once.
func (h *Handler) Close() {
	h.once.Do(func() {
		h.closed.Store(true)
		h.stopHold()
		h.sessions.close()
		time.AfterFunc(h.grace, func() {
			h.stopRunning()
			h.posts.cancelAll()
		})
	})
}

// liveSet is the single POSTs running, which a shutdown cancels once
// ShutdownGrace has passed (Close): each one's stream, in one of a few
// shards. A context.AfterFunc on running per request was two
// allocations, and a lock every request in flight took twice.
type liveSet struct {
	next   atomic.Uint32
	shards [liveShards]liveShard
}

const liveShards = 8

type liveShard struct {
	mu sync.Mutex
	m  map[*stream]struct{}
	_  [48]byte // a cache line of its own
}

// add records s, whose cancel ends its request, until the shard's remove;
// a request added once running has ended is cancelled at once.
func (l *liveSet) add(h *Handler, s *stream) *liveShard {
	sh := &l.shards[l.next.Add(1)%liveShards]
	sh.mu.Lock()
	if sh.m == nil {
		sh.m = make(map[*stream]struct{})
	}
	sh.m[s] = struct{}{}
	sh.mu.Unlock()
	// Either cancelAll finds s, or it ran before the lock above, after
	// stopRunning: then Err is seen here.
	if h.running.Err() != nil {
		s.cancel()
	}
	return sh
}

func (sh *liveShard) remove(s *stream) {
	sh.mu.Lock()
	delete(sh.m, s)
	sh.mu.Unlock()
}

// cancelAll cancels every request recorded; running has ended.
func (l *liveSet) cancelAll() {
	var cancels []func()
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		for s := range sh.m {
			cancels = append(cancels, s.cancel)
		}
		sh.mu.Unlock()
	}
	for _, cancel := range cancels {
		cancel()
	}
}

// errClosing is the cause of the listens Close ends: mcpx ends them, so
// they get their cancellation and result.
var errClosing = errors.New("the server is shutting down")

// shuttingDown is the answer to request id when a shutdown ended it.
func shuttingDown(id json.RawMessage) *jsonrpc.Message {
	return jsonrpc.ErrorResponse(id, &jsonrpc.Error{Code: jsonrpc.InternalError, Message: "the server is shutting down; the request was not finished"})
}

// stoppedBy reports whether a request whose reply is msg was ended by a
// shutdown rather than finished: the shutdown cancelled the requests
// still running, and the answer is an error or nothing.
func (h *Handler) stoppedBy(msg *jsonrpc.Message) bool {
	return h.running.Err() != nil && (msg == nil || msg.Error != nil)
}

func (h *Handler) takeSlot() bool { return tryAcquire(h.streams) }

// tryAcquire takes a token of the semaphore sem, without waiting.
func tryAcquire(sem chan struct{}) bool {
	select {
	case sem <- struct{}{}:
		return true
	default:
		return false
	}
}

func (h *Handler) giveSlot() { <-h.streams }

// response wraps the ResponseWriter to know whether anything was written,
// so that a panic can still be answered 500.
type response struct {
	http.ResponseWriter
	wrote bool
	id    json.RawMessage // the request's id, once known
}

func (w *response) WriteHeader(code int) { w.wrote = true; w.ResponseWriter.WriteHeader(code) }
func (w *response) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}
func (w *response) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// writeError answers with an HTTP error status and a JSON-RPC error object.
func writeError(w http.ResponseWriter, status int, id json.RawMessage, e *jsonrpc.Error) {
	writeJSON(w, status, jsonrpc.ErrorResponse(id, e))
}

func fail(w http.ResponseWriter, status int, id json.RawMessage, format string, args ...any) {
	code := int64(jsonrpc.InvalidRequest)
	if status >= 500 {
		code = jsonrpc.InternalError
	}
	writeError(w, status, id, &jsonrpc.Error{Code: code, Message: fmt.Sprintf(format, args...)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"the response could not be encoded"}}`)
	}
	writeBody(w, status, b)
}

// unavailable answers 503 with Retry-After, as every 503 of this
// transport is answered: the condition is expected to pass.
func unavailable(w http.ResponseWriter, id json.RawMessage, format string, args ...any) {
	w.Header().Set("Retry-After", "1")
	fail(w, http.StatusServiceUnavailable, id, format, args...)
}

// admit takes a slot for a request about to be handled, or answers 503
// when MaxInFlight are in progress. A slot taken is given back by leave.
func (h *Handler) admit(w http.ResponseWriter, id json.RawMessage) bool {
	if tryAcquire(h.inFlight) {
		return true
	}
	h.log.Warn("MaxInFlight reached; a request was refused", "limit", cap(h.inFlight))
	unavailable(w, id, "too many requests are in progress; try again later")
	return false
}

func (h *Handler) leave() { <-h.inFlight }

// writeBody answers with the JSON parts, one after another. Its length is declared: net/http would
// otherwise send a body over 2 kB chunked.
// jsonType is every JSON answer's Content-Type value.
var jsonType = []string{"application/json"}

func writeBody(w http.ResponseWriter, status int, parts ...[]byte) {
	n := 0
	for _, b := range parts {
		n += len(b)
	}
	h := w.Header()
	h["Content-Type"] = jsonType // shared: net/http only reads it
	h["Content-Length"] = contentLength(n)
	w.WriteHeader(status)
	for _, b := range parts {
		w.Write(b)
	}
}

// contentLengths are the Content-Length values of answers shorter than
// its length, shared as jsonType is, each made when first used: most
// answers are small, and the value was two allocations each.
var contentLengths [4096]atomic.Pointer[[]string]

// contentLength is the Content-Length value of an answer of n bytes.
func contentLength(n int) []string {
	if n < 0 || n >= len(contentLengths) {
		return []string{strconv.Itoa(n)}
	}
	if v := contentLengths[n].Load(); v != nil {
		return *v
	}
	v := []string{strconv.Itoa(n)}
	contentLengths[n].Store(&v)
	return v
}

// ServeHTTP serves the MCP endpoint.
func (h *Handler) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	var pa *postParts // a POST's response is one of its parts
	var w *response
	if r.Method == http.MethodPost {
		pa = new(postParts)
		w = &pa.w
		w.ResponseWriter = rw
	} else {
		w = &response{ResponseWriter: rw}
	}
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		if v == http.ErrAbortHandler {
			panic(v)
		}
		h.log.Error("panic serving an MCP request", "method", r.Method, "panic", v, "stack", string(debug.Stack()))
		if !w.wrote {
			fail(w, http.StatusInternalServerError, w.id, "the server failed while handling the request")
		}
	}()

	if !h.originAllowed(r.Header.Get("Origin")) {
		fail(w, http.StatusForbidden, nil, "the Origin %s is not allowed to use this server", jsonrpc.Quote(r.Header.Get("Origin")))
		return
	}
	if !h.hostAllowed(r) {
		fail(w, http.StatusForbidden, nil, "the Host %s does not name this local server", jsonrpc.Quote(r.Host))
		return
	}
	if h.closed.Load() {
		unavailable(w, nil, "the server is shutting down")
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r, pa)
	case http.MethodGet:
		h.get(w, r)
	case http.MethodDelete:
		h.delete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		fail(w, http.StatusMethodNotAllowed, nil, "the MCP endpoint takes POST (and GET or DELETE with an Mcp-Session-Id), not %s", jsonrpc.Clip(r.Method))
	}
}

// protocolHeader reads MCP-Protocol-Version; "" when it is absent.
func protocolHeader(r *http.Request) string {
	return strings.TrimSpace(r.Header.Get(headerProtocolVersion))
}

// get opens the standalone SSE stream of a legacy session. mcpx sends no
// server-initiated messages yet, so the stream carries keep-alive comments
// until the client leaves, the session ends or the handler closes.
func (h *Handler) get(w *response, r *http.Request) {
	cl := edge.Classify(nil, edge.Seen{HTTP: true, Header: protocolHeader(r)})
	sid := r.Header.Get(headerSessionID)
	if sid == "" || cl.Modern() {
		w.Header().Set("Allow", "POST")
		fail(w, http.StatusMethodNotAllowed, nil, "GET opens the stream of a legacy session and needs its Mcp-Session-Id; send messages with POST")
		return
	}
	if e, status := cl.Refusal(); e != nil {
		writeError(w, status, nil, e)
		return
	}
	if !parseAccept(r.Header.Values("Accept")).sse {
		fail(w, http.StatusNotAcceptable, nil, "GET opens an SSE stream, so Accept must allow text/event-stream")
		return
	}
	ss, err := h.acquireSession(r.Context(), sid, auth.Owner(r.Context()))
	if err != nil {
		sessionRefused(w, nil, sid, err)
		return
	}
	defer h.releaseSession(ss)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(ss.ctx, cancel)()
	defer context.AfterFunc(h.hold, cancel)()

	st := newStream(h, w, cancel)
	defer st.end()
	if !st.reserve() {
		h.log.Warn("MaxStreams reached; a GET stream was refused", "limit", cap(h.streams))
		unavailable(w, nil, "too many open streams; try again later")
		return
	}
	st.hold()
	// The session's stream for what the server says unasked: list changes.
	defer h.e.Attach(ss.es, st.notify)()
	defer h.followShared(ss, st.notify)() // what other replicas have for it
	<-ctx.Done()
}

// delete ends a legacy session.
func (h *Handler) delete(w *response, r *http.Request) {
	sid := r.Header.Get(headerSessionID)
	if sid == "" {
		fail(w, http.StatusBadRequest, nil, "DELETE ends a session and needs its Mcp-Session-Id header")
		return
	}
	ok, err := h.endSession(r.Context(), sid, auth.Owner(r.Context()))
	if err != nil {
		sessionRefused(w, nil, sid, err)
		return
	}
	if !ok {
		fail(w, http.StatusNotFound, nil, "session %s does not exist or has ended", jsonrpc.Quote(sid))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// postParts is what a POST allocates for its request, in one.
type postParts struct {
	w  response
	pk peek
	es edge.Session
	sc budget.Scope
	st stream
}

// post serves one message, or a 2025-03-26 batch.
func (h *Handler) post(w *response, r *http.Request, pa *postParts) {
	if ct := r.Header.Get("Content-Type"); !isJSON(ct) {
		fail(w, http.StatusUnsupportedMediaType, nil, "the body must be JSON sent as Content-Type: application/json, not %s", jsonrpc.Quote(ct))
		return
	}
	if r.ContentLength > h.maxBody { // refused without reading a byte of it
		fail(w, http.StatusRequestEntityTooLarge, nil, "the body is larger than the %d bytes this server accepts", h.maxBody)
		return
	}
	hold := budget.Default().Hold() // a large body's bytes, until answered
	defer func() { hold.Release() }()
	body, ok := h.readBody(w, r, hold)
	if !ok {
		return
	}
	acc := parseAccept(r.Header.Values("Accept"))

	msgs, errs, batch := jsonrpc.Decode(body, true)
	if batch {
		if !h.admit(w, nil) {
			return
		}
		defer h.leave()
		h.batch(w, r, acc, msgs, errs)
		return
	}
	m, derr := msgs[0], errs[0]
	if m != nil {
		w.id = m.ID
	}
	if derr != nil {
		var id json.RawMessage
		if m != nil {
			id = m.ID
		}
		writeError(w, http.StatusBadRequest, id, derr)
		return
	}

	// What the request needs for its length is allocated together
	// (postParts): its response, peek, edge session (a 2026-07-28 one),
	// budget scope and stream.
	pk := &pa.pk
	if m.ParamsDecoded() {
		pk.readDecoded(m.Params)
	} else {
		pk.readFrom(m.Params)
	}
	// The edge decides the revision once; a refusal for the headers (a
	// header that disagrees with _meta, or names no revision mcpx serves)
	// is answered before anything else, the rest by the edge in its turn.
	cl := edge.Classify(m, edge.Seen{HTTP: true, Header: protocolHeader(r), Meta: pk.edgeMeta(), Default: edge.Headerless})
	if e, status := cl.Refusal(); e != nil {
		writeError(w, status, m.ID, e)
		return
	}
	modern := cl.Modern()
	in := edge.In{Msg: m, Class: cl, Frees: true} // answer frees the reply
	if cl.ChecksHeaders() {
		if e := checkStandardHeaders(r, m, pk); e != nil {
			writeError(w, http.StatusBadRequest, m.ID, e)
			return
		}
		if e := h.checkParamHeaders(r, m, pk); e != nil {
			writeError(w, http.StatusBadRequest, m.ID, e)
			return
		}
	}
	if m.IsRequest() && !acc.json && !acc.sse {
		fail(w, http.StatusNotAcceptable, m.ID, "Accept must allow application/json and text/event-stream")
		return
	}

	// The edge session: a fresh one for 2026-07-28, for initialize and for
	// a legacy request without a session id; the session's own otherwise.
	var es *edge.Session
	var ss *session
	initialize := !modern && m.IsRequest() && m.Method == mcp.MethodInitialize
	if sid := r.Header.Get(headerSessionID); sid != "" && !modern && !initialize {
		var err error
		if ss, err = h.acquireSession(r.Context(), sid, auth.Owner(r.Context())); err != nil {
			sessionRefused(w, m.ID, sid, err)
			return
		}
		defer h.releaseSession(ss)
		defer h.subscriptionShared(ss, m)() // its record, and the replica following it (sharedsubs.go)
		es = ss.es
	}
	switch {
	case es != nil:
	case modern:
		es = &pa.es // not kept past the request
	default:
		es = new(edge.Session) // an initialize's is kept by the session
	}
	if initialize && !h.sessions.hasRoom() {
		h.log.Warn("MaxSessions reached; an initialize was refused", "limit", h.sessions.max)
		unavailable(w, m.ID, "too many sessions are open; try again later")
		return
	}

	// The request's context ends with the request, and also with the
	// session, the handler (listen) or its stream (a client too far behind).
	listen := modern && m.Method == mcp.MethodSubscriptionsListen
	if listen && m.IsRequest() && acc.sse {
		// A taken-over stream's goroutine does not free its answer.
		in.Frees = false
		h.serveListen(w, r, acc, es, in) // held.go
		return
	}
	// One context for the request: its client's side (the request, the
	// session, the stream: cancel) and a shutdown (h.running, below) end
	// it; which one did is read from them (clientGone).
	var ctx context.Context
	var cancel context.CancelFunc
	var end context.CancelCauseFunc // a listen's
	if listen {
		// A listen's end says who ended it (edge/listen.go): its client
		// closing the stream, or failing a write, ends it silently; only
		// Close (below) is mcpx ending it, with the cancellation and the
		// result.
		ctx, end = context.WithCancelCause(context.WithoutCancel(r.Context()))
		defer end(nil)
		defer context.AfterFunc(r.Context(), func() { end(edge.ErrClientGone) })()
		cancel = func() { end(edge.ErrClientGone) }
	} else {
		ctx, cancel = context.WithCancel(r.Context())
		defer cancel()
	}
	pa.sc = budget.Scope{Context: ctx}
	sc := &pa.sc // large answers read for it count until it is answered
	defer sc.Release()
	ctx = sc
	if ss != nil {
		defer context.AfterFunc(ss.ctx, cancel)()
	}

	if !m.IsRequest() {
		reply := h.e.Handle(ctx, es, in, nil)
		w.WriteHeader(statusOr(reply.Status, http.StatusAccepted))
		return
	}

	if !listen { // held streams count against MaxStreams
		if !h.admit(w, m.ID) {
			return
		}
		defer h.leave()
	}

	st := &pa.st
	st.init(h, w, cancel)
	defer st.end()
	var sink edge.Sink
	if acc.sse && !initialize { // an initialize response must carry the session id header
		sink = st.notify
	}
	if listen && sink != nil {
		// The listen response is a held stream: it needs a slot up front,
		// and it ends on Close.
		if !st.reserve() {
			h.log.Warn("MaxStreams reached; a subscriptions/listen was refused", "limit", cap(h.streams))
			unavailable(w, m.ID, "too many open streams; try again later")
			return
		}
		defer context.AfterFunc(h.hold, func() { end(errClosing) })()
	}
	if !listen { // a held stream ends on Close, with its result
		defer h.posts.add(h, st).remove(st)
	}

	reply := h.e.Handle(ctx, es, in, sink)
	if !listen && h.stoppedBy(reply.Msg) && !clientGone(r, ss, st) {
		reply.Msg, reply.Status = shuttingDown(m.ID), http.StatusOK
	}

	if reply.Initialized && !modern {
		id, ok := h.sessions.add(es, auth.Owner(r.Context()))
		if !ok {
			h.log.Warn("MaxSessions reached; an initialize was refused", "limit", h.sessions.max)
			unavailable(w, m.ID, "too many sessions are open; try again later")
			return
		}
		if err := h.shareSession(r.Context(), id, auth.Owner(r.Context()), es); err != nil {
			sessionRefused(w, m.ID, id, err)
			return
		}
		w.Header().Set(headerSessionID, id)
	}
	if reply.Msg == nil {
		h.answer(w, st, acc, nil, 0)
		return
	}
	h.answer(w, st, acc, reply.Msg, statusOr(reply.Status, http.StatusOK))
}

// clientGone reports whether the client's side of a request ended it:
// the request itself, its session or its stream (a client too far
// behind), rather than a shutdown alone (stoppedBy).
func clientGone(r *http.Request, ss *session, st *stream) bool {
	return r.Context().Err() != nil || (ss != nil && ss.ctx.Err() != nil) || st.cancelled()
}

// readBody reads a POST body, or answers why it could not. The body is
// read only with a reading slot (503 with Retry-After when MaxInFlight
// bodies are being read), within BodyTimeout (408) and up to MaxBody
// (413); the slot is given back once it is read, the request then being
// admitted or not on its own. A large body is counted in hold as it
// arrives; when the large-message budget has no room for it in time, the
// answer is 503 with Retry-After.
func (h *Handler) readBody(w *response, r *http.Request, hold *budget.Hold) ([]byte, bool) {
	if !tryAcquire(h.reading) {
		h.log.Warn("MaxInFlight bodies are being read; a request was refused", "limit", cap(h.reading))
		unavailable(w, nil, "too many requests are in progress; try again later")
		return nil, false
	}
	defer func() { <-h.reading }()
	rc := http.NewResponseController(w.ResponseWriter)
	// Not every ResponseWriter supports deadlines (a test recorder does
	// not); the body is then read without one.
	if rc.SetReadDeadline(time.Now().Add(h.bodyTimeout)) == nil {
		// Cleared once read (net/http clears it too when a body ends, but
		// not for an empty one): left on the connection, it would cut
		// off the request, or a held SSE stream, when it passed.
		defer rc.SetReadDeadline(time.Time{})
	}
	body, err := readLimited(w.ResponseWriter, r, h.maxBody, hold)
	switch {
	case err == nil:
		return body, true
	case budget.IsBusy(err):
		h.log.Warn("the large-message budget is exhausted; a request body was refused", "err", err)
		w.Header().Set("Connection", "close") // the rest of the body is not read
		unavailable(w, nil, "%v", err)
	case errors.As(err, new(*http.MaxBytesError)):
		fail(w, http.StatusRequestEntityTooLarge, nil, "the body is larger than the %d bytes this server accepts", h.maxBody)
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.Header().Set("Connection", "close")
		fail(w, http.StatusRequestTimeout, nil, "the body did not arrive within %s", h.bodyTimeout)
	default:
		fail(w, http.StatusBadRequest, nil, "the body could not be read: %v", err)
	}
	return nil, false
}

// maxPrealloc is the most readLimited allocates ahead of the data: a
// declared Content-Length is the client's claim, not bytes received.
const maxPrealloc = 64 << 10

// readAheads are the buffers a body declared longer than maxPrealloc is
// first read into: its buffer of the declared length is allocated once
// that much has arrived, and the read-ahead goes back here. Each large
// body allocated a 64 kB buffer it dropped as soon as it was full (a
// 65 kB tools/call: 64 kB, then 65 kB).
var readAheads = sync.Pool{New: func() any { b := make([]byte, maxPrealloc); return &b }}

// readLimited reads a request body of at most limit bytes. A buffer of
// the declared Content-Length is allocated ahead only up to maxPrealloc;
// beyond that it grows as the data arrives, each growth counted in hold.
func readLimited(w http.ResponseWriter, r *http.Request, limit int64, hold *budget.Hold) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, limit)
	size := int64(512)
	n := r.ContentLength
	if n >= 0 {
		size = min(n, limit, maxPrealloc) + 1 // +1: io.EOF is read without growing
	}
	var ahead *[]byte // the pooled read-ahead b is, until it is full
	var b []byte
	if n > maxPrealloc && n < limit {
		ahead = readAheads.Get().(*[]byte)
		b = (*ahead)[:0:maxPrealloc]
	} else {
		b = make([]byte, 0, size)
	}
	defer func() {
		if ahead != nil {
			readAheads.Put(ahead)
		}
	}()
	for {
		if len(b) == cap(b) {
			var grown []byte
			if n >= int64(len(b)) && n < limit {
				// Once maxPrealloc bytes have arrived, the rest of what was
				// declared, and no more than twice what arrived: a body of
				// 65 kB grew to 65 kB, one of 1 MB to 128 kB, 256 kB, ...
				grown = make([]byte, len(b), min(n+1, 2*int64(cap(b))))
				copy(grown, b)
			} else {
				grown = append(b, 0)[:len(b)]
			}
			if err := hold.Add(r.Context(), int64(cap(grown))-int64(cap(b))); err != nil {
				return nil, err
			}
			b = grown
			if ahead != nil {
				readAheads.Put(ahead)
				ahead = nil
			}
		}
		m, err := body.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err != nil {
			if ahead != nil { // it ended before the read-ahead filled
				b = append([]byte(nil), b...)
			}
			if err == io.EOF {
				return b, nil
			}
			return b, err
		}
	}
}

func statusOr(status, def int) int {
	if status == 0 {
		return def
	}
	return status
}

// answer writes the final response of a POST: on the stream when it was
// started (or the client takes only SSE and the answer is a success), as
// JSON otherwise. msg is a *jsonrpc.Message or a batch of them; a nil
// interface means there is nothing to send (the client cancelled the
// request): a stream just ends, and a response not yet begun is 204.
func (h *Handler) answer(w *response, st *stream, acc accepts, msg any, status int) {
	if m, ok := msg.(*jsonrpc.Message); ok && m == nil {
		msg = nil // a reply without a message (a held listen the client ended) in an interface
	}
	if msg == nil {
		if st.claim() {
			st.flushQueue() // what was queued before the end still goes
		} else {
			w.WriteHeader(http.StatusNoContent)
		}
		return
	}
	var b []byte
	var err error
	switch m := msg.(type) {
	case *jsonrpc.Message:
		// Once written (or copied into an event), a result in a pooled
		// buffer goes back to the pool (edge.In.Frees).
		defer m.Free()
		// A plain JSON answer takes the result as it is, not copied into
		// one buffer with its envelope (a 1 MB result was, once more).
		if head, result, tail, ok := jsonrpc.Framed(m); ok && acc.json && status == http.StatusOK && !st.claim() {
			writeBody(w, status, head, result, tail)
			return
		}
		b, err = jsonrpc.Encode(m)
	case []*jsonrpc.Message:
		b, err = jsonrpc.EncodeBatch(m)
	default:
		b, err = json.Marshal(msg)
	}
	if err != nil {
		h.log.Error("encode response", "err", err)
		b, status = nil, http.StatusInternalServerError
	}
	if b != nil && !acc.json && status == http.StatusOK {
		st.final(b) // a client that takes only SSE
		return
	}
	if st.claim() {
		if b != nil {
			st.final(b)
		}
		return
	}
	if b == nil {
		fail(w, status, w.id, "the response could not be encoded")
		return
	}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1") // as every 503 of this transport
	}
	writeBody(w, status, b)
}

// batch serves a JSON-RPC batch, which only 2025-03-26 has: its members
// one after another, as stdio does, answered with one array. A member
// whose _meta makes it a 2026-07-28 message is answered -32600.
func (h *Handler) batch(w *response, r *http.Request, acc accepts, msgs []*jsonrpc.Message, errs []*jsonrpc.Error) {
	// Each member is classified on its own, under the batch's header; a
	// single 2026-07-28 POST's rule that _meta needs the header is not a
	// batch member's.
	seen := edge.Seen{Header: protocolHeader(r), Default: edge.Headerless}
	cl := edge.Classify(nil, seen)
	if e, status := cl.Refusal(); e != nil {
		writeError(w, status, nil, e)
		return
	}
	// The batch's context ends with the request, and also with the
	// session or its stream (a client too far behind).
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	r = r.WithContext(ctx)
	es := new(edge.Session)
	var ss *session
	if sid := r.Header.Get(headerSessionID); sid != "" && !cl.Modern() {
		var err error
		ss, err = h.acquireSession(r.Context(), sid, auth.Owner(r.Context()))
		if err != nil {
			sessionRefused(w, nil, sid, err)
			return
		}
		defer h.releaseSession(ss)
		es = ss.es
		defer context.AfterFunc(ss.ctx, cancel)()
	}
	if rev := cl.Revision(es); !edge.AllowsBatch(rev) {
		fail(w, http.StatusBadRequest, nil, "batches are not part of protocol revision %s; send one message per POST", rev)
		return
	}
	requests := false
	for i, m := range msgs {
		if errs[i] == nil && m.IsRequest() {
			requests = true
		}
	}
	if requests && !acc.json && !acc.sse {
		fail(w, http.StatusNotAcceptable, nil, "Accept must allow application/json and text/event-stream")
		return
	}
	st := newStream(h, w, cancel)
	defer st.end()
	var sink edge.Sink
	if acc.sse {
		sink = st.notify
	}
	client := r.Context() // the request, its session, its stream
	ctx, stop := context.WithCancel(client)
	defer stop()
	defer context.AfterFunc(h.running, stop)() // a shutdown: see stoppedBy
	var out []*jsonrpc.Message
	for i, m := range msgs {
		if refusal := edge.RefuseBatchMember(m, errs[i]); refusal != nil {
			out = append(out, refusal)
			continue
		}
		in := edge.In{Msg: m, Class: edge.Classify(m, seen)}
		if !m.IsRequest() {
			h.e.Handle(ctx, es, in, nil)
			continue
		}
		recorded := func() {}
		if ss != nil { // a member's subscribe is the shared record's as a POST's is (sharedsubs.go)
			recorded = h.subscriptionShared(ss, m)
		}
		reply := h.e.Handle(ctx, es, in, sink)
		recorded()
		if h.stoppedBy(reply.Msg) && client.Err() == nil {
			out = append(out, shuttingDown(m.ID))
		} else if reply.Msg != nil {
			out = append(out, reply.Msg)
		}
	}
	if len(out) == 0 {
		if requests {
			h.answer(w, st, acc, nil, http.StatusOK) // every request was cancelled
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	h.answer(w, st, acc, out, http.StatusOK)
}
