package server

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// Server answers the methods a namespace backs, in hub types: it
// paginates lists and reports capabilities. Its zero value is not usable;
// set NS.
type Server struct {
	NS           Namespace
	Info         mcp.Implementation
	Instructions string
	// PageSize is how many items a list page holds; 0 means 100.
	PageSize int
	// TTLMs is the caching hint for 2026-07-28 list results and reads,
	// with cacheScope public, unless the namespace reports its own
	// ([ReportCacheHint]). 0 means immediately stale.
	TTLMs int64
	// Access, when set, is what each request may see and use (the
	// config's access rules for its principal); nil allows everything.
	Access func(ctx context.Context) Access
}

// Capabilities reports what the server offers: the namespace's capabilities.
func (s *Server) Capabilities() mcp.ServerCapabilities { return s.NS.Capabilities() }

func (s *Server) pageSize() int {
	if s.PageSize > 0 {
		return s.PageSize
	}
	return 100
}

// page cuts items at the opaque cursor. A cursor mcpx did not hand out is
// invalid params, as the pagination page says.
func page[T any](s *Server, items []T, cursor string) ([]T, string, error) {
	start := 0
	if cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(cursor)
		n, err2 := strconv.Atoi(string(b))
		if err != nil || err2 != nil || n < 0 || n > len(items) {
			return nil, "", InvalidParams("invalid cursor %q: pass a nextCursor from a previous page, or none", cursor)
		}
		start = n
	}
	end := min(start+s.pageSize(), len(items))
	next := ""
	if end < len(items) {
		next = base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(end)))
	}
	out := items[start:end:end] // capped: the namespace's list is shared, never appended to
	if out == nil {
		out = []T{}
	}
	return out, next, nil
}

func cursorOf(p *mcp.PaginatedRequestParams) string {
	if p == nil {
		return ""
	}
	return p.Cursor
}

// ListTools answers tools/list.
func (s *Server) ListTools(ctx context.Context, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
	ctx, hs := withCacheHints(ctx)
	all, err := s.NS.ListTools(ctx)
	if err != nil {
		return nil, err
	}
	all = keep(s.AccessOf(ctx), all, toolAllowed)
	items, next, err := page(s, all, cursorOf(p))
	if err != nil {
		return nil, err
	}
	ttl, scope, _ := s.hint(hs) // every page the same scope, as the caching page requires
	return &mcp.ListToolsResult{Tools: items, NextCursor: next, TTLMs: ttl, CacheScope: scope}, nil
}

// CallTool answers tools/call.
func (s *Server) CallTool(ctx context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	if a := s.AccessOf(ctx); a != nil && !a.Tool(p.Name) {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTool, p.Name)
	}
	return s.NS.CallTool(ctx, p)
}

// ListResources answers resources/list.
func (s *Server) ListResources(ctx context.Context, p *mcp.PaginatedRequestParams) (*mcp.ListResourcesResult, error) {
	ctx, hs := withCacheHints(ctx)
	all, err := s.NS.ListResources(ctx)
	if err != nil {
		return nil, err
	}
	all = keep(s.AccessOf(ctx), all, resourceAllowed)
	items, next, err := page(s, all, cursorOf(p))
	if err != nil {
		return nil, err
	}
	ttl, scope, _ := s.hint(hs) // every page the same scope, as the caching page requires
	return &mcp.ListResourcesResult{Resources: items, NextCursor: next, TTLMs: ttl, CacheScope: scope}, nil
}

// ListResourceTemplates answers resources/templates/list.
func (s *Server) ListResourceTemplates(ctx context.Context, p *mcp.PaginatedRequestParams) (*mcp.ListResourceTemplatesResult, error) {
	ctx, hs := withCacheHints(ctx)
	all, err := s.NS.ListResourceTemplates(ctx)
	if err != nil {
		return nil, err
	}
	all = keep(s.AccessOf(ctx), all, templateAllowed)
	items, next, err := page(s, all, cursorOf(p))
	if err != nil {
		return nil, err
	}
	ttl, scope, _ := s.hint(hs) // every page the same scope, as the caching page requires
	return &mcp.ListResourceTemplatesResult{ResourceTemplates: items, NextCursor: next, TTLMs: ttl, CacheScope: scope}, nil
}

// ReadResource answers resources/read. A namespace must never answer a
// resource that does not exist with empty contents (2026-07-28 MUST NOT);
// an empty answer becomes not found.
func (s *Server) ReadResource(ctx context.Context, p *mcp.ReadResourceRequestParams) (*mcp.ReadResourceResult, error) {
	if a := s.AccessOf(ctx); a != nil && !a.Resource(p.URI) {
		return nil, &ResourceNotFoundError{URI: p.URI}
	}
	ctx, hs := withCacheHints(ctx)
	r, err := s.NS.ReadResource(ctx, p)
	if err != nil {
		return nil, err
	}
	if r == nil || len(r.Contents) == 0 {
		return nil, &ResourceNotFoundError{URI: p.URI}
	}
	// The namespace's report, else the hints its result carries, else
	// the server's defaults.
	if ttl, scope, ok := s.hint(hs); ok || r.CacheScope == "" {
		r.TTLMs, r.CacheScope = ttl, scope
	}
	return r, nil
}

// ListPrompts answers prompts/list.
func (s *Server) ListPrompts(ctx context.Context, p *mcp.PaginatedRequestParams) (*mcp.ListPromptsResult, error) {
	ctx, hs := withCacheHints(ctx)
	all, err := s.NS.ListPrompts(ctx)
	if err != nil {
		return nil, err
	}
	all = keep(s.AccessOf(ctx), all, promptAllowed)
	items, next, err := page(s, all, cursorOf(p))
	if err != nil {
		return nil, err
	}
	ttl, scope, _ := s.hint(hs) // every page the same scope, as the caching page requires
	return &mcp.ListPromptsResult{Prompts: items, NextCursor: next, TTLMs: ttl, CacheScope: scope}, nil
}

// GetPrompt answers prompts/get.
func (s *Server) GetPrompt(ctx context.Context, p *mcp.GetPromptRequestParams) (*mcp.GetPromptResult, error) {
	if a := s.AccessOf(ctx); a != nil && !a.Prompt(p.Name) {
		return nil, fmt.Errorf("%w: %q", ErrUnknownPrompt, p.Name)
	}
	return s.NS.GetPrompt(ctx, p)
}

// Complete answers completion/complete; at most 100 values go out, as every
// revision's schema says.
func (s *Server) Complete(ctx context.Context, p *mcp.CompleteRequestParams) (*mcp.CompleteResult, error) {
	if a := s.AccessOf(ctx); a != nil && !completionAllowed(a, p.Ref.Value) {
		// As for a prompt or template that does not exist.
		return nil, InvalidParams("unknown completion reference")
	}
	r, err := s.NS.Complete(ctx, p)
	if err != nil {
		return nil, err
	}
	if n := len(r.Completion.Values); n > 100 {
		r.Completion.Values = r.Completion.Values[:100]
		r.Completion.HasMore = mcp.Ptr(true)
		if r.Completion.Total == nil {
			r.Completion.Total = mcp.Ptr(int64(n))
		}
	}
	if r.Completion.Values == nil {
		r.Completion.Values = []string{}
	}
	return r, nil
}

// Forwarder is implemented by a namespace that passes requests on (the
// gateway): Forward answers any client request the server and the
// namespace have no handler of their own for, by the method's route in the
// generated tables ([mcp.ClientMethods]). It returns [mcp.ErrNoHandler]
// for a method it cannot forward.
type Forwarder interface {
	Forward(ctx context.Context, method string, params any) (any, error)
}

// Handle answers a client request in hub types: the server's own method
// for it (lists are paginated there), else the namespace's handler for it
// (its mcp.<Method>Handler), else, for a [Forwarder], Forward. A method
// none of them answers is [mcp.ErrNoHandler]. params is a pointer to the
// method's hub params type, or nil.
func (s *Server) Handle(ctx context.Context, method string, params any) (any, error) {
	r, err := mcp.Dispatch(ctx, s, method, params)
	if !errors.Is(err, mcp.ErrNoHandler) {
		return r, err
	}
	if r, err = mcp.Dispatch(ctx, s.NS, method, params); !errors.Is(err, mcp.ErrNoHandler) {
		return r, err
	}
	if f, ok := s.NS.(Forwarder); ok {
		return f.Forward(ctx, method, params)
	}
	return nil, err
}
