// Package observe is where mcpx reports what it does, for metrics
// (runtime/metrics) and traces: a small [Observer] the edge, the gateway
// and the upstream client call at fixed hook points. A nil Observer
// observes nothing and costs a nil check; the [Nop] value embedded in an
// implementation keeps it compiling when a hook point is added.
//
// The hook points:
//
//   - [StartRequest] / [Request.End]: the edge ([edge.Edge.Handle]), once
//     per client request, around everything the edge does with it
//     (classification, the handler, encoding); the Request's Revision and
//     Code are set by then.
//   - [Route]: the gateway ([gateway.Gateway.Forward]), when a request has
//     been routed to one upstream: its namespace and the tool, prompt or
//     URI it names, in the request's context.
//   - [StartCall] / [Call.End]: the upstream client, around one call sent
//     to an upstream (after the connection is ensured, before the request
//     is encoded: the context StartCall returns is the one the call's
//     request is built and sent under).
//
// Upstream state, sessions, streams and parked calls are not events: the
// metrics read them when scraped (metrics.Sources), so nothing is counted
// on those paths.
package observe

import (
	"context"
	"math"
	"time"
)

// Observer receives the hook points' events. Its methods are called on the
// hot path, concurrently: they must be cheap, must not block and must not
// take a lock that every request shares.
type Observer interface {
	// RequestStart is called as a client request begins; it returns the
	// context the request is served in (ctx, or one derived from it).
	RequestStart(ctx context.Context, r *Request) context.Context
	// RequestEnd is called once, when the request has been answered.
	RequestEnd(ctx context.Context, r *Request)
	// CallStart is called as a call to an upstream begins; it returns
	// the context the call is made in.
	CallStart(ctx context.Context, c *Call) context.Context
	// CallEnd is called once, when the upstream answered or the call failed.
	CallEnd(ctx context.Context, c *Call)
}

// Nop observes nothing; embed it to implement only some hook points.
type Nop struct{}

func (Nop) RequestStart(ctx context.Context, _ *Request) context.Context { return ctx }
func (Nop) RequestEnd(context.Context, *Request)                         {}
func (Nop) CallStart(ctx context.Context, _ *Call) context.Context       { return ctx }
func (Nop) CallEnd(context.Context, *Call)                               {}

// Outcomes besides a JSON-RPC error code, below any code a peer could
// send (error codes are integers; these are not in any range in use).
const (
	// OK is a request or call answered with a result.
	OK int64 = math.MinInt64 + iota
	// Cancelled is a request its client cancelled (no answer is sent), or
	// a call whose caller gave up.
	Cancelled
	// Timeout is a call the upstream did not answer in time.
	Timeout
	// Failed is a call that got no answer for another reason (the
	// connection, the upstream unavailable, a limit).
	Failed
)

// Request is one client request. The edge fills Method at the start and
// Revision and Code at the end; the gateway fills Namespace and Name.
type Request struct {
	Method    string // as the client sent it (a metric bounds it)
	Revision  string // the revision the answer was written in; "" if none was found
	Namespace string // the upstream it was routed to; "" for none (lists, mcpx's own)
	Name      string // the tool or prompt name or URI it was routed by, if any
	// Code is the JSON-RPC error code answered, or OK or Cancelled.
	Code  int64
	Start time.Time

	o Observer
}

// reqCtx carries a Request in its context without a second allocation.
type reqCtx struct {
	context.Context
	r Request
}

type requestKey struct{}

func (c *reqCtx) Value(key any) any {
	if key == (requestKey{}) {
		return &c.r
	}
	return c.Context.Value(key)
}

// StartRequest begins observing a client request with o; with o nil it
// returns ctx and nil, and the rest of the hook points do nothing.
func StartRequest(ctx context.Context, o Observer, method string) (context.Context, *Request) {
	if o == nil {
		return ctx, nil
	}
	rc := &reqCtx{Context: ctx, r: Request{Method: method, Start: time.Now(), o: o}}
	return o.RequestStart(rc, &rc.r), &rc.r
}

// End reports the request answered; r nil does nothing.
func (r *Request) End(ctx context.Context) {
	if r != nil {
		r.o.RequestEnd(ctx, r)
	}
}

// Route records, on the request ctx carries (if any), the upstream it
// went to and the name or URI it was routed by.
func Route(ctx context.Context, namespace, name string) {
	if r, _ := ctx.Value(requestKey{}).(*Request); r != nil {
		r.Namespace, r.Name = namespace, name
	}
}

// RequestFrom is the request ctx carries, or nil.
func RequestFrom(ctx context.Context) *Request {
	r, _ := ctx.Value(requestKey{}).(*Request)
	return r
}

// Call is one call to an upstream.
type Call struct {
	Upstream string
	Method   string
	Revision string // the upstream's revision
	// Code is the JSON-RPC error code the upstream answered, or OK,
	// Cancelled, Timeout or Failed.
	Code  int64
	Start time.Time

	o Observer
}

// StartCall begins observing a call with o; with o nil it returns ctx
// and nil.
func StartCall(ctx context.Context, o Observer, upstream, method, revision string) (context.Context, *Call) {
	if o == nil {
		return ctx, nil
	}
	c := &Call{Upstream: upstream, Method: method, Revision: revision, Start: time.Now(), o: o}
	return o.CallStart(ctx, c), c
}

// End reports the call over with code; c nil does nothing.
func (c *Call) End(ctx context.Context, code int64) {
	if c != nil {
		c.Code = code
		c.o.CallEnd(ctx, c)
	}
}

// Tee is an Observer that reports to each of os in turn (metrics and
// traces both); nil members are skipped, and with none it is nil.
func Tee(os ...Observer) Observer {
	var t tee
	for _, o := range os {
		if o != nil {
			t = append(t, o)
		}
	}
	switch len(t) {
	case 0:
		return nil
	case 1:
		return t[0]
	}
	return t
}

type tee []Observer

func (t tee) RequestStart(ctx context.Context, r *Request) context.Context {
	for _, o := range t {
		ctx = o.RequestStart(ctx, r)
	}
	return ctx
}

func (t tee) RequestEnd(ctx context.Context, r *Request) {
	for _, o := range t {
		o.RequestEnd(ctx, r)
	}
}

func (t tee) CallStart(ctx context.Context, c *Call) context.Context {
	for _, o := range t {
		ctx = o.CallStart(ctx, c)
	}
	return ctx
}

func (t tee) CallEnd(ctx context.Context, c *Call) {
	for _, o := range t {
		o.CallEnd(ctx, c)
	}
}
