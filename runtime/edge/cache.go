package edge

import (
	"context"
	"sync"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// listCache keeps the encoded answers to list requests, per revision and
// cursor, for a namespace that says when its lists change
// ([server.Versioned]). A list answer is the same bytes for every client of
// a revision until then (2026-07-28 even requires that it not vary per
// connection), so encoding it again is wasted work: for 50 tools it is most
// of a tools/list.
type listCache struct {
	mu      sync.Mutex
	entries map[string]listEntry
}

type listEntry struct {
	version uint64
	raw     []byte
}

// maxListEntries bounds the cache: revisions x list methods x cursors.
const maxListEntries = 1024

var listMethods = map[string]bool{
	mcp.MethodToolsList: true, mcp.MethodResourcesList: true, mcp.MethodResourcesTemplatesList: true, mcp.MethodPromptsList: true,
}

// key returns the cache key of a request, and whether it may be cached.
// Requests that see different things (their access, read only for a list
// request) are cached apart.
func (c *listCache) key(ctx context.Context, srv *server.Server, rev mcp.Revision, method string, params any) (string, uint64, bool) {
	v, ok := srv.NS.(server.Versioned)
	if !ok || !listMethods[method] {
		return "", 0, false
	}
	access := srv.AccessOf(ctx)
	cursor := ""
	if p, ok := params.(*mcp.PaginatedRequestParams); ok && p != nil {
		cursor = p.Cursor
	}
	view := ""
	if access != nil {
		view = access.Key()
	}
	return string(rev) + "\x00" + method + "\x00" + cursor + "\x00" + view, v.Version(), true
}

func (c *listCache) get(key string, version uint64) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	return e.raw, ok && e.version == version
}

func (c *listCache) put(key string, version uint64, raw []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxListEntries {
		c.entries = map[string]listEntry{} // crude, but bounded; lists are few
	}
	c.entries[key] = listEntry{version, raw}
}

// paramCache holds the Mcp-Param headers of every tool, read from one
// version of a [server.Versioned] namespace's tool list, so that a
// tools/call does not list the tools again to find them.
type paramCache struct {
	mu      sync.Mutex
	ok      bool
	version uint64
	tools   map[string][]ParamHeader
}

func (c *paramCache) get(version uint64) (map[string][]ParamHeader, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tools, c.ok && c.version == version
}

func (c *paramCache) put(version uint64, tools map[string][]ParamHeader) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ok, c.version, c.tools = true, version, tools
}
