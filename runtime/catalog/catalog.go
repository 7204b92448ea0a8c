// Package catalog builds a [server.Namespace] from plain Go values: tools,
// resources, resource templates and prompts, each a description in hub types
// beside a small function. The built-in demo and the conformance fixture are
// catalogs, so each is data plus a few funcs, and what every namespace must
// get right is written once, here:
//
//  1. Capabilities declares exactly the features that were added, so a
//     client never sees a capability whose methods answer "not found".
//  2. Unknown names are the errors package server defines: a wrapped
//     [server.ErrUnknownTool] or [server.ErrUnknownPrompt], and a
//     [*server.ResourceNotFoundError] for a URI nothing serves.
//  3. Tool arguments are checked against the tool's inputSchema before the
//     handler runs; a mismatch is a tool result with isError set, not a
//     protocol error, so the model can read it and retry (SEP-1303,
//     2025-11-25).
//  4. A prompt's required arguments are checked before its function runs;
//     a missing one is [server.InvalidParams] naming it.
//  5. Lists keep insertion order, so clients see tools in the order they
//     were written and consecutive lists agree (2026-07-28 asks for a
//     deterministic order).
//
// A catalog is filled at start-up and then served. It is safe for concurrent
// use, Add methods included, but they panic on a mistake in the data (a
// duplicate name, a schema that does not compile, a malformed URI template):
// such a mistake is in code, and should fail its first test rather than a
// client's request.
package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ToolHandler runs a tool. args is a JSON object that already satisfies the
// tool's inputSchema; it is "{}" when the client sent no arguments.
//
// A failure the model should see (bad input, a failed lookup) is a result
// with IsError set, see [ErrorResult]. A returned error is reported the same
// way, since the specification wants errors that originate in a tool inside
// its result; only the errors package server defines, and the context's own
// error once it is done, stay protocol errors.
type ToolHandler func(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error)

// ReadFunc reads a fixed resource. Returning no contents means the resource
// does not exist (now), and the client gets a resource-not-found error:
// SEP-2164 forbids an empty contents array for that.
type ReadFunc func(ctx context.Context) ([]mcp.ReadResourceResultContentsItem, error)

// TemplateReadFunc reads the resource a URI template matched: uri is the
// requested URI and vars holds each template variable's decoded value. As
// with [ReadFunc], no contents means no such resource.
type TemplateReadFunc func(ctx context.Context, uri string, vars map[string]string) ([]mcp.ReadResourceResultContentsItem, error)

// PromptFunc renders a prompt. args holds the arguments the client sent
// (never nil); every argument the prompt marks required is present.
type PromptFunc func(ctx context.Context, args map[string]string) (*mcp.GetPromptResult, error)

// CompleteFunc suggests values for a prompt argument or a template
// variable. The reference it is given names a prompt or template in the
// catalog; see [Suggest] for the common case.
type CompleteFunc func(ctx context.Context, p *mcp.CompleteRequestParams) (*mcp.CompleteResult, error)

// Catalog is a [server.Namespace] made of registered values. The zero value
// is not usable; call [New].
type Catalog struct {
	mu sync.RWMutex

	tools     []*tool
	toolIndex map[string]*tool

	resources []*resource
	resIndex  map[string]*resource
	templates []*template

	prompts     []*prompt
	promptIndex map[string]*prompt

	complete     CompleteFunc
	logging      bool
	subscribable bool

	version atomic.Uint64 // bumped by every Add and Set: see Version
}

// Version implements [server.Versioned]: it changes whenever a list the
// catalog answers would change, so the edge may keep encoded lists.
func (c *Catalog) Version() uint64 { return c.version.Load() }

type tool struct {
	def    mcp.Tool
	schema *jsonschema.Schema
	run    ToolHandler
}

type resource struct {
	def  mcp.Resource
	read ReadFunc
}

type template struct {
	def   mcp.ResourceTemplate
	match *uriTemplate
	read  TemplateReadFunc
}

type prompt struct {
	def mcp.Prompt
	get PromptFunc
}

// New returns an empty catalog: it declares no capabilities until something
// is added.
func New() *Catalog {
	return &Catalog{
		toolIndex:   map[string]*tool{},
		resIndex:    map[string]*resource{},
		promptIndex: map[string]*prompt{},
	}
}

var _ server.Namespace = (*Catalog)(nil)

// AddTool adds a tool; ListTools returns tools in the order they were added.
// A nil InputSchema becomes {"type":"object"}, the schema of a tool without
// arguments. AddTool panics on an empty or duplicate name, a nil handler, or
// an input or output schema that is not a compilable JSON Schema object with
// "type": "object" (the specification requires both to describe objects).
func (c *Catalog) AddTool(t mcp.Tool, handler ToolHandler) {
	if err := c.TryAddTool(t, handler); err != nil {
		panic(err.Error())
	}
}

// TryAddTool is AddTool for tools built at run time (from an OpenAPI
// document, a command's description): what AddTool panics on is an error
// saying why, and the catalog is left unchanged.
func (c *Catalog) TryAddTool(t mcp.Tool, handler ToolHandler) error {
	if t.Name == "" {
		return errors.New("catalog: tool without a name")
	}
	if handler == nil {
		return fmt.Errorf("catalog: tool %q: nil handler", t.Name)
	}
	if len(t.InputSchema) == 0 {
		t.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	schema, err := compileObjectSchema("input", t.Name, t.InputSchema)
	if err != nil {
		return fmt.Errorf("catalog: tool %q: %v", t.Name, err)
	}
	if len(t.OutputSchema) > 0 {
		if _, err := compileObjectSchema("output", t.Name, t.OutputSchema); err != nil {
			return fmt.Errorf("catalog: tool %q: %v", t.Name, err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.toolIndex[t.Name]; dup {
		return fmt.Errorf("catalog: duplicate tool %q", t.Name)
	}
	tl := &tool{def: t, schema: schema, run: handler}
	c.tools = append(c.tools, tl)
	c.toolIndex[t.Name] = tl
	c.version.Add(1)
	return nil
}

// AddResource adds a resource with a fixed URI. It panics on an empty URI or
// name, a duplicate URI, or a nil read function.
func (c *Catalog) AddResource(r mcp.Resource, read ReadFunc) {
	defer c.version.Add(1)
	if r.URI == "" || r.Name == "" {
		panic(fmt.Sprintf("catalog: resource %q: a resource needs a URI and a name", r.URI))
	}
	if read == nil {
		panic(fmt.Sprintf("catalog: resource %q: nil read function", r.URI))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.resIndex[r.URI]; dup {
		panic(fmt.Sprintf("catalog: duplicate resource %q", r.URI))
	}
	res := &resource{def: r, read: read}
	c.resources = append(c.resources, res)
	c.resIndex[r.URI] = res
}

// AddTemplate adds a resource template. Its URITemplate may use only RFC
// 6570 level-1 expressions, "{name}", which match a non-empty run of
// unreserved characters and percent-escapes (what level-1 expansion can
// produce) and are percent-decoded. A URI is matched against fixed resources
// first, then against templates in the order they were added. AddTemplate
// panics on a malformed or duplicate template, an empty name, or a nil read
// function.
func (c *Catalog) AddTemplate(t mcp.ResourceTemplate, read TemplateReadFunc) {
	defer c.version.Add(1)
	if t.Name == "" {
		panic(fmt.Sprintf("catalog: template %q without a name", t.URITemplate))
	}
	if read == nil {
		panic(fmt.Sprintf("catalog: template %q: nil read function", t.URITemplate))
	}
	m, err := parseURITemplate(t.URITemplate)
	if err != nil {
		panic(fmt.Sprintf("catalog: template %q: %v", t.URITemplate, err))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, o := range c.templates {
		if o.def.URITemplate == t.URITemplate {
			panic(fmt.Sprintf("catalog: duplicate template %q", t.URITemplate))
		}
	}
	c.templates = append(c.templates, &template{def: t, match: m, read: read})
}

// AddPrompt adds a prompt; ListPrompts keeps the order prompts were added.
// It panics on an empty or duplicate name, an argument without a name or
// named twice, or a nil get function.
func (c *Catalog) AddPrompt(p mcp.Prompt, get PromptFunc) {
	defer c.version.Add(1)
	if p.Name == "" {
		panic("catalog: prompt without a name")
	}
	if get == nil {
		panic(fmt.Sprintf("catalog: prompt %q: nil get function", p.Name))
	}
	seen := map[string]bool{}
	for _, a := range p.Arguments {
		if a.Name == "" || seen[a.Name] {
			panic(fmt.Sprintf("catalog: prompt %q: argument names must be present and distinct", p.Name))
		}
		seen[a.Name] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.promptIndex[p.Name]; dup {
		panic(fmt.Sprintf("catalog: duplicate prompt %q", p.Name))
	}
	pr := &prompt{def: p, get: get}
	c.prompts = append(c.prompts, pr)
	c.promptIndex[p.Name] = pr
}

// SetCompletion sets the function that answers completion/complete and
// declares the completions capability; nil removes both.
func (c *Catalog) SetCompletion(f CompleteFunc) {
	defer c.version.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.complete = f
}

// SetLogging declares the logging capability. A catalog sends log messages
// only from its handlers, through [server.Log]; declaring the capability is
// what lets a client set a level (logging/setLevel) to receive them.
func (c *Catalog) SetLogging(on bool) {
	defer c.version.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.logging = on
}

// Subscribable declares resources.subscribe, so clients may subscribe to
// resource updates. The server keeps the subscriptions; a catalog's
// resources only change when their functions say so, so it sends no updates
// itself.
func (c *Catalog) Subscribable(on bool) {
	defer c.version.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.subscribable = on
}

// Capabilities declares what was added: tools, resources (with subscribe
// when [Catalog.Subscribable]), prompts, completions and logging each only
// when present. listChanged is declared false: a catalog has no way yet to
// tell the server its lists changed.
func (c *Catalog) Capabilities() mcp.ServerCapabilities {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var caps mcp.ServerCapabilities
	if len(c.tools) > 0 {
		caps.Tools = &mcp.ServerCapabilitiesTools{ListChanged: mcp.Ptr(false)}
	}
	if c.hasResources() {
		caps.Resources = &mcp.ServerCapabilitiesResources{ListChanged: mcp.Ptr(false)}
		if c.subscribable {
			caps.Resources.Subscribe = mcp.Ptr(true)
		}
	}
	if len(c.prompts) > 0 {
		caps.Prompts = &mcp.ServerCapabilitiesPrompts{ListChanged: mcp.Ptr(false)}
	}
	if c.complete != nil {
		caps.Completions = json.RawMessage(`{}`)
	}
	if c.logging {
		caps.Logging = json.RawMessage(`{}`)
	}
	return caps
}

func (c *Catalog) hasResources() bool { return len(c.resources) > 0 || len(c.templates) > 0 }

// ListTools returns the tools in the order they were added. The values share
// their raw JSON with the catalog; callers must not modify them.
func (c *Catalog) ListTools(ctx context.Context) ([]mcp.Tool, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if len(c.tools) == 0 {
		return nil, server.ErrUnsupported
	}
	out := make([]mcp.Tool, len(c.tools))
	for i, t := range c.tools {
		out[i] = t.def
	}
	return out, nil
}

// CallTool validates the arguments against the tool's inputSchema and runs
// its handler; see [ToolHandler] for how failures are reported.
func (c *Catalog) CallTool(ctx context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	c.mu.RLock()
	t, ok := c.toolIndex[p.Name]
	none := len(c.tools) == 0
	c.mu.RUnlock()
	switch {
	case none:
		return nil, server.ErrUnsupported
	case !ok:
		return nil, fmt.Errorf("%w: %q", server.ErrUnknownTool, p.Name)
	}
	args, err := checkArguments(t.schema, p.Arguments)
	if err != nil {
		return ErrorResult("invalid arguments for tool %q: %v", p.Name, err), nil
	}
	res, err := t.run(withRequest(ctx, mcp.MethodToolsCall, p, p.InputResponses, p.RequestState), args)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("tool %q: %w", p.Name, ctx.Err())
	case err != nil && isProtocolError(err):
		return nil, err
	case err != nil:
		return ErrorResult("%v", err), nil
	case res == nil:
		return nil, fmt.Errorf("tool %q returned no result", p.Name)
	}
	if res.Content == nil {
		res.Content = []mcp.ContentBlock{}
	}
	return res, nil
}

// isProtocolError reports whether err is one the edge turns into a JSON-RPC
// error of its own, which a tool handler may mean to return as such.
func isProtocolError(err error) bool {
	var invalid *server.InvalidParamsError
	var notFound *server.ResourceNotFoundError
	return errors.Is(err, server.ErrUnsupported) || errors.Is(err, server.ErrUnknownTool) ||
		errors.Is(err, server.ErrUnknownPrompt) || errors.As(err, &invalid) || errors.As(err, &notFound) ||
		errors.As(err, new(*server.MissingCapabilityError)) || errors.As(err, new(*server.InputRequired)) ||
		errors.As(err, new(*jsonrpc.Error)) // a handler's own JSON-RPC error (the fixture's protocol_error_job)
}

// ListResources returns the fixed resources in the order they were added.
func (c *Catalog) ListResources(ctx context.Context) ([]mcp.Resource, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.hasResources() {
		return nil, server.ErrUnsupported
	}
	out := make([]mcp.Resource, len(c.resources))
	for i, r := range c.resources {
		out[i] = r.def
	}
	return out, nil
}

// ListResourceTemplates returns the templates in the order they were added.
func (c *Catalog) ListResourceTemplates(ctx context.Context) ([]mcp.ResourceTemplate, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.hasResources() {
		return nil, server.ErrUnsupported
	}
	out := make([]mcp.ResourceTemplate, len(c.templates))
	for i, t := range c.templates {
		out[i] = t.def
	}
	return out, nil
}

// ReadResource reads the fixed resource with the requested URI, or else the
// first template that matches it.
func (c *Catalog) ReadResource(ctx context.Context, p *mcp.ReadResourceRequestParams) (*mcp.ReadResourceResult, error) {
	c.mu.RLock()
	if !c.hasResources() {
		c.mu.RUnlock()
		return nil, server.ErrUnsupported
	}
	ctx = withRequest(ctx, mcp.MethodResourcesRead, p, p.InputResponses, p.RequestState)
	var read func() ([]mcp.ReadResourceResultContentsItem, error)
	if r, ok := c.resIndex[p.URI]; ok {
		read = func() ([]mcp.ReadResourceResultContentsItem, error) { return r.read(ctx) }
	} else {
		for _, t := range c.templates {
			if vars, ok := t.match.match(p.URI); ok {
				read = func() ([]mcp.ReadResourceResultContentsItem, error) { return t.read(ctx, p.URI, vars) }
				break
			}
		}
	}
	c.mu.RUnlock()
	if read == nil {
		return nil, &server.ResourceNotFoundError{URI: p.URI}
	}
	contents, err := read()
	if err != nil {
		return nil, err
	}
	if len(contents) == 0 {
		return nil, &server.ResourceNotFoundError{URI: p.URI}
	}
	return &mcp.ReadResourceResult{Contents: contents}, nil
}

// ListPrompts returns the prompts in the order they were added.
func (c *Catalog) ListPrompts(ctx context.Context) ([]mcp.Prompt, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if len(c.prompts) == 0 {
		return nil, server.ErrUnsupported
	}
	out := make([]mcp.Prompt, len(c.prompts))
	for i, p := range c.prompts {
		out[i] = p.def
	}
	return out, nil
}

// GetPrompt checks the prompt's required arguments and renders it.
func (c *Catalog) GetPrompt(ctx context.Context, p *mcp.GetPromptRequestParams) (*mcp.GetPromptResult, error) {
	c.mu.RLock()
	pr, ok := c.promptIndex[p.Name]
	none := len(c.prompts) == 0
	c.mu.RUnlock()
	switch {
	case none:
		return nil, server.ErrUnsupported
	case !ok:
		return nil, fmt.Errorf("%w: %q", server.ErrUnknownPrompt, p.Name)
	}
	for _, a := range pr.def.Arguments {
		if a.Required != nil && *a.Required {
			if _, ok := p.Arguments[a.Name]; !ok {
				return nil, server.InvalidParams("prompt %q: missing required argument %q", p.Name, a.Name)
			}
		}
	}
	args := p.Arguments
	if args == nil {
		args = map[string]string{}
	}
	res, err := pr.get(withRequest(ctx, mcp.MethodPromptsGet, p, p.InputResponses, p.RequestState), args)
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, fmt.Errorf("prompt %q returned no result", p.Name)
	}
	if res.Messages == nil {
		res.Messages = []mcp.PromptMessage{}
	}
	return res, nil
}

// Complete checks that the reference names a prompt, template or resource in
// the catalog, then asks the completion function. ([server.Server] trims the
// result to the 100 values the specification allows.)
func (c *Catalog) Complete(ctx context.Context, p *mcp.CompleteRequestParams) (*mcp.CompleteResult, error) {
	c.mu.RLock()
	f := c.complete
	known, what := c.knownRef(p.Ref)
	c.mu.RUnlock()
	if f == nil {
		return nil, server.ErrUnsupported
	}
	if !known {
		return nil, server.InvalidParams("completion reference: %s", what)
	}
	res, err := f(ctx, p)
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, fmt.Errorf("completion returned no result")
	}
	return res, nil
}

// knownRef reports whether ref names something in the catalog and, when it
// does not, says why. The caller holds c.mu.
func (c *Catalog) knownRef(ref mcp.CompleteRequestParamsRef) (bool, string) {
	switch r := ref.Value.(type) {
	case *mcp.PromptReference:
		if _, ok := c.promptIndex[r.Name]; ok {
			return true, ""
		}
		return false, fmt.Sprintf("unknown prompt %q", r.Name)
	case *mcp.ResourceTemplateReference:
		if _, ok := c.resIndex[r.URI]; ok {
			return true, ""
		}
		for _, t := range c.templates {
			if t.def.URITemplate == r.URI {
				return true, ""
			}
		}
		return false, fmt.Sprintf("unknown resource template %q", r.URI)
	default:
		return false, `want a "ref/prompt" or "ref/resource" reference`
	}
}
