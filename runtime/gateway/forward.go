package gateway

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/observe"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/tracing"
)

// clientMethod finds a request in the generated tables; a test swaps it to
// route a method no revision has yet.
var clientMethod = mcp.LookupClientMethod

// Forward sends a client request to the one upstream its route names (the
// overlay's "route" entries, generated into [mcp.ClientMethods]): by a tool
// or prompt name mapped back to the upstream and its own name, by an
// mcpx:// URI (or the root's own), by a completion reference; with the
// upstream's key in the params it gets. A method the upstream's revision
// lacks gets the route's fallback: -32601 naming the upstream, or an empty
// result. Results that carry the upstream's names or URIs are rewritten
// (post); every other result passes as the upstream gave it. So a request
// a new revision adds is forwarded with no code here. A retry's
// requestState is opened and the upstream's own put back, and an
// upstream's input_required becomes a [*server.InputRequired] (mrtr.go).
// Methods routed "merge" or "local", and unknown ones, are
// [mcp.ErrNoHandler].
func (g *Gateway) Forward(ctx context.Context, method string, params any) (any, error) {
	cm := clientMethod(method)
	if cm == nil || cm.Key == nil || cm.WithKey == nil {
		return nil, mcp.ErrNoHandler
	}
	if err := g.settle(ctx); err != nil {
		return nil, err
	}
	key, ok := cm.Key(params)
	if !ok {
		if cm.By == mcp.RouteByRef {
			return nil, server.InvalidParams(`%s reference: want a "ref/prompt" or "ref/resource" reference`, noun(method))
		}
		return nil, server.InvalidParams("%s: the params name nothing to route by", method)
	}
	m, own, fixed, err := g.route(ctx, cm, key)
	if m != nil {
		observe.Route(ctx, m.name, key.Value) // the request's namespace, for metrics and traces
	}
	if err != nil || m == nil {
		if err == nil { // mcpx's own tool
			return mcp.Dispatch(ctx, fixed, method, params)
		}
		return nil, err
	}
	tracing.Namespace(ctx, m.name)
	up, parked, err := g.resume(ctx, method, params, m, cm.WithKey(params, own))
	if err == nil {
		err = g.elsewhere(parked) // parked on another replica (cluster.go)
	}
	if err != nil {
		return nil, err
	}
	if method == mcp.MethodToolsCall {
		g.taskField(m, own, params, up) // uptasks.go
	}
	res, err := g.call(ctx, m, method, params, up, parked) // park.go
	if err != nil {
		return g.failed(ctx, cm, m, method, params, err)
	}
	switch {
	case res == nil:
		return nil, fmt.Errorf("upstream %q: %s: no result", m.name, method)
	case post[method] != nil:
		return post[method](m, params, res)
	}
	return res, nil
}

// failed is what Forward answers for the upstream's err: apart from a
// call that succeeded, as the targets of errors.As escape and would cost
// every call an allocation each.
func (g *Gateway) failed(ctx context.Context, cm *mcp.ClientMethod, m *member, method string, params any, err error) (any, error) {
	if ir, ok := g.inputRequired(ctx, m, method, params, err); ok {
		return nil, ir
	}
	if ir := (*server.InputRequired)(nil); errors.As(err, &ir) {
		return nil, err // a parked call's question (park.go)
	}
	if mc := g.missingCapability(ctx, m, method, err); mc != nil {
		return nil, mc
	}
	var je *jsonrpc.Error
	switch {
	case errors.As(err, &je) && je.Code == jsonrpc.MethodNotFound:
		return fallback(cm, m, je)
	case failures[method] != nil:
		return nil, failures[method](m, params, err)
	}
	return nil, fail(m, method, err)
}

// noun is a method's first segment: "completion" of completion/complete.
func noun(method string) string {
	n, _, _ := strings.Cut(method, "/")
	return n
}

// route finds the upstream for key, checking its state in the same
// critical section as the lookup. It returns m and the upstream's own key
// (own), or m nil and mcpx's own namespace in fixed (a fixed tool), or the
// error the client gets. (own was an any holding either, whose string
// cost every call an allocation.)
func (g *Gateway) route(ctx context.Context, cm *mcp.ClientMethod, key mcp.RouteKey) (m *member, own string, fixed any, err error) {
	switch {
	case cm.By == mcp.RouteByName && key.Space == "tool":
		t, fixed, err := g.tool(key.Value)
		if err != nil {
			return nil, "", nil, err
		}
		if t.m == nil {
			return nil, "", fixed, nil
		}
		return t.m, t.name, nil, nil
	case cm.By == mcp.RouteByName && key.Space == "prompt":
		t, err := g.prompt(key.Value)
		if err != nil {
			return nil, "", nil, err
		}
		return t.m, t.name, nil, nil
	case cm.By == mcp.RouteByURI:
		// Not found, as docs/revisions.md#resource-not-found has it: not an
		// mcpx:// URI (and no root), no namespace in it, a namespace that is
		// not configured or serves no resources.
		notFound := &server.ResourceNotFoundError{URI: key.Value}
		g.mu.RLock()
		have := g.has(hasResources)
		g.mu.RUnlock()
		if !have {
			return nil, "", nil, server.ErrUnsupported
		}
		m, uri, ok := g.resolve(key.Value)
		if !ok {
			return nil, "", nil, notFound
		}
		caps, err := g.up(m)
		if err != nil {
			return nil, "", nil, err
		}
		if caps.Resources == nil {
			return nil, "", nil, notFound
		}
		return m, uri, nil, nil
	case cm.By == mcp.RouteByRef && key.Space == "uri":
		m, uri, ok := g.resolve(key.Value)
		if !ok {
			return nil, "", nil, server.InvalidParams("%s reference: unknown resource template %q", noun(cm.Name), key.Value)
		}
		if _, err := g.up(m); err != nil {
			return nil, "", nil, err
		}
		return m, uri, nil, nil
	case cm.By == mcp.RouteByRef && key.Space == "prompt":
		// No capability check: 2024-11-05 has completion/complete but no
		// completions capability, so an upstream is asked, and one without
		// the method gets the route's fallback.
		t, err := g.prompt(key.Value)
		if errors.Is(err, server.ErrUnknownPrompt) || errors.Is(err, server.ErrUnsupported) {
			return nil, "", nil, server.InvalidParams("%s reference: unknown prompt %q", noun(cm.Name), key.Value)
		}
		if err != nil {
			return nil, "", nil, err
		}
		if _, err := g.up(t.m); err != nil {
			return nil, "", nil, err
		}
		return t.m, t.name, nil, nil
	}
	// By task id: the gateway does not know yet which upstream made a task.
	return nil, "", nil, fmt.Errorf("%s: the gateway does not route by %s yet: %w", cm.Name, key.Space, server.ErrUnsupported)
}

// tool finds the tool behind an exposed name: a target, whose m is nil for
// mcpx's own (then fixed answers it).
func (g *Gateway) tool(name string) (target, server.Namespace, error) {
	// The lookup and the upstream's state are read in one critical
	// section: an upstream that comes back up (or goes down) after it gets
	// the answer of the moment the view was read, never a mix of the two.
	g.mu.RLock()
	t, ok := g.view.toolIdx[name]
	var stateErr error
	switch {
	case ok && t.m != nil:
		_, stateErr = t.m.state()
	case !ok:
		if downM := g.downFor(g.view.downTools, name); downM != nil {
			_, stateErr = downM.state()
		} else {
			stateErr = fmt.Errorf("%w: %q", server.ErrUnknownTool, name)
		}
	}
	fixed := g.fixed
	g.mu.RUnlock()
	if testHookAfterLookup != nil {
		testHookAfterLookup()
	}
	switch {
	case errors.Is(stateErr, server.ErrUnknownTool):
		return target{}, nil, stateErr
	case stateErr != nil:
		return target{}, nil, fmt.Errorf("tool %q: %w", name, stateErr)
	}
	return t, fixed, nil
}

// fallback answers a method the upstream's revision lacks (or that it
// answered -32601) as the route says: "empty" is the result type's zero
// value (completion: no values to offer); "refuse" is -32601 naming the
// upstream, never its own error passed through as ours.
func fallback(cm *mcp.ClientMethod, m *member, je *jsonrpc.Error) (any, error) {
	if cm.Fallback == "empty" {
		if r := mcp.New(cm.Result); r != nil {
			return r, nil
		}
	}
	msg := je.Message
	if !strings.Contains(msg, strconv.Quote(m.name)) {
		msg = fmt.Sprintf("upstream %q has no method %s: %s", m.name, cm.Name, jsonrpc.Clip(msg))
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.MethodNotFound, Message: msg}
}

// failures maps an upstream's error for the methods whose errors mean
// something of their own; every other method's go through fail.
var failures = map[string]func(m *member, params any, err error) error{
	mcp.MethodResourcesRead: func(m *member, params any, err error) error {
		var je *jsonrpc.Error
		if errors.As(err, &je) && (je.Code == jsonrpc.ResourceNotFound || je.Code == jsonrpc.InvalidParams) {
			return &server.ResourceNotFoundError{URI: params.(*mcp.ReadResourceRequestParams).URI}
		}
		if errors.As(err, &je) {
			return &UpstreamError{Upstream: m.name, Method: mcp.MethodResourcesRead, Code: je.Code, Message: je.Message}
		}
		return fail(m, mcp.MethodResourcesRead, err)
	},
}

// post rewrites the results that carry the upstream's URIs for the client
// (mcpx:// URIs; see uris.go): the only code a routed method may need.
var post = map[string]func(m *member, params, res any) (any, error){
	mcp.MethodToolsCall: rewrite(func(m *member, _ any, r *mcp.CallToolResult) (*mcp.CallToolResult, error) {
		if r.Content != nil && !m.mapsAny(r.Content) {
			return r, nil // nothing to map: the result as it came (a lane's stand-in among them, edge/lane.go)
		}
		out := *r
		out.Content = m.mapBlocks(r.Content)
		if out.Content == nil {
			out.Content = []mcp.ContentBlock{}
		}
		return &out, nil
	}),
	mcp.MethodPromptsGet: rewrite(func(m *member, _ any, r *mcp.GetPromptResult) (*mcp.GetPromptResult, error) {
		out := *r
		out.Messages = m.mapMessages(r.Messages)
		if out.Messages == nil {
			out.Messages = []mcp.PromptMessage{}
		}
		return &out, nil
	}),
	mcp.MethodResourcesRead: rewrite(func(m *member, params any, r *mcp.ReadResourceResult) (*mcp.ReadResourceResult, error) {
		// A namespace must never answer a resource that does not exist with
		// empty contents (2026-07-28 MUST NOT).
		if len(r.Contents) == 0 {
			return nil, &server.ResourceNotFoundError{URI: params.(*mcp.ReadResourceRequestParams).URI}
		}
		out := *r
		out.Contents = m.mapContents(r.Contents)
		return &out, nil
	}),
}

// rewrite adapts a typed post step.
func rewrite[R any](f func(m *member, params any, r *R) (*R, error)) func(m *member, params, res any) (any, error) {
	return func(m *member, params, res any) (any, error) {
		r, ok := res.(*R)
		if !ok || r == nil {
			return nil, fmt.Errorf("upstream %q: answered a %T, want a %T", m.name, res, r)
		}
		out, err := f(m, params, r)
		if err != nil {
			return nil, err
		}
		return out, nil
	}
}

// forwarded is Forward's answer as the method's result type.
func forwarded[R any](method string, v any, err error) (*R, error) {
	if err != nil {
		return nil, err
	}
	r, ok := v.(*R)
	if !ok || r == nil {
		return nil, fmt.Errorf("%s: answered a %T, want a %T", method, v, r)
	}
	return r, nil
}
