package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
		// The upstream needs a capability the client did not declare: the
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
	return slices.Clone(g.view.tools), nil
}

// CallTool calls the tool behind the exposed name by its upstream name.
func (g *Gateway) CallTool(ctx context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	if err := g.settle(ctx); err != nil {
		return nil, err
	}
	// The lookup and the upstream's state are read in one critical
	// section: an upstream that comes back up (or goes down) after it gets
	// the answer of the moment the view was read, never a mix of the two.
	g.mu.RLock()
	t, ok := g.view.toolIdx[p.Name]
	var stateErr error
	switch {
	case ok && t.m != nil:
		_, stateErr = t.m.state()
	case !ok:
		if downM := g.downFor(g.view.downTools, p.Name); downM != nil {
			_, stateErr = downM.state()
		} else {
			stateErr = fmt.Errorf("%w: %q", server.ErrUnknownTool, p.Name)
		}
	}
	fixed := g.fixed
	g.mu.RUnlock()
	if testHookAfterLookup != nil {
		testHookAfterLookup()
	}
	switch {
	case errors.Is(stateErr, server.ErrUnknownTool):
		return nil, stateErr
	case stateErr != nil:
		return nil, fmt.Errorf("tool %q: %w", p.Name, stateErr)
	case t.m == nil:
		return fixed.CallTool(ctx, p)
	}
	q := *p
	q.Name = t.name
	res, err := t.m.u.CallTool(ctx, &q)
	if err != nil {
		return nil, fail(t.m, "tools/call", err)
	}
	if res == nil {
		return nil, fmt.Errorf("upstream %q: tools/call: no result", t.m.name)
	}
	out := *res
	out.Content = t.m.mapBlocks(res.Content)
	if out.Content == nil {
		out.Content = []mcp.ContentBlock{}
	}
	return &out, nil
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

// ReadResource reads an exposed URI from its upstream. Not found, as
// docs/revisions.md#resource-not-found has it, is a [*server.ResourceNotFoundError] for the
// URI the client sent, for four causes: not an mcpx:// URI (and no root),
// no namespace in it, a namespace that is not configured (or serves no
// resources), or an upstream that answered -32002 or -32602. Every other
// failure is an error carrying the upstream's message.
func (g *Gateway) ReadResource(ctx context.Context, p *mcp.ReadResourceRequestParams) (*mcp.ReadResourceResult, error) {
	if err := g.settle(ctx); err != nil {
		return nil, err
	}
	notFound := &server.ResourceNotFoundError{URI: p.URI}
	g.mu.RLock()
	have := g.has(hasResources)
	g.mu.RUnlock()
	if !have {
		return nil, server.ErrUnsupported
	}
	m, uri, ok := g.resolve(p.URI)
	if !ok {
		return nil, notFound
	}
	caps, err := g.up(m)
	if err != nil {
		return nil, err
	}
	if caps.Resources == nil {
		return nil, notFound
	}
	q := *p
	q.URI = uri
	res, err := m.u.ReadResource(ctx, &q)
	var je *jsonrpc.Error
	switch {
	case errors.As(err, &je) && (je.Code == jsonrpc.ResourceNotFound || je.Code == jsonrpc.InvalidParams):
		return nil, notFound
	case errors.As(err, &je):
		return nil, &UpstreamError{Upstream: m.name, Method: "resources/read", Code: je.Code, Message: je.Message}
	case err != nil && named(m.name, err):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("upstream %q: resources/read: %w", m.name, err)
	case res == nil || len(res.Contents) == 0:
		return nil, notFound
	}
	out := *res
	out.Contents = m.mapContents(res.Contents)
	return &out, nil
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
	out := slices.Clone(g.view.prompts)
	if out == nil {
		out = []mcp.Prompt{}
	}
	return out, nil
}

// prompt finds the upstream prompt behind an exposed name.
func (g *Gateway) prompt(name string) (target, error) {
	// As in CallTool: lookup and state in one critical section.
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

// testHookAfterLookup, when set by a test, runs after CallTool and
// prompts/get (and completion of a prompt) have looked their name up and
// released the lock.
var testHookAfterLookup func()

// GetPrompt gets the prompt behind the exposed name by its upstream name.
func (g *Gateway) GetPrompt(ctx context.Context, p *mcp.GetPromptRequestParams) (*mcp.GetPromptResult, error) {
	if err := g.settle(ctx); err != nil {
		return nil, err
	}
	t, err := g.prompt(p.Name)
	if err != nil {
		return nil, err
	}
	q := *p
	q.Name = t.name
	res, err := t.m.u.GetPrompt(ctx, &q)
	if err != nil {
		return nil, fail(t.m, "prompts/get", err)
	}
	if res == nil {
		return nil, fmt.Errorf("upstream %q: prompts/get: no result", t.m.name)
	}
	out := *res
	out.Messages = t.m.mapMessages(res.Messages)
	if out.Messages == nil {
		out.Messages = []mcp.PromptMessage{}
	}
	return &out, nil
}

// Complete maps the reference back to the upstream's prompt name or
// template and asks that upstream. An upstream that declared no
// completions gets no request: the answer is no values.
func (g *Gateway) Complete(ctx context.Context, p *mcp.CompleteRequestParams) (*mcp.CompleteResult, error) {
	if err := g.settle(ctx); err != nil {
		return nil, err
	}
	// No capability check: 2024-11-05 has completion/complete but no
	// completions capability, so an upstream is asked, and one without the
	// method answers -32601, which means no values.
	q := *p
	var m *member
	switch r := p.Ref.Value.(type) {
	case *mcp.PromptReference:
		t, err := g.prompt(r.Name)
		if errors.Is(err, server.ErrUnknownPrompt) || errors.Is(err, server.ErrUnsupported) {
			return nil, server.InvalidParams("completion reference: unknown prompt %q", r.Name)
		}
		if err != nil {
			return nil, err
		}
		ref := *r
		ref.Name = t.name
		q.Ref = mcp.CompleteRequestParamsRef{Value: &ref}
		m = t.m
	case *mcp.ResourceTemplateReference:
		var uri string
		var ok bool
		if m, uri, ok = g.resolve(r.URI); !ok {
			return nil, server.InvalidParams("completion reference: unknown resource template %q", r.URI)
		}
		ref := *r
		ref.URI = uri
		q.Ref = mcp.CompleteRequestParamsRef{Value: &ref}
	default:
		return nil, server.InvalidParams(`completion reference: want a "ref/prompt" or "ref/resource" reference`)
	}
	if _, err := g.up(m); err != nil {
		return nil, err
	}
	res, err := m.u.Complete(ctx, &q)
	var je *jsonrpc.Error
	if errors.As(err, &je) && je.Code == jsonrpc.MethodNotFound {
		return &mcp.CompleteResult{Completion: mcp.CompleteResultCompletion{Values: []string{}}}, nil
	}
	if err != nil {
		return nil, fail(m, "completion/complete", err)
	}
	if res == nil {
		return nil, fmt.Errorf("upstream %q: completion/complete: no result", m.name)
	}
	return res, nil
}
