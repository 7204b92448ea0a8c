package server

import (
	"context"
	"sync"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// CacheHint is what a namespace says of how one part of an answer may be
// cached: the 2026-07-28 ttlMs and cacheScope of a list or a read. Its
// zero value is "the server's defaults" (Server.TTLMs, public).
type CacheHint struct {
	// TTLMs is how long the part stays fresh, in milliseconds; nil is the
	// server's TTLMs.
	TTLMs *int64
	// Scope is who may share it; "" is the server's default, public.
	Scope mcp.CacheScope
}

// cacheHints gathers the hints reported for one answer: an answer made
// of several parts (a gateway's merged list) is as fresh as its least
// fresh part and as private as its most private one.
type cacheHints struct {
	mu          sync.Mutex
	reported    bool
	ttl         int64 // the smallest TTLMs given, when hasTTL
	hasTTL      bool
	withDefault bool // some part takes the server's TTLMs
	private     bool
}

type cacheHintsKey struct{}

// withCacheHints is ctx collecting the hints its namespace reports.
func withCacheHints(ctx context.Context) (context.Context, *cacheHints) {
	h := &cacheHints{}
	return context.WithValue(ctx, cacheHintsKey{}, h), h
}

// ReportCacheHint adds h to the caching hints of the list or read the
// namespace is answering under ctx; each part of a merged answer reports
// its own. A namespace that reports none gets the server's defaults (or,
// for a read, the hints its result carries). Outside a list or read it
// does nothing.
func ReportCacheHint(ctx context.Context, h CacheHint) {
	hs, ok := ctx.Value(cacheHintsKey{}).(*cacheHints)
	if !ok {
		return
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.reported = true
	switch {
	case h.TTLMs == nil:
		hs.withDefault = true
	case !hs.hasTTL || *h.TTLMs < hs.ttl:
		hs.ttl, hs.hasTTL = max(*h.TTLMs, 0), true
	}
	if h.Scope == mcp.CacheScopePrivate {
		hs.private = true
	}
}

// hint is the answer's ttlMs and cacheScope: what was reported, merged,
// with the server's defaults for what was not; ok is false when nothing
// was reported.
func (s *Server) hint(hs *cacheHints) (ttl int64, scope mcp.CacheScope, ok bool) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if !hs.reported {
		return s.TTLMs, mcp.CacheScopePublic, false
	}
	switch {
	case !hs.hasTTL:
		ttl = s.TTLMs
	case hs.withDefault:
		ttl = min(hs.ttl, s.TTLMs)
	default:
		ttl = hs.ttl
	}
	scope = mcp.CacheScopePublic
	if hs.private {
		scope = mcp.CacheScopePrivate
	}
	return ttl, scope, true
}
