package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// fake is an Upstream made of values. Lists are served pageSize at a time
// (0: all at once).
type fake struct {
	name    string
	changes chan string

	mu        sync.Mutex
	caps      mcp.ServerCapabilities
	tools     []mcp.Tool
	prompts   []mcp.Prompt
	resources []mcp.Resource
	templates []mcp.ResourceTemplate
	pageSize  int
	loopPages bool  // every page's nextCursor is "again"
	endless   bool  // every page's nextCursor is new
	listErr   error // every list fails
	capsErr   error
	isDown    bool          // set by event: Capabilities fails, as a crashed upstream's does
	hold      chan struct{} // if not nil, Capabilities waits for it to close (or ctx): an upstream slow to initialize
	listCalls int

	callTool  func(p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error)
	read      func(p *mcp.ReadResourceRequestParams) (*mcp.ReadResourceResult, error)
	getPrompt func(p *mcp.GetPromptRequestParams) (*mcp.GetPromptResult, error)
	complete  func(p *mcp.CompleteRequestParams) (*mcp.CompleteResult, error)
	// other answers a method the fake has no handler for (one no revision
	// has yet); nil: -32601, as an upstream client says for a method its
	// upstream's revision lacks.
	other func(method string, params any) (any, error)

	got    []any // every request's params, in order
	closed bool
}

func newFake(name string, tools ...string) *fake {
	f := &fake{name: name, changes: make(chan string, 16)}
	f.caps.Tools = &mcp.ServerCapabilitiesTools{}
	for _, t := range tools {
		f.tools = append(f.tools, tool(t))
	}
	return f
}

func tool(name string) mcp.Tool {
	return mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (f *fake) Name() string { return f.name }

func (f *fake) Capabilities(ctx context.Context) (mcp.ServerCapabilities, error) {
	if f.hold != nil {
		select {
		case <-f.hold:
		case <-ctx.Done():
			return mcp.ServerCapabilities{}, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.isDown {
		return mcp.ServerCapabilities{}, errFakeDown
	}
	return f.caps, f.capsErr
}

var errFakeDown = errors.New("the fake upstream is down")

// event sends ev on Changes as an upstream client does: after "down" it
// cannot be reached (Capabilities fails, saying so) until "up".
func (f *fake) event(ev string) { f.eventCtx(context.Background(), ev) }

// eventCtx is event giving up on sending when ctx is done.
func (f *fake) eventCtx(ctx context.Context, ev string) {
	f.mu.Lock()
	switch ev {
	case EventDown:
		f.isDown = true
	case EventUp:
		f.isDown = false
	}
	f.mu.Unlock()
	select {
	case f.changes <- ev:
	case <-ctx.Done():
	}
}

// page serves items at cursor.
func page[T any](f *fake, items []T, cursor string) ([]T, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listCalls++
	if f.listErr != nil {
		return nil, "", f.listErr
	}
	if f.loopPages {
		return items, "again", nil
	}
	if f.endless {
		return nil, "p" + strconv.Itoa(f.listCalls), nil
	}
	if f.pageSize == 0 {
		return append([]T(nil), items...), "", nil
	}
	start := 0
	if cursor != "" {
		start, _ = strconv.Atoi(cursor)
	}
	end := min(start+f.pageSize, len(items))
	next := ""
	if end < len(items) {
		next = strconv.Itoa(end)
	}
	return append([]T(nil), items[start:end]...), next, nil
}

func (f *fake) ListTools(ctx context.Context, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
	cursor := p.Cursor
	items, next, err := page(f, f.snapshotTools(), cursor)
	if err != nil {
		return nil, err
	}
	return &mcp.ListToolsResult{Tools: items, NextCursor: next}, nil
}

func (f *fake) snapshotTools() []mcp.Tool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]mcp.Tool(nil), f.tools...)
}

func (f *fake) ListPrompts(ctx context.Context, p *mcp.PaginatedRequestParams) (*mcp.ListPromptsResult, error) {
	cursor := p.Cursor
	f.mu.Lock()
	ps := append([]mcp.Prompt(nil), f.prompts...)
	f.mu.Unlock()
	items, next, err := page(f, ps, cursor)
	if err != nil {
		return nil, err
	}
	return &mcp.ListPromptsResult{Prompts: items, NextCursor: next}, nil
}

func (f *fake) ListResources(ctx context.Context, p *mcp.PaginatedRequestParams) (*mcp.ListResourcesResult, error) {
	cursor := p.Cursor
	f.mu.Lock()
	rs := append([]mcp.Resource(nil), f.resources...)
	f.mu.Unlock()
	items, next, err := page(f, rs, cursor)
	if err != nil {
		return nil, err
	}
	return &mcp.ListResourcesResult{Resources: items, NextCursor: next}, nil
}

func (f *fake) ListResourceTemplates(ctx context.Context, p *mcp.PaginatedRequestParams) (*mcp.ListResourceTemplatesResult, error) {
	cursor := p.Cursor
	f.mu.Lock()
	ts := append([]mcp.ResourceTemplate(nil), f.templates...)
	f.mu.Unlock()
	items, next, err := page(f, ts, cursor)
	if err != nil {
		return nil, err
	}
	return &mcp.ListResourceTemplatesResult{ResourceTemplates: items, NextCursor: next}, nil
}

func (f *fake) record(p any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, p)
}

func (f *fake) last() any {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.got) == 0 {
		return nil
	}
	return f.got[len(f.got)-1]
}

func (f *fake) CallTool(ctx context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	f.record(p)
	if f.callTool != nil {
		return f.callTool(p)
	}
	return &mcp.CallToolResult{Content: []mcp.ContentBlock{{Value: &mcp.TextContent{Text: f.name + ":" + p.Name}}}}, nil
}

func (f *fake) ReadResource(ctx context.Context, p *mcp.ReadResourceRequestParams) (*mcp.ReadResourceResult, error) {
	f.record(p)
	if f.read != nil {
		return f.read(p)
	}
	return &mcp.ReadResourceResult{Contents: []mcp.ReadResourceResultContentsItem{{Value: &mcp.TextResourceContents{URI: p.URI, Text: "x"}}}}, nil
}

func (f *fake) GetPrompt(ctx context.Context, p *mcp.GetPromptRequestParams) (*mcp.GetPromptResult, error) {
	f.record(p)
	if f.getPrompt != nil {
		return f.getPrompt(p)
	}
	return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: mcp.ContentBlock{Value: &mcp.TextContent{Text: p.Name}}}}}, nil
}

func (f *fake) Complete(ctx context.Context, p *mcp.CompleteRequestParams) (*mcp.CompleteResult, error) {
	f.record(p)
	if f.complete != nil {
		return f.complete(p)
	}
	return &mcp.CompleteResult{Completion: mcp.CompleteResultCompletion{Values: []string{"v"}}}, nil
}

// Call is the upstream client's: the fake's handlers through the
// generated dispatch, as a real upstream answers them.
func (f *fake) Call(ctx context.Context, method string, params any) (any, error) {
	r, err := mcp.Dispatch(ctx, f, method, params)
	if !errors.Is(err, mcp.ErrNoHandler) {
		return r, err
	}
	f.record(params)
	if f.other != nil {
		return f.other(method, params)
	}
	return nil, rpcErr(jsonrpc.MethodNotFound, fmt.Sprintf("upstream %q speaks protocol revision 2025-06-18, which has no method %s", f.name, method))
}

func (f *fake) Changes() <-chan string { return f.changes }

func (f *fake) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

func (f *fake) set(fn func(f *fake)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// logBuf is a concurrency-safe log sink.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// gateway returns a gateway over ups (each with its options), ready, and
// closed when the test ends.
func gateway(t *testing.T, ups ...any) (*Gateway, *logBuf) {
	t.Helper()
	logs := &logBuf{}
	g := New(slog.New(slog.NewTextHandler(logs, nil)))
	g.RetryMin, g.RetryMax, g.LoadTimeout = 5*time.Millisecond, 20*time.Millisecond, 5*time.Second
	t.Cleanup(func() { g.Close() })
	for i := 0; i < len(ups); i++ {
		u := ups[i].(Upstream)
		var opt Options
		if i+1 < len(ups) {
			if o, ok := ups[i+1].(Options); ok {
				opt = o
				i++
			}
		}
		if err := g.Add(u, opt); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	return g, logs
}

func names[T any](items []T, name func(T) string) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, name(it))
	}
	return out
}

func toolNames(t *testing.T, g *Gateway) []string {
	t.Helper()
	tools, err := g.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return names(tools, func(t mcp.Tool) string { return t.Name })
}

// eventually waits for cond, failing the test after two seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func rpcErr(code int64, msg string) error { return &jsonrpc.Error{Code: code, Message: msg} }

func str(s string) *string { return &s }

var errBoom = errors.New("boom")

func text(r *mcp.CallToolResult) string {
	if r == nil || len(r.Content) == 0 {
		return ""
	}
	if t, ok := r.Content[0].Value.(*mcp.TextContent); ok {
		return t.Text
	}
	return fmt.Sprintf("%T", r.Content[0].Value)
}
