package streamhttp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
	"github.com/mcpx-dev/mcpx/testkit/revs"
)

// fakeNS: tools that report progress, panic, wait for cancellation or take
// a while, and one resource.
type fakeNS struct{ server.Namespace }

func (fakeNS) Capabilities() mcp.ServerCapabilities {
	return mcp.ServerCapabilities{Tools: &mcp.ServerCapabilitiesTools{}, Resources: &mcp.ServerCapabilitiesResources{}}
}

var object = json.RawMessage(`{"type":"object"}`)

func (fakeNS) ListTools(context.Context) ([]mcp.Tool, error) {
	return []mcp.Tool{
		{Name: "progress", Title: "Progress", InputSchema: object},
		{Name: "boom", InputSchema: object},
		{Name: "wait", InputSchema: object},
		{Name: "slow", InputSchema: object},
		{Name: "grüße", InputSchema: object},
		{Name: "late", InputSchema: object},
		{Name: "query", InputSchema: json.RawMessage(`{"type":"object","properties":{
			"region":{"type":"string","x-mcp-header":"Region"},
			"limit":{"type":"integer","x-mcp-header":"Limit"},
			"opts":{"type":"object","properties":{"dry":{"type":"boolean","x-mcp-header":"Dry"}}},
			"q":{"type":"string"}}}`)},
	}, nil
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.ContentBlock{{Value: &mcp.TextContent{Text: s}}}}
}

func (fakeNS) CallTool(ctx context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	switch p.Name {
	case "progress":
		server.Progress(ctx, 1, 2, "half")
		server.Progress(ctx, 2, 2, "all")
		return text("done"), nil
	case "boom":
		panic("boom")
	case "wait":
		<-ctx.Done()
		return nil, ctx.Err()
	case "slow":
		select {
		case <-time.After(300 * time.Millisecond):
			return text("slow done"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case "grüße":
		return text("hallo"), nil
	case "late": // reports progress from a goroutine that outlives the call
		go func() {
			for i := range 20 {
				server.Progress(ctx, float64(i+1), 0, "")
				time.Sleep(100 * time.Microsecond)
			}
		}()
		return text("early"), nil
	}
	return nil, server.ErrUnknownTool
}

func (fakeNS) ListResources(context.Context) ([]mcp.Resource, error) {
	return []mcp.Resource{{URI: "test://a b", Name: "a"}}, nil
}
func (fakeNS) ListResourceTemplates(context.Context) ([]mcp.ResourceTemplate, error) {
	return nil, nil
}
func (fakeNS) ReadResource(_ context.Context, p *mcp.ReadResourceRequestParams) (*mcp.ReadResourceResult, error) {
	if p.URI != "test://a b" {
		return nil, &server.ResourceNotFoundError{URI: p.URI}
	}
	return &mcp.ReadResourceResult{Contents: []mcp.ReadResourceResultContentsItem{{Value: &mcp.TextResourceContents{URI: p.URI, Text: "hello"}}}}, nil
}

func newEdge() *edge.Edge {
	return &edge.Edge{Server: &server.Server{NS: fakeNS{}, Info: mcp.Implementation{Name: "mcpx-test", Version: "0.0.1"}, TTLMs: 1000}}
}

// start serves a Handler on a loopback httptest server.
func start(t *testing.T, opt streamhttp.Options) (*httptest.Server, *streamhttp.Handler) {
	t.Helper()
	h := streamhttp.New(newEdge(), opt)
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.Close() })
	return srv, h
}

// hdr is a request's headers; Content-Type and Accept are added unless
// set (an empty value removes them).
type hdr map[string]string

func do(t *testing.T, ctx context.Context, method, url string, h hdr, body string) *http.Response {
	t.Helper()
	if ctx == nil {
		ctx = context.Background()
	}
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	for k, v := range h {
		if k == "Host" {
			req.Host = v
			continue
		}
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func post(t *testing.T, srv *httptest.Server, h hdr, body string) *http.Response {
	t.Helper()
	return do(t, nil, http.MethodPost, srv.URL, h, body)
}

// reply is a JSON-RPC response as a test reads it.
type reply struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result map[string]any  `json:"result"`
	Error  *struct {
		Code    int64          `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	} `json:"error"`
}

// decode reads a JSON body after checking the status and content type.
func decode(t *testing.T, resp *http.Response, status int) reply {
	t.Helper()
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d; body %s", resp.StatusCode, status, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q, want application/json; body %s", ct, b)
	}
	var r reply
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("body is not one JSON-RPC message: %s", b)
	}
	return r
}

// wantError checks an error response's status, code and id.
func wantError(t *testing.T, resp *http.Response, status int, code int64, id string) reply {
	t.Helper()
	r := decode(t, resp, status)
	if r.Error == nil || r.Error.Code != code {
		t.Fatalf("want error %d, got %+v", code, r)
	}
	if string(r.ID) != id {
		t.Errorf("error id %s, want %s", r.ID, id)
	}
	if r.Error.Message == "" || strings.Contains(strings.TrimSuffix(r.Error.Message, "."), ". ") {
		t.Errorf("error message should be one sentence: %q", r.Error.Message)
	}
	return r
}

// sseEvent is one event or comment read from an SSE stream.
type sseEvent struct {
	comment bool
	event   string
	data    string
}

// readSSE reads events from body until it ends; the channel is then closed.
func readSSE(body io.ReadCloser) <-chan sseEvent {
	ch := make(chan sseEvent, 64)
	go func() {
		defer close(ch)
		defer body.Close()
		sc := bufio.NewScanner(body)
		sc.Buffer(nil, 1<<20)
		var ev sseEvent
		seen := false
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if seen {
					ch <- ev
				}
				ev, seen = sseEvent{}, false
			case strings.HasPrefix(line, ":"):
				ev.comment, seen = true, true
			case strings.HasPrefix(line, "event: "):
				ev.event, seen = strings.TrimPrefix(line, "event: "), true
			case strings.HasPrefix(line, "data: "):
				ev.data, seen = ev.data+strings.TrimPrefix(line, "data: "), true
			}
		}
	}()
	return ch
}

// next returns the next event that is not a comment (comments counted in
// *comments if not nil); ok is false when the stream ended.
func next(t *testing.T, ch <-chan sseEvent, comments *int) (reply, bool) {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return reply{}, false
			}
			if ev.comment {
				if comments != nil {
					*comments++
				}
				continue
			}
			if ev.event != "message" {
				t.Fatalf("event type %q, want message", ev.event)
			}
			var r reply
			if err := json.Unmarshal([]byte(ev.data), &r); err != nil {
				t.Fatalf("event data is not JSON-RPC: %s", ev.data)
			}
			return r, true
		case <-timeout:
			t.Fatal("no SSE event within 5s")
		}
	}
}

// waitEnd waits for the stream to end, skipping comments.
func waitEnd(t *testing.T, ch <-chan sseEvent) {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return
			}
			if !ev.comment {
				t.Fatalf("unexpected event after the end: %+v", ev)
			}
		case <-timeout:
			t.Fatal("the stream did not end within 5s")
		}
	}
}

// eventually waits up to 5s for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not within 5s", what)
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// modern returns the headers of a 2026-07-28 request for method (and name,
// for the methods Mcp-Name mirrors).
func modern(method, name string) hdr {
	h := hdr{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

// streamableLegacy are the legacy revisions of Streamable HTTP, which
// 2025-03-26 introduced, newest first.
func streamableLegacy() []string {
	return revs.Strings(revs.Where(func(t *revision.Table) bool { return revs.IsLegacy(t.Revision) && t.Revision >= "2025-03-26" }))
}

func initialize(version string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
}

// openSession initializes a legacy session and returns its id.
func openSession(t *testing.T, srv *httptest.Server, version string) string {
	t.Helper()
	resp := post(t, srv, nil, initialize(version))
	r := decode(t, resp, http.StatusOK)
	if r.Result["protocolVersion"] != version {
		t.Fatalf("initialize %s: %+v", version, r)
	}
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatal("initialize minted no Mcp-Session-Id")
	}
	return id
}

// discard is a logger that drops everything (for tests that log on purpose).
func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
