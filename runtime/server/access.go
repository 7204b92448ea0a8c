package server

import (
	"context"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// Access is what one request may see and use: the config's access rules
// applied to its principal (package auth's View). Lists leave out what it
// does not include, and using it is answered exactly as a name that does
// not exist, so nothing leaks its existence.
type Access interface {
	Tool(name string) bool
	Prompt(name string) bool
	Resource(uri string) bool // a resource URI or URI template
	// Key is the same for requests that see the same things: lists are
	// cached per key. "" means everything.
	Key() string
}

// AccessOf is the access of the request ctx belongs to; nil when the
// server has no Access func (everything is allowed).
func (s *Server) AccessOf(ctx context.Context) Access {
	if s.Access == nil {
		return nil
	}
	return s.Access(ctx)
}

// keep returns the items of list a allows, sharing list when all are.
func keep[T any](a Access, list []T, allowed func(Access, *T) bool) []T {
	if a == nil {
		return list
	}
	for i := range list {
		if !allowed(a, &list[i]) {
			out := append([]T(nil), list[:i]...)
			for j := i + 1; j < len(list); j++ {
				if allowed(a, &list[j]) {
					out = append(out, list[j])
				}
			}
			return out
		}
	}
	return list
}

func toolAllowed(a Access, t *mcp.Tool) bool                 { return a.Tool(t.Name) }
func promptAllowed(a Access, p *mcp.Prompt) bool             { return a.Prompt(p.Name) }
func resourceAllowed(a Access, r *mcp.Resource) bool         { return a.Resource(r.URI) }
func templateAllowed(a Access, r *mcp.ResourceTemplate) bool { return a.Resource(r.URITemplate) }

// completionAllowed reports whether a may complete for ref: the prompt or
// the resource template it names.
func completionAllowed(a Access, ref mcp.CompleteRequestParamsRefValue) bool {
	if a == nil {
		return true
	}
	switch r := ref.(type) {
	case *mcp.PromptReference:
		return a.Prompt(r.Name)
	case *mcp.ResourceTemplateReference:
		return a.Resource(r.URI)
	}
	return false
}
