package gateway

import (
	"context"
	"fmt"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// hinted is a fake whose list and read answers carry caching hints, as a
// 2026-07-28 upstream's must; a bare fake's carry none, as a legacy
// upstream's (upgraded to the hub) do.
type hinted struct {
	*fake
	ttl   int64
	scope mcp.CacheScope
}

func (h *hinted) Call(ctx context.Context, method string, params any) (any, error) {
	r, err := h.fake.Call(ctx, method, params)
	if env, ok := r.(mcp.Enveloped); ok && err == nil {
		x := env.Envelope()
		if x.TTLMs != nil && x.CacheScope != nil {
			*x.TTLMs, *x.CacheScope = h.ttl, h.scope
		}
	}
	return r, err
}

func ttl(n int64) *int64 { return &n }

// TestCacheHints: the ttlMs and cacheScope of a merged list and of a read
// are the upstreams' own where they gave them, else the server's cache
// setting, else the defaults (60 s, public); a merged list takes the
// smallest TTL and the most private scope of its parts (mcpx's own tools
// are a part at the defaults); a credentialed upstream is never public
// unless configured so; a configured private holds over an upstream's
// public.
func TestCacheHints(t *testing.T) {
	legacy := func(name string) *fake {
		f := newFake(name, "t")
		f.caps.Resources = &mcp.ServerCapabilitiesResources{}
		return f
	}
	modern := func(name string, ttl int64, scope mcp.CacheScope) *hinted {
		return &hinted{fake: legacy(name), ttl: ttl, scope: scope}
	}
	cases := []struct {
		about     string
		fixed     bool
		ups       []any // Upstream, optionally followed by its Options
		wantTTL   int64
		wantScope mcp.CacheScope
		// the read of mcpx://<readNS>/x
		readNS       string
		readTTL      int64
		readScope    mcp.CacheScope
		readUnhinted bool // the read falls to the server's defaults
	}{
		{about: "a legacy upstream, nothing configured: the defaults",
			ups: []any{legacy("a")}, wantTTL: 60_000, wantScope: mcp.CacheScopePublic,
			readNS: "a", readTTL: 60_000, readScope: mcp.CacheScopePublic},
		{about: "a legacy upstream with a cache setting: the setting",
			ups: []any{legacy("a"), Options{Cache: Cache{TTLMs: ttl(1500)}}}, wantTTL: 1500, wantScope: mcp.CacheScopePublic,
			readNS: "a", readTTL: 1500, readScope: mcp.CacheScopePublic},
		{about: "a modern upstream's own hints, over the setting",
			ups: []any{modern("m", 5000, mcp.CacheScopePrivate), Options{Cache: Cache{TTLMs: ttl(90_000), Scope: mcp.CacheScopePublic}}}, wantTTL: 5000, wantScope: mcp.CacheScopePrivate,
			readNS: "m", readTTL: 5000, readScope: mcp.CacheScopePrivate},
		{about: "both eras merged: the smallest TTL, the most private scope",
			ups:     []any{legacy("a"), Options{Cache: Cache{TTLMs: ttl(30_000)}}, modern("m", 120_000, mcp.CacheScopePrivate)},
			wantTTL: 30_000, wantScope: mcp.CacheScopePrivate,
			readNS: "a", readTTL: 30_000, readScope: mcp.CacheScopePublic},
		{about: "a modern upstream's longer TTL merged with one at the default",
			ups: []any{legacy("a"), modern("m", 120_000, mcp.CacheScopePublic)}, wantTTL: 60_000, wantScope: mcp.CacheScopePublic,
			readNS: "m", readTTL: 120_000, readScope: mcp.CacheScopePublic},
		{about: "mcpx's own tools are a part at the defaults", fixed: true,
			ups: []any{modern("m", 120_000, mcp.CacheScopePublic)}, wantTTL: 60_000, wantScope: mcp.CacheScopePublic,
			readNS: "m", readTTL: 120_000, readScope: mcp.CacheScopePublic},
		{about: "a modern upstream that says 0 is immediately stale",
			ups: []any{modern("m", 0, mcp.CacheScopePublic)}, wantTTL: 0, wantScope: mcp.CacheScopePublic,
			readNS: "m", readTTL: 0, readScope: mcp.CacheScopePublic},
		{about: "a credentialed legacy upstream is private",
			ups: []any{legacy("a"), Options{Cache: Cache{Credentialed: true}}}, wantTTL: 60_000, wantScope: mcp.CacheScopePrivate,
			readNS: "a", readTTL: 60_000, readScope: mcp.CacheScopePrivate},
		{about: "a credentialed modern upstream that says public is private",
			ups: []any{modern("m", 5000, mcp.CacheScopePublic), Options{Cache: Cache{Credentialed: true}}}, wantTTL: 5000, wantScope: mcp.CacheScopePrivate,
			readNS: "m", readTTL: 5000, readScope: mcp.CacheScopePrivate},
		{about: "a credentialed upstream configured public is public",
			ups: []any{legacy("a"), Options{Cache: Cache{Credentialed: true, Scope: mcp.CacheScopePublic}}}, wantTTL: 60_000, wantScope: mcp.CacheScopePublic,
			readNS: "a", readTTL: 60_000, readScope: mcp.CacheScopePublic},
		{about: "a configured private holds over the upstream's public",
			ups: []any{modern("m", 5000, mcp.CacheScopePublic), Options{Cache: Cache{Scope: mcp.CacheScopePrivate}}}, wantTTL: 5000, wantScope: mcp.CacheScopePrivate,
			readNS: "m", readTTL: 5000, readScope: mcp.CacheScopePrivate},
		{about: "an upstream that is down is no part of the list",
			ups:     []any{legacy("a"), downFake("d")},
			wantTTL: 60_000, wantScope: mcp.CacheScopePublic,
			readNS: "a", readTTL: 60_000, readScope: mcp.CacheScopePublic},
	}
	for _, c := range cases {
		t.Run(c.about, func(t *testing.T) {
			g := New(nil)
			defer g.Close()
			if c.fixed {
				if err := g.AddFixed(fixedTools("own")); err != nil {
					t.Fatal(err)
				}
			}
			addAll(t, g, c.ups...)
			s := &server.Server{NS: g, TTLMs: 60_000}
			ctx := context.Background()
			tools, err := s.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tools.TTLMs != c.wantTTL || tools.CacheScope != c.wantScope {
				t.Errorf("tools/list: ttlMs %d cacheScope %q, want %d %q", tools.TTLMs, tools.CacheScope, c.wantTTL, c.wantScope)
			}
			if !c.fixed {
				// Resources come from the same upstreams: the same merge.
				res, err := s.ListResources(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				if res.TTLMs != c.wantTTL || res.CacheScope != c.wantScope {
					t.Errorf("resources/list: ttlMs %d cacheScope %q, want %d %q", res.TTLMs, res.CacheScope, c.wantTTL, c.wantScope)
				}
			}
			r, err := s.ReadResource(ctx, &mcp.ReadResourceRequestParams{URI: fmt.Sprintf("mcpx://%s/x", c.readNS)})
			if err != nil {
				t.Fatal(err)
			}
			if r.TTLMs != c.readTTL || r.CacheScope != c.readScope {
				t.Errorf("resources/read: ttlMs %d cacheScope %q, want %d %q", r.TTLMs, r.CacheScope, c.readTTL, c.readScope)
			}
		})
	}
}

// downFake is an upstream whose every load fails: down from the start.
func downFake(name string) *hinted {
	f := newFake(name, "t")
	f.capsErr = errFakeDown
	return &hinted{fake: f, ttl: 1, scope: mcp.CacheScopePrivate}
}

// TestCacheHintsPages: a list's hint is the smallest TTL and the most
// private scope over all its pages.
func TestCacheHintsPages(t *testing.T) {
	f := newFake("p", "a", "b", "c")
	f.pageSize = 1
	pages := &hintedPages{fake: f, hints: []struct {
		ttl   int64
		scope mcp.CacheScope
	}{{9000, mcp.CacheScopePublic}, {4000, mcp.CacheScopePublic}, {7000, mcp.CacheScopePrivate}}}
	g := New(nil)
	defer g.Close()
	addAll(t, g, pages)
	s := &server.Server{NS: g, TTLMs: 60_000}
	tools, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 3 || tools.TTLMs != 4000 || tools.CacheScope != mcp.CacheScopePrivate {
		t.Errorf("tools/list: %d tools, ttlMs %d cacheScope %q; want 3, 4000, private", len(tools.Tools), tools.TTLMs, tools.CacheScope)
	}
}

// hintedPages gives each tools/list page its own hints, in order.
type hintedPages struct {
	*fake
	n     int
	hints []struct {
		ttl   int64
		scope mcp.CacheScope
	}
}

func (p *hintedPages) Call(ctx context.Context, method string, params any) (any, error) {
	r, err := p.fake.Call(ctx, method, params)
	if lt, ok := r.(*mcp.ListToolsResult); ok && err == nil {
		h := p.hints[p.n%len(p.hints)]
		p.n++
		lt.TTLMs, lt.CacheScope = h.ttl, h.scope
	}
	return r, err
}
