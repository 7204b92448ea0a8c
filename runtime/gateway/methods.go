package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// UpstreamError is a JSON-RPC error an upstream answered, passed on as a
// failure of mcpx's own: it carries the upstream's code and message but
// does not unwrap to a *jsonrpc.Error, so the edge answers -32603 with the
// message instead of forwarding a code mcpx did not choose.
type UpstreamError struct {
	Upstream, Method string
	Code             int64
	Message          string
}

func (e *UpstreamError) Error() string {
	return fmt.Sprintf("upstream %q: %s: %s (code %d)", e.Upstream, e.Method, e.Message, e.Code)
}

// DownError is the error for a request to an upstream that is down.
// Reason is why, as the last load found it; it is said once, in one
// sentence naming the upstream once: a reason that already names it (the
// upstream client's "upstream "x" is unavailable (cause); ...") is the
// sentence's start.
type DownError struct{ Upstream, Reason string }

func (e *DownError) Error() string {
	subject := fmt.Sprintf("upstream %q", e.Upstream)
	// The upstream client's "; mcpx retries in 250ms" was true when the
	// reason was found; the gateway retries on its own schedule.
	r, _, _ := strings.Cut(e.Reason, "; mcpx retries in ")
	if rest, ok := strings.CutPrefix(r, subject+": "); ok {
		r = rest
	} else if strings.HasPrefix(r, subject+" ") {
		return r + "; try again later"
	}
	return fmt.Sprintf("%s is down (%s); try again later", subject, r)
}

// fail turns an error from m into the one the client gets. A JSON-RPC
// -32602 becomes invalid params (tools/call, prompts/get and
// completion/complete: the client's arguments were wrong), the errors the
// edge knows pass on, and anything else becomes an error naming m that the
// edge answers -32603 (or "timed out" / "cancelled" for the context's own).
func fail(m *member, method string, err error) error {
	var (
		je      *jsonrpc.Error
		missing *server.MissingCapabilityError
		invalid *server.InvalidParamsError
	)
	switch {
	case errors.As(err, &je) && je.Code == jsonrpc.InvalidParams:
		return server.InvalidParams("upstream %q: %s", m.name, je.Message)
	case errors.As(err, &je) && je.Code == jsonrpc.MissingRequiredClientCapability:
		// The upstream needs a capability the client did not declare
		// (Forward has already taken those it did, missingCapability): the
		// client's own error, passed on with what is required.
		var data struct {
			Required mcp.ClientCapabilities `json:"requiredCapabilities"`
		}
		_ = mcpjson.Unmarshal(je.Data, &data)
		return &server.MissingCapabilityError{Required: data.Required}
	case errors.As(err, &je):
		return &UpstreamError{Upstream: m.name, Method: method, Code: je.Code, Message: je.Message}
	case errors.As(err, &missing), errors.As(err, &invalid), named(m.name, err):
		// An error naming m already says what failed, and where: said once.
		return err
	}
	return fmt.Errorf("upstream %q: %s: %w", m.name, method, err)
}

// up returns m's state for a request: an error when it is down.
func (g *Gateway) up(m *member) (mcp.ServerCapabilities, error) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return m.state()
}

// state is up's answer; the caller holds g.mu. Called in the same critical
// section as a lookup in g.view, it agrees with that view: a member the
// view lists is up, one whose names it keeps in downTools or downPrompts is
// down.
func (m *member) state() (mcp.ServerCapabilities, error) {
	if m.down {
		return mcp.ServerCapabilities{}, &DownError{Upstream: m.name, Reason: m.downWhy}
	}
	if m.caps == nil {
		return mcp.ServerCapabilities{}, &DownError{Upstream: m.name, Reason: "not loaded yet"}
	}
	return *m.caps, nil
}

// ListTools returns mcpx's own tools, then every upstream's, sorted.
func (g *Gateway) ListTools(ctx context.Context) ([]mcp.Tool, error) {
	if err := g.settle(ctx); err != nil {
		return nil, err
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	if len(g.fixedTools) == 0 && !g.has(hasTools) {
		return nil, server.ErrUnsupported
	}
	g.reportListHints(ctx, hintTools)
	// A view is replaced whole, never changed in place, and callers only
	// read a list (server.Namespace), so it is shared, not copied: a copy
	// per page of a 10,000-tool list was 160 MB per listing.
	return g.view.tools, nil
}

// AllTools lists every upstream tool by exposed name, those of hidden
// upstreams ("expose": "lazy") too, and not mcpx's own (fixed) tools:
// what progressive discovery searches. The list is shared; only read it.
func (g *Gateway) AllTools(ctx context.Context) ([]mcp.Tool, error) {
	if err := g.settle(ctx); err != nil {
		return nil, err
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.view.all, nil
}

// CallTool calls the tool behind the exposed name by its upstream name
// (Forward, route by tool name), the result's URIs exposed.
func (g *Gateway) CallTool(ctx context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	v, err := g.Forward(ctx, mcp.MethodToolsCall, p)
	return forwarded[mcp.CallToolResult](mcp.MethodToolsCall, v, err)
}

// ListResources returns every upstream's resources, their URIs exposed.
func (g *Gateway) ListResources(ctx context.Context) ([]mcp.Resource, error) {
	if err := g.settle(ctx); err != nil {
		return nil, err
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	if !g.has(hasResources) {
		return nil, server.ErrUnsupported
	}
	g.reportListHints(ctx, hintResources)
	out := []mcp.Resource{}
	for _, m := range g.members {
		if m.down {
			continue
		}
		for _, r := range m.resources {
			r.URI = m.outURI(r.URI)
			out = append(out, r)
		}
	}
	return out, nil
}

// ListResourceTemplates returns every upstream's templates, exposed.
func (g *Gateway) ListResourceTemplates(ctx context.Context) ([]mcp.ResourceTemplate, error) {
	if err := g.settle(ctx); err != nil {
		return nil, err
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	if !g.has(hasResources) {
		return nil, server.ErrUnsupported
	}
	g.reportListHints(ctx, hintTemplates)
	out := []mcp.ResourceTemplate{}
	for _, m := range g.members {
		if m.down {
			continue
		}
		for _, t := range m.templates {
			t.URITemplate = m.outURI(t.URITemplate)
			out = append(out, t)
		}
	}
	return out, nil
}

// resolve finds the upstream and its own URI for an exposed URI: an
// mcpx://<namespace>/ URI goes to that namespace, any other to the root.
// ok is false when no upstream serves it.
func (g *Gateway) resolve(uri string) (m *member, upstreamURI string, ok bool) {
	ns, rest, isMCPX := SplitURI(uri)
	g.mu.RLock()
	defer g.mu.RUnlock()
	switch {
	case !isMCPX && g.root != nil:
		return g.root, uri, true
	case !isMCPX, ns == "", rest == "":
		return nil, "", false
	}
	m = g.byName[ns]
	return m, rest, m != nil
}

// ReadResource reads an exposed URI from its upstream (Forward, route by
// URI). Not found, as docs/revisions.md#resource-not-found has it, is a
// [*server.ResourceNotFoundError] for the URI the client sent, for five
// causes: not an mcpx:// URI (and no root), no namespace in it, a namespace
// that is not configured (or serves no resources), an upstream that
// answered -32002 or -32602, or one that answered no contents. Every other
// failure is an error carrying the upstream's message.
func (g *Gateway) ReadResource(ctx context.Context, p *mcp.ReadResourceRequestParams) (*mcp.ReadResourceResult, error) {
	v, err := g.Forward(ctx, mcp.MethodResourcesRead, p)
	r, err := forwarded[mcp.ReadResourceResult](mcp.MethodResourcesRead, v, err)
	if err == nil {
		g.reportReadHint(ctx, p.URI, r) // cache.go
	}
	return r, err
}

// ListPrompts returns every upstream's prompts, sorted by exposed name.
func (g *Gateway) ListPrompts(ctx context.Context) ([]mcp.Prompt, error) {
	if err := g.settle(ctx); err != nil {
		return nil, err
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	if !g.has(hasPrompts) {
		return nil, server.ErrUnsupported
	}
	g.reportListHints(ctx, hintPrompts)
	out := g.view.prompts // shared, as in ListTools
	if out == nil {
		out = []mcp.Prompt{}
	}
	return out, nil
}

// prompt finds the upstream prompt behind an exposed name.
func (g *Gateway) prompt(name string) (target, error) {
	// As for tools (Gateway.tool): lookup and state in one critical section.
	g.mu.RLock()
	t, ok := g.view.promptIdx[name]
	var err error
	switch downM := g.downFor(g.view.downPrompts, name); {
	case ok:
		_, err = t.m.state()
	case downM != nil:
		_, err = downM.state()
	case !g.has(hasPrompts):
		err = server.ErrUnsupported
	default:
		err = fmt.Errorf("%w: %q", server.ErrUnknownPrompt, name)
	}
	g.mu.RUnlock()
	if testHookAfterLookup != nil {
		testHookAfterLookup()
	}
	var de *DownError
	if errors.As(err, &de) {
		return target{}, fmt.Errorf("prompt %q: %w", name, err)
	}
	return t, err
}

// testHookAfterLookup, when set by a test, runs after a tool or prompt
// name has been looked up (Gateway.tool, Gateway.prompt) and the lock
// released.
var testHookAfterLookup func()

// GetPrompt gets the prompt behind the exposed name by its upstream name
// (Forward, route by prompt name), the messages' URIs exposed.
func (g *Gateway) GetPrompt(ctx context.Context, p *mcp.GetPromptRequestParams) (*mcp.GetPromptResult, error) {
	v, err := g.Forward(ctx, mcp.MethodPromptsGet, p)
	return forwarded[mcp.GetPromptResult](mcp.MethodPromptsGet, v, err)
}

// Complete maps the reference back to the upstream's prompt name or
// template and asks that upstream (Forward, route by reference). An
// upstream without the method (or that answers -32601) has no values to
// offer: the route's fallback is the empty result.
func (g *Gateway) Complete(ctx context.Context, p *mcp.CompleteRequestParams) (*mcp.CompleteResult, error) {
	v, err := g.Forward(ctx, mcp.MethodCompletionComplete, p)
	return forwarded[mcp.CompleteResult](mcp.MethodCompletionComplete, v, err)
}

// ToolCounts is how many tools each upstream contributes now, by name
// (hidden ones included; an upstream that is down contributes none).
func (g *Gateway) ToolCounts() map[string]int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	n := map[string]int{}
	for _, t := range g.view.toolIdx {
		if t.m != nil {
			n[t.m.name]++
		}
	}
	return n
}
