package gatewaytest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/testkit/revs"
)

// hintingUpstream is a 2026-07-28 upstream whose tools/list says ttlMs
// 7000 public and whose resources/read of test://hinted says 3000
// private.
func hintingUpstream(t *testing.T) string {
	return rawModernUpstream(t, func(_ *http.Request, m *rawCall, reply rawReply) {
		switch {
		case m.Method == "server/discover":
			reply.result(discoverResult("hinting", `{"tools":{},"resources":{}}`))
		case m.Method == "tools/list":
			reply.result(`{"resultType":"complete","ttlMs":7000,"cacheScope":"public","tools":[{"name":"t","inputSchema":{"type":"object"}}]}`)
		case m.Method == "resources/list":
			reply.result(`{"resultType":"complete","ttlMs":7000,"cacheScope":"public","resources":[{"uri":"test://hinted","name":"hinted"}]}`)
		case m.Method == "resources/templates/list":
			reply.result(`{"resultType":"complete","ttlMs":7000,"cacheScope":"public","resourceTemplates":[]}`)
		case m.Method == "resources/read" && m.Params.URI == "test://hinted":
			reply.result(`{"resultType":"complete","ttlMs":3000,"cacheScope":"private","contents":[{"uri":"test://hinted","text":"hinted"}]}`)
		default:
			reply.error(-32601, "no "+m.Method+" here")
		}
	})
}

// hints is what a 2026-07-28 client was told of an answer's caching.
type hints struct {
	TTLMs      *int64  `json:"ttlMs"`
	CacheScope *string `json:"cacheScope"`
}

func hintsOf(t *testing.T, raw string) hints {
	t.Helper()
	var a struct{ Result *hints }
	if err := json.Unmarshal([]byte(raw), &a); err != nil || a.Result == nil || a.Result.TTLMs == nil || a.Result.CacheScope == nil {
		t.Fatalf("no ttlMs and cacheScope in %.400s", raw)
	}
	return *a.Result
}

func wantHints(t *testing.T, what, raw string, ttl int64, scope string) {
	t.Helper()
	if h := hintsOf(t, raw); *h.TTLMs != ttl || *h.CacheScope != scope {
		t.Errorf("%s: ttlMs %d cacheScope %q, want %d %q (%.300s)", what, *h.TTLMs, *h.CacheScope, ttl, scope, raw)
	}
}

// TestCacheHintsBothEras: through the gateway, a 2026-07-28 client's
// lists and reads carry the hints of the upstreams behind them: a
// 2026-07-28 upstream's own, a legacy upstream's (which cannot give any)
// from its "cache" setting, the merged list the smallest TTL and the most
// private scope; an upstream sent an Authorization header is private
// whatever it says, unless its setting says public.
func TestCacheHintsBothEras(t *testing.T) {
	var legacyRev string
	for _, r := range revisionsOf(goSDKUpstreamPeer) {
		if revs.IsLegacy(r) {
			legacyRev = r // the newest legacy one, last
		}
	}
	modernURL := hintingUpstream(t)
	legacy := fmt.Sprintf(`{"command": %q, "env": {%q: %q, "GORACE": "atexit_sleep_ms=0"}, "mcpx": {"timeout": "30s", "cache": {"ttlMs": 20000}}}`,
		os.Args[0], envUpstream, "gosdk:"+legacyRev)
	read := func(c *modernClient, uri string) string {
		return c.sendParams(mcp.MethodResourcesRead, uri, fmt.Sprintf(`{%s,"uri":%q}`, modernMeta, uri)).raw
	}
	list := func(c *modernClient, method string) string {
		return c.sendParams(method, "", "{"+modernMeta+"}").raw
	}

	t.Run("a modern upstream's own hints and a legacy one's setting, merged", func(t *testing.T) {
		gw, _ := readyGateway(t, "hints.json", `{"mcpServers": {"modern": {"url": "`+modernURL+`"}, "legacy": `+legacy+`}}`, "", nil)
		c := newModernClient(t, gw, "http")
		wantHints(t, "tools/list", list(c, mcp.MethodToolsList), 7000, "public")
		wantHints(t, "resources/list", list(c, mcp.MethodResourcesList), 7000, "public")
		wantHints(t, "resources/read from the modern upstream", read(c, gateway.ExposedURI("modern", "test://hinted")), 3000, "private")
		wantHints(t, "resources/read from the legacy upstream", read(c, gateway.ExposedURI("legacy", infoURI)), 20000, "public")
	})
	t.Run("only the legacy upstream: its setting", func(t *testing.T) {
		gw, _ := readyGateway(t, "hints.json", `{"mcpServers": {"legacy": `+legacy+`}}`, "", nil)
		c := newModernClient(t, gw, "http")
		wantHints(t, "tools/list", list(c, mcp.MethodToolsList), 20000, "public")
	})
	t.Run("a legacy upstream with no setting: the defaults", func(t *testing.T) {
		bare := strings.Replace(legacy, `, "cache": {"ttlMs": 20000}`, "", 1)
		gw, _ := readyGateway(t, "hints.json", `{"mcpServers": {"legacy": `+bare+`}}`, "", nil)
		c := newModernClient(t, gw, "http")
		wantHints(t, "tools/list", list(c, mcp.MethodToolsList), 60_000, "public")
	})
	t.Run("an Authorization header makes the upstream private", func(t *testing.T) {
		gw, _ := readyGateway(t, "hints.json", `{"mcpServers": {"modern": {"url": "`+modernURL+`", "headers": {"authorization": "Bearer x"}}, "legacy": `+legacy+`}}`, "", nil)
		c := newModernClient(t, gw, "http")
		wantHints(t, "tools/list", list(c, mcp.MethodToolsList), 7000, "private")
		wantHints(t, "resources/read from the legacy upstream", read(c, gateway.ExposedURI("legacy", infoURI)), 20000, "public")
	})
	t.Run("unless its setting says public", func(t *testing.T) {
		gw, _ := readyGateway(t, "hints.json", `{"mcpServers": {"modern": {"url": "`+modernURL+`", "headers": {"Authorization": "Bearer x"}, "mcpx": {"cache": {"scope": "public"}}}}}`, "", nil)
		c := newModernClient(t, gw, "http")
		wantHints(t, "tools/list", list(c, mcp.MethodToolsList), 7000, "public")
	})
}
