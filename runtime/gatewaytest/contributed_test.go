package gatewaytest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/config"
	"github.com/mcpx-dev/mcpx/runtime/host"
)

// weatherDoc is an OpenAPI 3.1 document of a small service the test
// starts: a path parameter, a query parameter, a JSON body, a $ref and an
// error status.
const weatherDoc = `{
  "openapi": "3.1.0", "info": {"title": "Weather", "version": "1"},
  "paths": {
    "/cities/{city}": {"get": {"operationId": "forecast", "summary": "The forecast for a city",
      "parameters": [{"name": "city", "in": "path", "required": true, "schema": {"type": "string"}},
                     {"name": "days", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 7}}],
      "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Forecast"}}}},
                    "404": {"description": "unknown city"}}}},
    "/reports": {"post": {"operationId": "report", "requestBody": {"required": true,
      "content": {"application/json": {"schema": {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}}}}},
      "responses": {"201": {"description": "filed"}}}}
  },
  "components": {"schemas": {"Forecast": {"type": "object", "required": ["city", "days"],
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "sky": {"type": "string"}}}}}
}`

func weatherAPI(t *testing.T) string {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(weatherDoc)) })
	mux.HandleFunc("GET /cities/{city}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("city") != "Paris" {
			http.Error(w, "no such city: "+r.PathValue("city"), 404)
			return
		}
		days := r.URL.Query().Get("days")
		if days == "" {
			days = "1"
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"city":"Paris","days":` + days + `,"sky":"clear"}`))
	})
	mux.HandleFunc("POST /reports", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Text string }
		json.NewDecoder(r.Body).Decode(&in)
		w.WriteHeader(201)
		w.Write([]byte("filed: " + in.Text))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestContributedTools: OpenAPI operations and command tools through the
// gateway, to clients of an old revision and the new one, every message
// closed-world validated.
func TestContributedTools(t *testing.T) {
	api := weatherAPI(t)
	doc := `{"mcpServers": {}, "mcpx": {
		"openapi": {"weather": {"document": "` + api + `/openapi.json", "baseUrl": "` + api + `"}},
		"commands": {"sh": {"tools": {
			"say": {"description": "Prints its text.", "command": "printf", "args": ["%s", "{text}"],
			        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
			"fail": {"command": "sh", "args": ["-c", "echo nope >&2; exit 4"]},
			"hang": {"command": "sleep", "args": ["30"], "timeout": "200ms"}}}}}}`
	gw, _ := readyGateway(t, "contrib.json", doc, "", nil)
	for _, rev := range []string{"2025-03-26", "2026-07-28"} {
		t.Run(rev, func(t *testing.T) {
			url, hc := serveHTTP(t, gw, rev)
			s := connect(t, goSDK, rev, connection{url: url, http: hc})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			names, err := s.tools(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// Sorted by exposed name, as every contributed tool is.
			want := []string{"sh__fail", "sh__hang", "sh__say", "weather__forecast", "weather__report"}
			if !slices.Equal(names, want) {
				t.Fatalf("tools %v, want %v", names, want)
			}
			text, isErr, err := s.call(ctx, "weather__forecast", map[string]any{"city": "Paris", "days": 3})
			if err != nil || isErr || !strings.Contains(text, `"days":3`) {
				t.Errorf("forecast: %q %v %v", text, isErr, err)
			}
			text, isErr, err = s.call(ctx, "weather__forecast", map[string]any{"city": "Atlantis"})
			if err != nil || !isErr || !strings.Contains(text, "404") || !strings.Contains(text, "no such city") {
				t.Errorf("unknown city: %q %v %v", text, isErr, err)
			}
			text, isErr, err = s.call(ctx, "weather__report", map[string]any{"body": map[string]any{"text": "windy"}})
			if err != nil || isErr || text != "filed: windy" {
				t.Errorf("report: %q %v %v", text, isErr, err)
			}
			text, isErr, err = s.call(ctx, "sh__say", map[string]any{"text": "hi; rm -rf /"})
			if err != nil || isErr || text != "hi; rm -rf /" {
				t.Errorf("say: %q %v %v", text, isErr, err)
			}
			text, isErr, err = s.call(ctx, "sh__fail", map[string]any{})
			if err != nil || !isErr || !strings.Contains(text, "code 4") || !strings.Contains(text, "nope") {
				t.Errorf("fail: %q %v %v", text, isErr, err)
			}
			text, isErr, err = s.call(ctx, "sh__hang", map[string]any{})
			if err != nil || !isErr || !strings.Contains(text, "did not finish within 200ms") {
				t.Errorf("hang: %q %v %v", text, isErr, err)
			}
		})
	}
}

// TestContributedDocumentThatDoesNotParse: the gateway does not start,
// and says which document and why.
func TestContributedDocumentThatDoesNotParse(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"openapi": "3.1.0", "paths": `)) }))
	defer srv.Close()
	cfg := `{"mcpServers": {}, "mcpx": {"openapi": {"broken": {"document": "` + srv.URL + `/doc.json", "baseUrl": "http://x"}}}}`
	err := gatewayError(t, cfg)
	if err == nil || !strings.Contains(err.Error(), srv.URL+"/doc.json") {
		t.Fatalf("%v", err)
	}
}

// gatewayError is host.Gateway's error for the config doc, nil if it
// started (then it is closed).
func gatewayError(t *testing.T, doc string) error {
	t.Helper()
	cfg, err := config.Parse("f.json", []byte(doc), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	_, log := logBuffer()
	gw, err := host.Gateway(context.Background(), cfg, serverInfo, log)
	if err == nil {
		gw.Close()
	}
	return err
}

// TestLazyExposure: a lazy source's tools are out of tools/list and found,
// described and called through mcpx's discovery tools, for a client of
// every revision the Go SDK speaks; the eager one stays listed.
func TestLazyExposure(t *testing.T) {
	api := weatherAPI(t)
	doc := `{"mcpServers": {}, "mcpx": {
		"openapi": {"weather": {"document": "` + api + `/openapi.json", "baseUrl": "` + api + `", "expose": "lazy"}},
		"commands": {"sh": {"tools": {"say": {"description": "Prints its text.", "command": "printf", "args": ["%s", "{text}"],
			"inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}}}}}}`
	gw, _ := readyGateway(t, "lazy.json", doc, "", nil)
	for _, rev := range revisionsOf(clientPeers[goSDK]) {
		t.Run(rev, func(t *testing.T) {
			url, hc := serveHTTP(t, gw, rev)
			s := connect(t, goSDK, rev, connection{url: url, http: hc})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			names, err := s.tools(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// The fixed tools first in their written order, then the rest.
			if want := []string{"mcpx_search", "mcpx_describe", "mcpx_call", "sh__say"}; !slices.Equal(names, want) {
				t.Fatalf("tools %v, want %v", names, want)
			}
			text, isErr, err := s.call(ctx, "mcpx_search", map[string]any{"query": "forecast city"})
			if err != nil || isErr || !strings.HasPrefix(text, "weather__forecast: The forecast for a city") {
				t.Errorf("search: %q %v %v", text, isErr, err)
			}
			text, isErr, err = s.call(ctx, "mcpx_describe", map[string]any{"name": "weather__forecast"})
			if err != nil || isErr || !strings.Contains(text, `"inputSchema"`) || !strings.Contains(text, `"days"`) {
				t.Errorf("describe: %q %v %v", text, isErr, err)
			}
			text, isErr, err = s.call(ctx, "mcpx_call", map[string]any{"name": "weather__forecast", "arguments": map[string]any{"city": "Paris", "days": 2}})
			if err != nil || isErr || !strings.Contains(text, `"days":2`) {
				t.Errorf("call: %q %v %v", text, isErr, err)
			}
			// The same checks as a direct call: arguments the schema refuses.
			text, isErr, err = s.call(ctx, "mcpx_call", map[string]any{"name": "weather__forecast", "arguments": map[string]any{"city": "Paris", "days": 99}})
			if err != nil || !isErr || !strings.Contains(text, "invalid arguments") {
				t.Errorf("call with bad arguments: %q %v %v", text, isErr, err)
			}
			if _, _, err := s.call(ctx, "mcpx_call", map[string]any{"name": "nope__nothing"}); err == nil {
				t.Error("mcpx_call of an unknown tool did not fail as a direct call does")
			}
		})
	}
}

// TestLazyExposureShrinksToolsList measures the tools/list answer for the
// example config's two servers (server-everything and the conformance
// fixture), all exposed against both lazy, and reports its size in bytes
// and in tokens (estimated at 4 bytes a token, the usual rule of thumb for
// JSON and English with cl100k-style tokenizers).
func TestLazyExposureShrinksToolsList(t *testing.T) {
	node, index := everything(t)
	size := func(expose string) int {
		doc := `{"mcpServers": {
			"everything": {"command": "` + node + `", "args": ["` + index + `", "stdio"], "mcpx": {"prefix": "ev_", "expose": "` + expose + `"}},
			"fixture": {"command": "` + fixtureBin + `", "mcpx": {"expose": "` + expose + `"}}}}`
		gw, _ := readyGateway(t, "example-"+expose+".json", doc, "", nil)
		url, hc := serveHTTP(t, gw, "2025-11-25")
		s := connect(t, goSDK, "2025-11-25", connection{url: url, http: hc}).(goSDKSession)
		res, err := s.cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(res)
		t.Logf("expose %s: %d tools, %d bytes, ~%d tokens", expose, len(res.Tools), len(raw), len(raw)/4)
		return len(raw)
	}
	all, lazy := size("all"), size("lazy")
	t.Logf("lazy exposure: %.1f%% of the tools/list answer", 100*float64(lazy)/float64(all))
	if lazy*4 > all {
		t.Errorf("lazy exposure's tools/list is %d bytes of %d: not much smaller", lazy, all)
	}
}

// TestContributedOrderAcrossRestarts: tools/list is the fixed tools in
// their written order, then every other tool sorted by name, whatever
// order the sources were written in: two gateways (two starts) from
// files naming them in different orders list the same.
func TestContributedOrderAcrossRestarts(t *testing.T) {
	api := weatherAPI(t)
	say := func(ns string) string {
		return `"` + ns + `": {"tools": {"zeta": {"command": "printf", "args": ["z"]}, "alpha": {"command": "printf", "args": ["a"]}}}`
	}
	first := `{"mcpServers": {}, "mcpx": {"discovery": true, "openapi": {"weather": {"document": "` + api + `/openapi.json", "baseUrl": "` + api + `"}},
		"commands": {` + say("b") + `, ` + say("a") + `}}}`
	second := `{"mcpx": {"commands": {` + say("a") + `, ` + say("b") + `}, "openapi": {"weather": {"baseUrl": "` + api + `", "document": "` + api + `/openapi.json"}}, "discovery": true}, "mcpServers": {}}`
	list := func(doc string) []string {
		gw, _ := readyGateway(t, "order.json", doc, "", nil)
		tools, err := gw.ListTools(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range tools {
			names = append(names, tl.Name)
		}
		gw.Close()
		return names
	}
	a, b := list(first), list(second)
	want := []string{"mcpx_search", "mcpx_describe", "mcpx_call", "a__alpha", "a__zeta", "b__alpha", "b__zeta", "weather__forecast", "weather__report"}
	if !slices.Equal(a, want) || !slices.Equal(b, want) {
		t.Errorf("first start %v\nsecond start %v\nwant %v", a, b, want)
	}
}
