package gateway

import (
	"context"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// Cache is how an upstream's lists and reads are hinted for caching to
// 2026-07-28 clients (ttlMs, cacheScope) where the upstream's own answer
// gives no hints (a legacy upstream cannot): config "mcpx.cache".
//
// The hints of an answer are, field by field, the upstream's own where it
// gave them, else TTLMs and Scope, else the server's defaults (its TTLMs,
// public). Two rules make a hint more private, never less: a configured
// "private" holds whatever the upstream says, and an upstream reached with
// credentials that may be a user's (Credentialed) is never public unless
// Scope says "public" (the operator vouching that they are not).
type Cache struct {
	TTLMs *int64         // nil: the server's default
	Scope mcp.CacheScope // "": public, unless Credentialed
	// Credentialed: mcpx sends the upstream credentials (an Authorization
	// header): what it answers may be that user's.
	Credentialed bool
}

// The lists an upstream's own hints are kept for, per member.
const (
	hintTools = iota
	hintPrompts
	hintResources
	hintTemplates
	hintLists
)

// ownHint is what an upstream's answer said of its caching: across the
// pages of a list, the smallest TTL and the most private scope.
type ownHint struct {
	ttl    int64
	hasTTL bool
	scope  mcp.CacheScope // "": none said
}

// add merges one answer's hints. A 2026-07-28 answer must carry both
// fields; an older revision's has neither (zero after the upgrade), so a
// zero pair is "not given".
func (h *ownHint) add(ttl int64, scope mcp.CacheScope) {
	if scope != "" || ttl > 0 {
		if !h.hasTTL || ttl < h.ttl {
			h.ttl, h.hasTTL = max(ttl, 0), true
		}
	}
	if scope == mcp.CacheScopePrivate || h.scope == "" {
		h.scope = scope
	}
}

// cacheHint is the hint for an answer of m's that said own.
func (m *member) cacheHint(own ownHint) server.CacheHint {
	h := server.CacheHint{TTLMs: m.cache.TTLMs, Scope: m.cache.Scope}
	if own.hasTTL {
		h.TTLMs = &own.ttl
	}
	if own.scope != "" {
		h.Scope = own.scope
	}
	if m.cache.Scope == mcp.CacheScopePrivate || m.cache.Credentialed && m.cache.Scope == "" {
		h.Scope = mcp.CacheScopePrivate
	}
	return h
}

// reportListHints reports the hints of every part of a merged list: mcpx's
// own tools (the defaults) and each upstream that is up and has the list.
// The caller holds g.mu.
func (g *Gateway) reportListHints(ctx context.Context, list int) {
	if list == hintTools && len(g.fixedTools) > 0 {
		server.ReportCacheHint(ctx, server.CacheHint{})
	}
	for _, m := range g.members {
		if m.down || m.caps == nil {
			continue
		}
		switch {
		case list == hintTools && m.caps.Tools != nil,
			list == hintPrompts && m.caps.Prompts != nil,
			(list == hintResources || list == hintTemplates) && m.caps.Resources != nil:
			server.ReportCacheHint(ctx, m.cacheHint(m.hints[list]))
		}
	}
}

// reportReadHint reports the hint of a read of uri that answered r.
func (g *Gateway) reportReadHint(ctx context.Context, uri string, r *mcp.ReadResourceResult) {
	if r == nil {
		return
	}
	m, _, ok := g.resolve(uri)
	if !ok {
		return
	}
	var own ownHint
	own.add(r.TTLMs, r.CacheScope)
	server.ReportCacheHint(ctx, m.cacheHint(own))
}
