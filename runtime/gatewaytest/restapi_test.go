package gatewaytest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/legacy"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/runtime/config"
	"github.com/mcpx-dev/mcpx/runtime/host"
)

// serveAPI serves a config with the /v1 API (and its tools) as mcpx serve
// does; it returns the base URL (no /mcp).
func serveAPI(t *testing.T, doc string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mcpx.json")
	os.WriteFile(path, []byte(doc), 0o600)
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	_, log := logBuffer()
	ctx, cancel := context.WithCancel(context.Background())
	g, ups, err := host.GatewayWith(ctx, cfg, serverInfo, log, host.GatewayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := host.NewReloader(path, g, cfg, ups, serverInfo, log)
	c := host.Config{NS: g, Info: serverInfo, Log: log, Reloader: r, APITools: cfg.APITools,
		Tasks: host.TaskOptions(config.TaskSettings{After: 20 * time.Millisecond})}
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- host.HTTP(ctx, c, "127.0.0.1:0", func(u string) { urls <- u }) }()
	t.Cleanup(func() { cancel(); <-done; g.Close() })
	select {
	case u := <-urls:
		return strings.TrimSuffix(u, "/mcp")
	case err := <-done:
		t.Fatal(err)
	case <-time.After(20 * time.Second):
		t.Fatal("not serving")
	}
	return ""
}

const apiConfig = `{"mcpServers": {"fx": {"command": "%FIXTURE%"}}, "mcpx": {"apiTools": true, "commands": {"sh": {"tools": {
	"say": {"command": "printf", "args": ["%s", "{text}"], "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
	"nap": {"command": "sh", "args": ["-c", "sleep 0.5; printf rested"]}}}}}}`

// TestRESTAPIMatchesItsDocument: every operation of /v1, called over
// HTTP, is answered as /v1/openapi.json says (kin-openapi validates the
// request and the response against the served document).
func TestRESTAPIMatchesItsDocument(t *testing.T) {
	base := serveAPI(t, strings.ReplaceAll(apiConfig, "%FIXTURE%", fixtureBin))
	resp, err := http.Get(base + "/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the API's own document does not validate: %v", err)
	}
	doc.Servers = openapi3.Servers{{URL: base}}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	check := func(method, path, body string, status int) []byte {
		t.Helper()
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, _ := http.NewRequest(method, base+path, rd)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		route, params, err := router.FindRoute(req)
		if err != nil {
			t.Fatalf("%s %s is not in the document: %v", method, path, err)
		}
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route}
		if body != "" {
			req.Body = io.NopCloser(strings.NewReader(body))
		}
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			t.Fatalf("%s %s: the request breaks the document: %v", method, path, err)
		}
		if body != "" {
			req.Body = io.NopCloser(strings.NewReader(body))
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != status {
			t.Fatalf("%s %s: HTTP %d, want %d: %s", method, path, resp.StatusCode, status, got)
		}
		out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header}
		out.SetBodyBytes(got)
		if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
			t.Errorf("%s %s: the answer breaks the document: %v\n%s", method, path, err, got)
		}
		return got
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// The fixture is lazy: the first tools listing starts it.
	check("GET", "/v1/tools", "", 200)
	servers := check("GET", "/v1/servers", "", 200)
	var sv struct{ Servers []map[string]any }
	json.Unmarshal(servers, &sv)
	if len(sv.Servers) != 2 || sv.Servers[0]["namespace"] != "fx" || sv.Servers[0]["kind"] != "stdio" || sv.Servers[0]["state"] != "up" ||
		sv.Servers[0]["revision"] == "" || sv.Servers[1]["kind"] != "command" || sv.Servers[1]["tools"] != 2.0 {
		t.Errorf("servers %s", servers)
	}
	if got := check("POST", "/v1/tools/sh__say/call", `{"arguments":{"text":"hi"}}`, 200); !bytes.Contains(got, []byte(`"hi"`)) {
		t.Errorf("call: %s", got)
	}
	check("POST", "/v1/tools/nope/call", `{"arguments":{}}`, 404)
	check("POST", "/v1/servers/sh/restart", "", 200)
	check("POST", "/v1/servers/nope/restart", "", 404)
	check("GET", "/v1/tasks/nope", "", 404)

	// A task a 2026-07-28 client started (the nap outlasts the window) is
	// read through the API to its end.
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+meta+`,"name":"sh__nap","arguments":{}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "sh__nap")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var handle struct {
		Result struct{ TaskID, ResultType string }
	}
	json.NewDecoder(resp.Body).Decode(&handle)
	resp.Body.Close()
	if handle.Result.ResultType != "task" || handle.Result.TaskID == "" {
		t.Fatalf("the nap did not become a task: %+v", handle)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var task struct{ Status string }
		json.Unmarshal(check("GET", "/v1/tasks/"+handle.Result.TaskID, "", 200), &task)
		if task.Status == "completed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the task is %q", task.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Behind the endpoint's Origin check.
	req, _ = http.NewRequest("GET", base+"/v1/servers", nil)
	req.Header.Set("Origin", "http://evil.example")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 403 {
		t.Errorf("a foreign Origin: %v %v", resp.StatusCode, err)
	}
}

// TestRESTAPITools: with mcpx.apiTools the API's operations are tools,
// first in tools/list, made from the same document; calling one is the
// API request.
func TestRESTAPITools(t *testing.T) {
	base := serveAPI(t, strings.ReplaceAll(apiConfig, "%FIXTURE%", fixtureBin))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl := gosdk.NewClient(&gosdk.Implementation{Name: "api", Version: "1"}, nil)
	cs, err := cl.Connect(ctx, &gosdk.StreamableClientTransport{Endpoint: base + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools[:5] {
		names = append(names, tl.Name)
	}
	if strings.Join(names, " ") != "mcpx_listServers mcpx_restartServer mcpx_getTask mcpx_listTools mcpx_callTool" {
		t.Fatalf("first tools %v", names)
	}
	res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "mcpx_callTool", Arguments: map[string]any{"name": "sh__say", "body": map[string]any{"arguments": map[string]any{"text": "via the API"}}}})
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	if text := res.Content[0].(*gosdk.TextContent).Text; !strings.Contains(text, "via the API") {
		t.Errorf("mcpx_callTool: %s", text)
	}
	res, err = cs.CallTool(ctx, &gosdk.CallToolParams{Name: "mcpx_listServers"})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*gosdk.TextContent).Text, `"namespace":"sh"`) {
		t.Errorf("mcpx_listServers: %v %+v", err, res)
	}
}
