// Package edge is the one place mcpx tells protocol revisions apart.
//
// Every message a client sends passes through [Edge.Handle]:
//
//	bytes -> transport -> jsonrpc.Decode
//	      -> edge ([Classify], once, for the transport and Handle): which revision?
//	               _meta and the MCP-Protocol-Version header (modern: the revision named),
//	               initialize (legacy session), else the header or the transport's default
//	      -> edge: decode params in that revision's types, upgrade to the hub
//	      -> server (hub types only)
//	      -> edge: the modern envelope (resultType, serverInfo, ttlMs/cacheScope),
//	               downgrade to the revision, encode
//	      -> jsonrpc.Message -> transport
//
// Outside this package and the transports no code compares revisions.
// Behaviour per revision is described, with the tests that pin it, in
// docs/revisions.md; the specification is at
// https://modelcontextprotocol.io/specification.
package edge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/generated/convert"
	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/observe"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/tracing"
)

// Headerless is assumed for a Streamable HTTP request with no
// MCP-Protocol-Version header and no session, and for a stdio batch before
// initialize (docs/revisions.md#which-revision-a-message-is-in; the 2025-06-18 and
// 2025-11-25 transport pages: a server SHOULD assume 2025-03-26).
const Headerless = mcp.Rev20250326

// AllowsBatch reports whether rev has JSON-RPC batches, as its schema says
// (only 2025-03-26 defines them; 2025-06-18 removed them again).
func AllowsBatch(rev mcp.Revision) bool {
	t := revision.Lookup(rev)
	return t != nil && t.Batches
}

// RefuseBatchMember answers a member of a batch that is not to be served:
// one that did not decode (err is why; m may then be nil), an initialize
// request, which must not be batched, or a modern message (its _meta
// names a protocol version), since no modern revision has batches: served,
// it would skip the header checks it gets on its own. It returns nil for a
// member to serve. The transports that read batches share it.
func RefuseBatchMember(m *jsonrpc.Message, err *jsonrpc.Error) *jsonrpc.Message {
	switch {
	case err != nil:
		var id json.RawMessage
		if m != nil {
			id = m.ID
		}
		return jsonrpc.ErrorResponse(id, err)
	case m.IsRequest() && m.Method == mcp.MethodInitialize:
		return jsonrpc.ErrorResponse(m.ID, &jsonrpc.Error{Code: jsonrpc.InvalidRequest, Message: "initialize must not be part of a batch"})
	}
	if cl := Classify(m, Seen{}); cl.Modern() {
		why := "carries modern request members"
		if v, named := cl.meta.protocolVersion(); named {
			why = "names protocol version " + jsonrpc.Quote(v)
		}
		return jsonrpc.ErrorResponse(m.ID, &jsonrpc.Error{Code: jsonrpc.InvalidRequest,
			Message: fmt.Sprintf("a modern message (its params._meta %s) must not be part of a batch; send it on its own", why)})
	}
	return nil
}

// IsModern reports whether rev is served per request (no initialize).
func IsModern(rev mcp.Revision) bool {
	t := revision.Lookup(rev)
	return t != nil && t.Era == "modern"
}

// Known reports whether rev is a revision mcpx serves.
func Known(rev mcp.Revision) bool { return slices.Contains(mcp.Revisions, rev) }

// Edge serves one server to clients of every revision.
type Edge struct {
	Server *server.Server
	// Log receives mcpx's own log lines (never sent to clients). Nil means
	// slog.Default().
	Log *slog.Logger

	// AskTimeout bounds how long a question put to a client (see
	// [server.Ask]) waits for its answer; 0 means DefaultAskTimeout.
	AskTimeout time.Duration

	// Observer is told of every client request (metrics, traces); nil
	// observes nothing. Set it before serving.
	Observer observe.Observer
	// Tasks are the task settings (tasks.go).
	Tasks TaskOptions
	// Peers, when set, are the other replicas (cluster.go): list changes
	// cross to them, and a parked call's retry is relayed to its replica.
	Peers Peers
	tasks taskState

	lists     listCache
	params    paramCache
	listeners listeners
	infoOnce  sync.Once
	info      json.RawMessage
}

func (e *Edge) log() *slog.Logger {
	if e.Log != nil {
		return e.Log
	}
	return slog.Default()
}

// Session is what the edge remembers about one client between messages.
// A 2026-07-28 client needs none of it (each request says everything); a
// legacy client's session holds what initialize negotiated. The zero value
// is a session before initialize.
type Session struct {
	mu       sync.Mutex
	rev      mcp.Revision // negotiated by initialize; "" before
	caps     mcp.ClientCapabilities
	logLevel mcp.LoggingLevel
	inflight inflight        // cancels a running request (errCancelled), by raw id
	subs     map[string]bool // legacy resources/subscribe (subscribe.go)
	subMu    sync.Mutex      // held by one subscribe, unsubscribe or release of subs at a time
	// elsewhere reports whether another replica follows a URI for the
	// session already (subshared.go); nil: none can.
	elsewhere func(uri string) bool

	// Questions put to the client (ask.go).
	client mcp.Implementation               // the clientInfo of initialize, for logs
	asks   map[string]chan *jsonrpc.Message // waiting for the client's answer, by raw id
	askSeq uint64

	num   uint64        // the session's token (roots.go), its server.ClientSession id; 0 until asked
	key   string        // who the session's tasks belong to, the same on every replica (state.go); "" until asked
	done  chan struct{} // closed by End; made on first use
	ended bool
}

// End marks the session ended: the transport calls it when the session
// is deleted, expires or its connection closes, so that what a namespace
// keeps per client session (see [server.ClientSession]) is let go. It
// may be called more than once.
func (s *Session) End() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done == nil {
		s.done = make(chan struct{})
	}
	if !s.ended {
		s.ended = true
		close(s.done)
	}
}

// doneChan is closed by End.
func (s *Session) doneChan() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done == nil {
		s.done = make(chan struct{})
	}
	return s.done
}

// Revision returns the revision initialize negotiated, or "".
func (s *Session) Revision() mcp.Revision {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rev
}

// In is one message and what the transport knows about it.
type In struct {
	Msg *jsonrpc.Message
	// Class is the message's classification by [Classify]. Left zero,
	// Handle classifies the message with Default and no header.
	Class Class
	// Default is the revision to assume when neither the message nor the
	// session names one; read only when Class is zero.
	Default mcp.Revision
	// Frees says the caller calls Reply.Msg.Free once it has written the
	// answer out: a result may then be written into a pooled buffer
	// (jsonrpc.Owned) rather than into one of its own.
	Frees bool
}

// Reply is the edge's answer to one message.
type Reply struct {
	// Msg is the response, or nil when there is none to send (a
	// notification, a request the client cancelled).
	Msg *jsonrpc.Message
	// Status is the HTTP status the answer calls for: 200, 202 for a
	// notification, 400 or 404 where 2026-07-28 requires them.
	Status int
	// Rev is the revision the answer was written in.
	Rev mcp.Revision
	// Initialized is set when the message was a successful initialize: a
	// Streamable HTTP transport mints a session for it.
	Initialized bool
	// held is a held listen's stop (HandleHeld); nil for a final reply.
	held func(cause error)
}

// Sink receives the notifications a request produces while it runs
// (progress, log messages), already in the client's revision, and the
// list changes of a stream given to Attach or subscriptions/listen.
//
// A sink must not wait on its client (ARCHITECTURE principle 7): it is
// called by goroutines that serve others too, one reading a shared
// upstream (progress, log messages) and the list-change broadcast, which
// calls every listener's sink in turn. A transport with many clients
// queues, bounded, and may coalesce or drop notifications, never a
// response (streamhttp: StreamQueue, Options.WriteTimeout); stdio's one
// client is the only one its writes can hold up.
type Sink func(*jsonrpc.Message)

// call is one request on its way through the edge.
type call struct {
	ctx    context.Context
	sess   *Session
	rev    mcp.Revision
	meta   requestMeta
	params any             // pointer to the hub params type, or nil
	raw    json.RawMessage // the params as sent, for what the hub type does not hold
	// asking, when set, is told a question to the client is waiting for
	// its answer, and the function it returns when it no longer is (a
	// 2025-11-25 task shows input_required meanwhile: tasks_legacy.go).
	asking func() func()
	id     json.RawMessage
	sink   Sink
	asks   *askCount // its questions in flight (ask.go); nil counts none
	// done, when set, is the transport's HandleHeld callback: a listen
	// is then held without waiting (listen.go); span is the request's.
	done func(Reply)
	span *tracing.Span
	// followLimit is server.FollowLimit for the handler (0: none set).
	followLimit time.Duration
	// caps are the client's capabilities, read once for the request and
	// its copies (clientCapabilities); nil reads them on every ask.
	caps *capsMemo
	// parts, when set, are the first handler context's notifier and
	// asker, allocated with the call (handlerContext takes them once).
	parts *handlerParts
	// lane is the request's result lane (lane.go), opened by taskCall
	// for a call answered straight from its result; nil: none.
	lane *resultLane
}

type capsMemo struct {
	once  sync.Once
	caps  *mcp.ClientCapabilities // &value, or those decoded
	value mcp.ClientCapabilities  // none declared, or a legacy session's
}

// callAlloc is a call, its question count, its capabilities' memo and
// its result lane, allocated together (one allocation a request instead
// of four).
type callAlloc struct {
	call  call
	asks  askCount
	caps  capsMemo
	parts handlerParts
	lane  resultLane
}

// Handle serves one message from a client on sess. sink may be nil when
// the transport cannot deliver notifications for this request.
func (e *Edge) Handle(ctx context.Context, sess *Session, in In, sink Sink) Reply {
	return e.serve(ctx, sess, in, sink, nil)
}

// HandleHeld serves in as Handle does, except a subscriptions/listen the
// edge holds open: that returns as soon as its acknowledgement is given to
// sink, with stop non-nil, and nothing of it waits meanwhile (listen.go).
// The transport calls stop when the stream ends on its side: with
// [ErrClientGone] when the client left (nothing more is sent), with any
// other cause when mcpx ends it (its notifications/cancelled goes to sink
// first). However it ends (stop, the client's notifications/cancelled,
// its event source stopped), done is then called once, from the goroutine
// that ended it, with the final reply (Msg nil when the client ended it);
// done must not wait on the client. For any other message stop is nil,
// the reply is final, and done is never called.
func (e *Edge) HandleHeld(ctx context.Context, sess *Session, in In, sink Sink, done func(Reply)) (reply Reply, stop func(cause error)) {
	rep := e.serve(ctx, sess, in, sink, done)
	return rep, rep.held
}

func (e *Edge) serve(ctx context.Context, sess *Session, in In, sink Sink, done func(Reply)) Reply {
	if e.Observer == nil || !in.Msg.IsRequest() {
		return e.handle(ctx, sess, in, sink, done)
	}
	ctx, r := observe.StartRequest(ctx, e.Observer, in.Msg.Method)
	if done != nil { // a held listen: observed when it ends
		final := done
		done = func(rep Reply) { endObserved(ctx, r, rep); final(rep) }
	}
	rep := e.handle(ctx, sess, in, sink, done)
	if rep.held == nil {
		endObserved(ctx, r, rep)
	}
	return rep
}

// endObserved ends r with rep's outcome. A function, not a closure in
// serve: a closure that the held path's done captures escapes, and would
// cost every request an allocation (TestMetricsAllocations).
func endObserved(ctx context.Context, r *observe.Request, rep Reply) {
	r.Revision, r.Code = string(rep.Rev), observe.OK
	switch {
	case rep.Msg == nil:
		r.Code = observe.Cancelled
	case rep.Msg.Error != nil:
		r.Code = rep.Msg.Error.Code
	}
	r.End(ctx)
}

func (e *Edge) handle(ctx context.Context, sess *Session, in In, sink Sink, done func(Reply)) (reply Reply) {
	m := in.Msg
	switch {
	case m.IsResponse():
		e.answered(sess, m) // the answer to a question mcpx asked (ask.go)
		return Reply{Status: http.StatusAccepted}
	case m.IsNotification():
		e.notification(sess, m)
		return Reply{Status: http.StatusAccepted}
	}
	cl := in.Class
	if !cl.set {
		cl = Classify(m, Seen{Default: in.Default})
	}
	rev, meta := cl.Revision(sess), cl.meta
	ctx, span := tracing.StartRequest(ctx, m.Method, string(rev), m.ID, meta) // nil when tracing is off
	if span != nil {
		defer func() {
			if reply.held == nil { // a held listen's span ends with it
				span.End(reply.Msg)
			}
		}()
	}
	if cl.err != nil {
		return e.fail(m.ID, rev, cl.err)
	}
	if !IsModern(rev) {
		if m.Method == mcp.MethodInitialize {
			return e.initialize(ctx, sess, m, meta)
		}
	} else if err := meta.checkModern(rev); err != nil {
		return e.fail(m.ID, rev, err)
	}
	method, ok := revision.Lookup(rev).Method(m.Method)
	if !ok || !method.FromClient || method.Notification {
		return e.fail(m.ID, rev, jsonrpc.Errorf(jsonrpc.MethodNotFound, nil, "method %s does not exist in protocol revision %s", jsonrpc.Quote(m.Method), rev))
	}
	h := handlers[m.Method]
	if h == nil {
		return e.fail(m.ID, rev, jsonrpc.Errorf(jsonrpc.MethodNotFound, nil, "method %s is not served by mcpx", jsonrpc.Quote(m.Method)))
	}
	params, err := decodeParamsOf(rev, method.Params, m)
	if err != nil {
		return e.fail(m.ID, rev, err)
	}
	span.Target(m.Method, params)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if !sess.track(string(m.ID), cancel) {
		// Every revision forbids reusing the id of a request still in
		// progress; answering both would make the responses ambiguous.
		return e.fail(m.ID, rev, jsonrpc.Errorf(jsonrpc.InvalidRequest, nil, "request id %s is already in use by a request in progress", jsonrpc.Clip(string(m.ID))))
	}
	defer func() {
		if reply.held == nil { // a held listen is tracked until it ends
			sess.untrack(string(m.ID))
		}
	}()

	key, version, cacheable := e.lists.key(ctx, e.Server, rev, m.Method, params)
	if cacheable {
		if raw, ok := e.lists.get(key, version); ok {
			return Reply{Msg: jsonrpc.Response(m.ID, raw), Status: http.StatusOK, Rev: rev}
		}
	}
	ca := &callAlloc{call: call{ctx: ctx, sess: sess, rev: rev, meta: meta, params: params, raw: m.Params, id: m.ID, sink: sink, done: done, span: span}}
	c := &ca.call
	c.asks, c.caps, c.parts, c.lane = &ca.asks, &ca.caps, &ca.parts, &ca.lane
	result, err := h(e, c)
	if r, ok := result.(Reply); ok {
		return r // a listen's, final or held (listen.go)
	}
	laneOut, laneLost := c.lane.close(result)
	if ctx.Err() != nil && errors.Is(context.Cause(ctx), errCancelled) {
		laneOut.Free()
		// Its questions' notifications/cancelled go before its stream ends.
		c.settleAsks()
		return Reply{Rev: rev} // cancelled by the client: nothing more may be sent for it
	}
	if err != nil {
		laneOut.Free()
		if rep, ok := e.relayElsewhere(ctx, m, rev, err, sink); ok { // cluster.go
			rep.Rev = rev
			return rep
		}
		return e.fail(m.ID, rev, err)
	}
	if laneLost {
		e.log().Error("a tools/call result taken by the result lane did not come back as its stand-in", "method", m.Method, "revision", rev)
		return e.fail(m.ID, rev, jsonrpc.Errorf(jsonrpc.InternalError, nil, "the tool's result was lost on its way through mcpx"))
	}
	if laneOut != nil { // the upstream's result as it came (lane.go)
		return Reply{Msg: jsonrpc.Owned(m.ID, laneOut.Bytes(), laneOut), Status: http.StatusOK, Rev: rev}
	}
	if in.Frees && !cacheable { // a cached result outlives the answer
		buf, err := e.encodePooled(rev, result)
		if err != nil {
			e.log().Error("encode result", "method", m.Method, "revision", rev, "err", err)
			return e.fail(m.ID, rev, jsonrpc.Errorf(jsonrpc.InternalError, nil, "the result cannot be written in protocol revision %s", rev))
		}
		return Reply{Msg: jsonrpc.Owned(m.ID, buf.Bytes(), buf), Status: http.StatusOK, Rev: rev}
	}
	raw, err := e.encodeResult(rev, result)
	if err != nil {
		e.log().Error("encode result", "method", m.Method, "revision", rev, "err", err)
		return e.fail(m.ID, rev, jsonrpc.Errorf(jsonrpc.InternalError, nil, "the result cannot be written in protocol revision %s", rev))
	}
	if cacheable {
		e.lists.put(key, version, raw)
	}
	return Reply{Msg: jsonrpc.Response(m.ID, raw), Status: http.StatusOK, Rev: rev}
}

var errCancelled = errors.New("cancelled by the client")

// track records a running request; it reports false if the id is taken.
func (s *Session) track(id string, cancel context.CancelCauseFunc) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, taken := s.inflight.get(id); taken {
		return false
	}
	s.inflight.put(id, cancel)
	return true
}

// retrack replaces the cancel function of a request in progress.
func (s *Session) retrack(id string, cancel context.CancelCauseFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inflight.put(id, cancel)
}

func (s *Session) untrack(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inflight.del(id)
}

// Cancel cancels the request with this raw id, as notifications/cancelled
// asks; an unknown or finished request is ignored (cancellation page).
func (s *Session) Cancel(id json.RawMessage) {
	s.mu.Lock()
	cancel, _ := s.inflight.get(string(id))
	s.mu.Unlock()
	if cancel != nil {
		cancel(errCancelled)
	}
}

// inflight is a session's running requests, by raw id: one in a slot of
// its own (a 2026-07-28 request's session holds only that request, and
// made a map for it), any more in the map. The session's mu guards it.
type inflight struct {
	used   bool // the slot holds id
	id     string
	cancel context.CancelCauseFunc
	more   map[string]context.CancelCauseFunc
}

func (f *inflight) get(id string) (context.CancelCauseFunc, bool) {
	if f.used && f.id == id {
		return f.cancel, true
	}
	cancel, ok := f.more[id]
	return cancel, ok
}

func (f *inflight) put(id string, cancel context.CancelCauseFunc) {
	switch _, inMore := f.more[id]; {
	case f.used && f.id == id:
		f.cancel = cancel
	case inMore:
		f.more[id] = cancel
	case !f.used:
		f.used, f.id, f.cancel = true, id, cancel
	default:
		if f.more == nil {
			f.more = map[string]context.CancelCauseFunc{}
		}
		f.more[id] = cancel
	}
}

func (f *inflight) del(id string) {
	if f.used && f.id == id {
		*f = inflight{more: f.more}
		return
	}
	delete(f.more, id)
}

// supportedVersions lists every revision mcpx serves, newest first, in
// server/discover and in -32022: the 2026-07-28 versioning page's own
// example of a dual-era server lists a legacy revision there, and a client
// that speaks no modern revision of mcpx's learns which revisions it may
// initialize with.
func supportedVersions() []string { return versions(mcp.Revisions) }

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// decodeParams decodes params in rev's type for hub type name and
// upgrades them. Absent params are the zero value.
func decodeParams(rev mcp.Revision, name string, raw json.RawMessage) (any, error) {
	return decodeParamsWith(mcpjson.UnmarshalShared, rev, name, raw)
}

// decodeParamsOf is decodeParams of a request's params. Those of a
// message jsonrpc.Decode read (a client's, every transport's) are not
// scanned once more where they hold a large raw member: a tools/call's
// 64 kB arguments were, after jsonrpc.Decode had (mcpjson.UnmarshalRead).
func decodeParamsOf(rev mcp.Revision, name string, m *jsonrpc.Message) (any, error) {
	if m.ParamsDecoded() {
		if name == "CallToolRequestParams" {
			if p, ok := scanCallParams(m.Params); ok {
				return p, nil
			}
		}
		return decodeParamsWith(mcpjson.UnmarshalRead, rev, name, m.Params)
	}
	return decodeParams(rev, name, m.Params)
}

func decodeParamsWith(unmarshal func([]byte, any) error, rev mcp.Revision, name string, raw json.RawMessage) (any, error) {
	if name == "" {
		return nil, nil
	}
	wire := convert.New(rev, name)
	if wire == nil {
		return mcp.New(name), nil
	}
	if len(raw) > 0 && string(raw) != "null" {
		// raw is a slice of the request's own buffer: arguments stay in it.
		if err := unmarshal(raw, wire); err != nil {
			return nil, jsonrpc.Errorf(jsonrpc.InvalidParams, nil, "invalid params: %s", jsonrpc.Clip(mcpjson.Describe(err)))
		}
	}
	return convert.Upgrade(rev, wire)
}

// encodeResult adds the 2026-07-28 envelope and writes result in rev.
func (e *Edge) encodeResult(rev mcp.Revision, result any) (json.RawMessage, error) {
	wire, err := e.wireResult(rev, result)
	if err != nil {
		return nil, err
	}
	return mcpjson.Marshal(wire) // encoding/json's bytes, in one pass (a 1 MB text was scanned four times)
}

// encodePooled is encodeResult into a pooled buffer, for a caller that
// frees the answer once written (In.Frees): the same bytes, without
// Marshal's copy of them (1 MB for a 1 MB text).
func (e *Edge) encodePooled(rev mcp.Revision, result any) (*mcpjson.Buffer, error) {
	long := longText(result) // the hub's: the wire value shares its strings
	wire, err := e.wireResult(rev, result)
	if err != nil {
		return nil, err
	}
	if long {
		return mcpjson.MarshalSpliced(wire) // a long text copied in, not quoted again
	}
	return mcpjson.MarshalPooled(wire)
}

// wireResult is result with the 2026-07-28 envelope, in rev's type.
func (e *Edge) wireResult(rev mcp.Revision, result any) (any, error) {
	if IsModern(rev) {
		if env, ok := result.(mcp.Enveloped); ok {
			e.envelope(env.Envelope())
		}
	}
	return convert.Downgrade(rev, result)
}

// envelope fills what every 2026-07-28 result carries: resultType (MUST)
// and the server's identity in _meta (SHOULD), merged into a copy of
// whatever _meta the result has. ttlMs and cacheScope are the server's.
func (e *Edge) envelope(env mcp.Envelope) {
	if env.ResultType != nil && *env.ResultType == "" {
		*env.ResultType = "complete"
	}
	if env.Meta != nil {
		m := make(mcp.Meta, len(*env.Meta)+1)
		for k, v := range *env.Meta {
			m[k] = v
		}
		m[mcp.MetaKeyServerInfo] = e.serverInfo()
		*env.Meta = m
	}
}

// serverInfo is the server's identity, encoded once: it goes into every
// 2026-07-28 result.
func (e *Edge) serverInfo() json.RawMessage {
	e.infoOnce.Do(func() { e.info, _ = json.Marshal(e.Server.Info) })
	return e.info
}

// notification handles what a client notifies.
func (e *Edge) notification(sess *Session, m *jsonrpc.Message) {
	switch m.Method {
	case mcp.MethodNotificationsCancelled:
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if mcpjson.Unmarshal(m.Params, &p) == nil && p.RequestID != nil {
			sess.Cancel(p.RequestID)
		}
	case mcp.MethodNotificationsRootsListChanged:
		e.rootsChanged(sess) // roots.go
	}
	// notifications/initialized, progress: nothing to do.
}
