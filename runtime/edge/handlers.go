package edge

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// handler answers one method with a hub result. Methods a revision lacks
// never get here: the revision tables are checked first.
type handler func(e *Edge, c *call) (any, error)

// handlers are the methods mcpx answers itself (route "local" in the
// overlay; initialize is answered before a session has a revision). Every
// other client request of the generated tables goes to the server through
// the generated dispatch (see init), so a request a new revision adds
// needs no code here.
var handlers = map[string]handler{
	mcp.MethodPing:                 func(*Edge, *call) (any, error) { return &mcp.Result{}, nil },
	mcp.MethodLoggingSetLevel:      (*Edge).setLevel,
	mcp.MethodResourcesSubscribe:   (*Edge).subscribe,
	mcp.MethodResourcesUnsubscribe: (*Edge).unsubscribe,
	mcp.MethodServerDiscover:       (*Edge).discover,
	mcp.MethodSubscriptionsListen:  (*Edge).listen,
}

// dispatched are the methods init gave the generated dispatch.
var dispatched = map[string]bool{}

func init() {
	for _, m := range mcp.ClientMethods {
		if handlers[m.Name] == nil && m.Name != mcp.MethodInitialize {
			handlers[m.Name] = dispatch(m.Name)
			dispatched[m.Name] = true
		}
	}
}

// dispatch answers method through the server's generated dispatch
// ([server.Server.Handle]), with a context that carries the request's
// notifier and the client's capabilities. No handler for it anywhere is
// method not found, as for a method mcpx does not know.
func dispatch(method string) handler {
	return func(e *Edge, c *call) (any, error) {
		r, err := e.Server.Handle(e.handlerContext(c, method), method, c.params)
		if ir, ierr, ok := e.inputRequired(c, method, err); ok {
			return ir, ierr
		}
		if err == nil && retried(c.params) {
			uncached(r)
		}
		if errors.Is(err, mcp.ErrNoHandler) {
			return nil, jsonrpc.Errorf(jsonrpc.MethodNotFound, nil, "method %s is not served by mcpx", jsonrpc.Quote(method))
		}
		if err == nil && r == nil {
			return nil, jsonrpc.Errorf(jsonrpc.InternalError, nil, "method %s: no result", jsonrpc.Quote(method))
		}
		return r, err
	}
}

// handlerContext is the context a namespace serves c in: c's, carrying
// the request's notifier, the client's capabilities, its asker and what
// mcpx can relay of them (upcaps.go).
func (e *Edge) handlerContext(c *call, method string) context.Context {
	parts := c.parts
	if parts == nil || !parts.taken.CompareAndSwap(false, true) {
		parts = new(handlerParts) // a later context of the call (rounds.go), or a call made elsewhere
	}
	parts.n, parts.a = e.notifier(c), asker{e: e, c: c}
	r := server.Request{
		TakesInputRequired: c.takesInputRequired(method),
		Notifier:           &parts.n,
		Asker:              &parts.a,
		Caps:               (*requestCaps)(c),
		FollowLimit:        c.followLimit,
	}
	if c.lane.isOpen() {
		r.Lane = c.lane
	}
	// A legacy client's initialized session is the client session a
	// namespace may keep things per (gateway: session "per-client"); a
	// 2026-07-28 request, or a legacy one outside any session, has none.
	// Its id is the session's token (roots.go), which a roots change
	// names too.
	if !IsModern(c.rev) && c.sess.Revision() != "" {
		r.Session, r.SessionDone = c.sess.token(), c.sess.doneChan()
	}
	// One context frame for all of it: the handler's lookups, and every
	// context made under it, walk one frame instead of six.
	return server.WithRequest(c.ctx, r)
}

// handlerParts are a handler's notifier and asker, allocated together.
type handlerParts struct {
	n     requestNotifier
	a     asker
	taken atomic.Bool // by a handler context: the call's (and its copies') are used once
}

// requestCaps is a call's capabilities, as server.Request reads them: the
// client's, and what may be relayed of them upstream.
type requestCaps call

func (c *requestCaps) ClientCapabilities() *mcp.ClientCapabilities {
	return (*call)(c).clientCapabilities()
}

func (c *requestCaps) RelayedCapabilities(declared *mcp.ClientCapabilities) *mcp.ClientCapabilities {
	return relayable(c.rev, declared)
}

// initialize negotiates a legacy session: a legacy revision mcpx serves
// gets itself; an unknown or modern version gets the newest legacy one: every legacy lifecycle page says a server
// that does not support the requested version MUST answer with another it
// supports, and -32022 means nothing to a legacy client.
func (e *Edge) initialize(ctx contextType, sess *Session, m *jsonrpc.Message, _ requestMeta) Reply {
	var probe struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = mcpjson.Unmarshal(m.Params, &probe)
	rev := legacyFor(probe.ProtocolVersion)
	params, err := decodeParams(rev, "InitializeRequestParams", m.Params)
	if err != nil {
		return e.fail(m.ID, rev, err)
	}
	p := params.(*mcp.InitializeRequestParams)
	sess.mu.Lock()
	sess.rev, sess.caps, sess.client = rev, p.Capabilities, p.ClientInfo
	sess.mu.Unlock()
	res := &mcp.InitializeResult{
		ProtocolVersion: string(rev),
		Capabilities:    e.capabilities(),
		ServerInfo:      e.Server.Info,
		Instructions:    e.Server.Instructions,
	}
	raw, err := e.encodeResult(rev, res)
	if err != nil {
		return e.fail(m.ID, rev, err)
	}
	return Reply{Msg: jsonrpc.Response(m.ID, raw), Status: http.StatusOK, Rev: rev, Initialized: true}
}

func (e *Edge) setLevel(c *call) (any, error) {
	p := c.params.(*mcp.SetLevelRequestParams)
	if !server.ValidLevel(p.Level) {
		return nil, jsonrpc.Errorf(jsonrpc.InvalidParams, map[string]any{"supported": levels()}, "unknown log level %s", jsonrpc.Quote(string(p.Level)))
	}
	c.sess.mu.Lock()
	c.sess.logLevel = p.Level
	c.sess.mu.Unlock()
	return &mcp.Result{}, nil
}

// subscribe and unsubscribe: subscribe.go.

// discover answers server/discover: the versions mcpx serves, its
// capabilities, and (in _meta, added with the envelope) its identity.
func (e *Edge) discover(c *call) (any, error) {
	return &mcp.DiscoverResult{
		SupportedVersions: supportedVersions(),
		Capabilities:      e.capabilities(),
		Instructions:      e.Server.Instructions,
		TTLMs:             e.Server.TTLMs,
		CacheScope:        mcp.CacheScopePublic,
	}, nil
}

// listen: listen.go.

// clientCapabilities are what the client declared: on this request for
// 2026-07-28 (servers MUST NOT infer them from earlier requests), at
// initialize for a legacy session. They are read once per call (the tasks
// check, the handler's context and its questions all ask), and shared:
// never to be changed.
func (c *call) clientCapabilities() *mcp.ClientCapabilities {
	m := c.caps
	if m == nil {
		m = new(capsMemo)
	}
	m.once.Do(func() { m.caps = c.readClientCapabilities(&m.value) })
	return m.caps
}

// readClientCapabilities reads the capabilities into *into, or returns
// those decoded.
func (c *call) readClientCapabilities(into *mcp.ClientCapabilities) *mcp.ClientCapabilities {
	if IsModern(c.rev) {
		raw := c.meta[clientCapabilitiesKey]
		if string(raw) == "{}" { // most requests' (they declare nothing): not decoded on every call
			return into
		}
		caps, err := decodeParams(c.rev, "ClientCapabilities", raw)
		if p, ok := caps.(*mcp.ClientCapabilities); ok && err == nil {
			return p
		}
		return into
	}
	c.sess.mu.Lock()
	defer c.sess.mu.Unlock()
	*into = c.sess.caps
	return into
}
