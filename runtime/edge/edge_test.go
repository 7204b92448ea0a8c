package edge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
	"github.com/mcpx-dev/mcpx/runtime/catalog"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/testkit/closedworld"
	"github.com/mcpx-dev/mcpx/testkit/revs"
)

// fakeNS is a namespace with one of everything.
type fakeNS struct{}

func (fakeNS) Capabilities() mcp.ServerCapabilities {
	return mcp.ServerCapabilities{Tools: &mcp.ServerCapabilitiesTools{}, Resources: &mcp.ServerCapabilitiesResources{}, Prompts: &mcp.ServerCapabilitiesPrompts{}, Completions: json.RawMessage(`{}`)}
}
func (fakeNS) ListTools(context.Context) ([]mcp.Tool, error) {
	return []mcp.Tool{{Name: "echo", Title: "Echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: mcp.Ptr(true)}}}, nil
}
func (fakeNS) CallTool(ctx context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	if p.Name != "echo" {
		return nil, fmt.Errorf("%w: %s", server.ErrUnknownTool, p.Name)
	}
	server.Progress(ctx, 1, 2, "half")
	server.Log(ctx, mcp.LoggingLevelInfo, "fake", "a tool may log; mcpx itself does not")
	return &mcp.CallToolResult{Content: []mcp.ContentBlock{{Value: &mcp.TextContent{Text: string(p.Arguments)}}}}, nil
}
func (fakeNS) ListResources(context.Context) ([]mcp.Resource, error) {
	return []mcp.Resource{{URI: "test://a", Name: "a", Title: "A"}}, nil
}
func (fakeNS) ListResourceTemplates(context.Context) ([]mcp.ResourceTemplate, error) {
	return []mcp.ResourceTemplate{{URITemplate: "test://t/{id}", Name: "t"}}, nil
}
func (fakeNS) ReadResource(_ context.Context, p *mcp.ReadResourceRequestParams) (*mcp.ReadResourceResult, error) {
	if p.URI != "test://a" {
		return nil, &server.ResourceNotFoundError{URI: p.URI}
	}
	return &mcp.ReadResourceResult{Contents: []mcp.ReadResourceResultContentsItem{{Value: &mcp.TextResourceContents{URI: p.URI, Text: "hello"}}}}, nil
}
func (fakeNS) ListPrompts(context.Context) ([]mcp.Prompt, error) {
	return []mcp.Prompt{{Name: "greet", Arguments: []mcp.PromptArgument{{Name: "name", Required: mcp.Ptr(true)}}}}, nil
}
func (fakeNS) GetPrompt(_ context.Context, p *mcp.GetPromptRequestParams) (*mcp.GetPromptResult, error) {
	if p.Name != "greet" {
		return nil, fmt.Errorf("%w: %s", server.ErrUnknownPrompt, p.Name)
	}
	return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: mcp.ContentBlock{Value: &mcp.TextContent{Text: "hi " + p.Arguments["name"]}}}}}, nil
}
func (fakeNS) Complete(context.Context, *mcp.CompleteRequestParams) (*mcp.CompleteResult, error) {
	return &mcp.CompleteResult{Completion: mcp.CompleteResultCompletion{Values: []string{"a", "b"}}}, nil
}

func newEdge() *edge.Edge {
	return &edge.Edge{Server: &server.Server{NS: fakeNS{}, Info: mcp.Implementation{Name: "mcpx-test", Version: "0.0.1"}, TTLMs: 60000}}
}

// modernMeta is the _meta every 2026-07-28 request carries.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// client drives an edge as one connection would, recording what it sends.
type client struct {
	t    *testing.T
	e    *edge.Edge
	sess *edge.Session
	def  mcp.Revision
	mu   sync.Mutex
	sent []*jsonrpc.Message // notifications
}

func newClient(t *testing.T) *client {
	return &client{t: t, e: newEdge(), sess: new(edge.Session), def: edge.Headerless}
}

func (c *client) do(method, params string) edge.Reply {
	c.t.Helper()
	m := &jsonrpc.Message{JSONRPC: "2.0", ID: json.RawMessage(`7`), Method: method}
	if params != "" {
		m.Params = json.RawMessage(params)
	}
	return c.e.Handle(context.Background(), c.sess, edge.In{Msg: m, Default: c.def}, func(n *jsonrpc.Message) {
		c.mu.Lock()
		c.sent = append(c.sent, n)
		c.mu.Unlock()
	})
}

func (c *client) initialize(rev string) mcp.Revision {
	c.t.Helper()
	r := c.do("initialize", `{"protocolVersion":"`+rev+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	if r.Msg == nil || r.Msg.Error != nil {
		c.t.Fatalf("initialize %s: %+v", rev, r.Msg)
	}
	var res struct{ ProtocolVersion string }
	json.Unmarshal(r.Msg.Result, &res)
	return mcp.Revision(res.ProtocolVersion)
}

func result(t *testing.T, r edge.Reply) map[string]any {
	t.Helper()
	if r.Msg == nil || r.Msg.Error != nil {
		t.Fatalf("want a result, got %+v (error %+v)", r.Msg, r.Msg.Error)
	}
	var m map[string]any
	if err := json.Unmarshal(r.Msg.Result, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func rpcError(t *testing.T, r edge.Reply) *jsonrpc.Error {
	t.Helper()
	if r.Msg == nil || r.Msg.Error == nil {
		t.Fatalf("want an error, got %+v", r.Msg)
	}
	return r.Msg.Error
}

// closedWorld checks a result against rev's schema, no undeclared member.
func closedWorld(t *testing.T, rev mcp.Revision, method string, r edge.Reply) {
	t.Helper()
	v, err := closedworld.Default()
	if err != nil {
		t.Fatal(err)
	}
	m, ok := revision.Lookup(rev).Method(method)
	if !ok {
		t.Fatalf("%s has no %s", rev, method)
	}
	def := m.Result
	if !v.Has(string(rev), def) {
		def = "Result"
	}
	if err := v.Validate(string(rev), def, r.Msg.Result); err != nil {
		t.Errorf("%s %s result %s:\n%v", rev, method, r.Msg.Result, err)
	}
}

// TestModernEnvelope — "The modern envelope": every 2026-07-28 result has
// resultType and serverInfo in _meta; discover, the four lists and
// resources/read also ttlMs and cacheScope; nothing else has them.
func TestModernEnvelope(t *testing.T) {
	c := newClient(t)
	cacheable := map[string]string{
		"server/discover":          `{` + modernMeta + `}`,
		"tools/list":               `{` + modernMeta + `}`,
		"resources/list":           `{` + modernMeta + `}`,
		"resources/templates/list": `{` + modernMeta + `}`,
		"prompts/list":             `{` + modernMeta + `}`,
		"resources/read":           `{` + modernMeta + `,"uri":"test://a"}`,
	}
	other := map[string]string{
		"tools/call":          `{` + modernMeta + `,"name":"echo","arguments":{}}`,
		"prompts/get":         `{` + modernMeta + `,"name":"greet","arguments":{"name":"x"}}`,
		"completion/complete": `{` + modernMeta + `,"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"name","value":""}}`,
	}
	for method, params := range cacheable {
		r := c.do(method, params)
		res := result(t, r)
		if res["resultType"] != "complete" || res["ttlMs"] == nil || res["cacheScope"] != "public" {
			t.Errorf("%s: %s", method, r.Msg.Result)
		}
		if meta, _ := res["_meta"].(map[string]any); meta["io.modelcontextprotocol/serverInfo"] == nil {
			t.Errorf("%s: no serverInfo in _meta: %s", method, r.Msg.Result)
		}
		closedWorld(t, edge.Modern, method, r)
	}
	for method, params := range other {
		r := c.do(method, params)
		res := result(t, r)
		if res["resultType"] != "complete" || res["ttlMs"] != nil || res["cacheScope"] != nil {
			t.Errorf("%s: %s", method, r.Msg.Result)
		}
		closedWorld(t, edge.Modern, method, r)
	}
}

// TestLegacyGetsNoEnvelope — "Legacy clients get none of it".
func TestLegacyGetsNoEnvelope(t *testing.T) {
	for _, rev := range revs.Strings(revs.Legacy()) {
		c := newClient(t)
		if got := c.initialize(rev); string(got) != rev {
			t.Fatalf("initialize %s negotiated %s", rev, got)
		}
		for _, method := range []string{"tools/list", "resources/list", "resources/templates/list", "prompts/list"} {
			r := c.do(method, `{}`)
			body := string(r.Msg.Result)
			for _, bad := range []string{"resultType", "ttlMs", "cacheScope", "serverInfo"} {
				if strings.Contains(body, bad) {
					t.Errorf("%s %s carries %s: %s", rev, method, bad, body)
				}
			}
			closedWorld(t, mcp.Revision(rev), method, r)
		}
	}
}

// TestDiscover — "server/discover ... is supportedVersions now, with the
// identity in _meta".
func TestDiscover(t *testing.T) {
	c := newClient(t)
	r := c.do("server/discover", `{`+modernMeta+`}`)
	res := result(t, r)
	if res["serverInfo"] != nil || res["protocolVersions"] != nil {
		t.Errorf("discover has members no DiscoverResult has: %s", r.Msg.Result)
	}
	got, _ := json.Marshal(res["supportedVersions"])
	if want, _ := json.Marshal(revs.All()); string(got) != string(want) { // every revision, newest first
		t.Errorf("supportedVersions = %s, want %s", got, want)
	}
	closedWorld(t, edge.Modern, "server/discover", r)
}

// TestModernRequiredMeta — "A modern request missing
// io.modelcontextprotocol/clientCapabilities, or naming a log level that
// does not exist, is -32602."
func TestModernRequiredMeta(t *testing.T) {
	c := newClient(t)
	for name, tc := range map[string]struct {
		params string
		status int
	}{
		"missing clientCapabilities": {`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`, http.StatusBadRequest},
		"missing protocolVersion":    {`{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}`, http.StatusBadRequest},
		"unknown log level":          {`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"loud"}}`, http.StatusOK},
	} {
		r := c.do("tools/list", tc.params)
		if e := rpcError(t, r); e.Code != jsonrpc.InvalidParams || r.Status != tc.status {
			t.Errorf("%s: code %d status %d, want -32602 and %d", name, e.Code, r.Status, tc.status)
		}
	}
}

// TestUnsupportedVersion — -32022 with data.supported (every revision in
// the tables, newest first) and data.requested, HTTP 400.
func TestUnsupportedVersion(t *testing.T) {
	c := newClient(t)
	r := c.do("tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01","io.modelcontextprotocol/clientCapabilities":{}}}`)
	e := rpcError(t, r)
	var data struct {
		Supported []string
		Requested string
	}
	json.Unmarshal(e.Data, &data)
	if e.Code != jsonrpc.UnsupportedProtocolVersion || r.Status != 400 || data.Requested != "1900-01-01" || !slices.Equal(data.Supported, revs.Strings(revs.All())) {
		t.Errorf("got %d %d %s", e.Code, r.Status, e.Data)
	}
}

// TestNoLogMessages — "mcpx emits no notifications/message at all": a
// client asking for debug logs on a request gets progress it asked for and
// no log message from mcpx's own code.
func TestNoLogMessages(t *testing.T) {
	c := newClient(t)
	c.e.Server.NS = quietNS{}
	r := c.do("tools/call", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"debug","progressToken":"p1"},"name":"echo"}`)
	result(t, r)
	progress := 0
	for _, n := range c.sent {
		switch n.Method {
		case "notifications/message":
			t.Errorf("mcpx sent a log message: %s", n.Params)
		case "notifications/progress":
			if !strings.Contains(string(n.Params), `"progressToken":"p1"`) {
				t.Errorf("progress for another token: %s", n.Params)
			}
			progress++
		}
	}
	if progress != 1 {
		t.Errorf("%d progress notifications, want the tool's one: %v", progress, c.sent)
	}
}

// quietNS is fakeNS whose tool does not log.
type quietNS struct{ fakeNS }

func (quietNS) CallTool(ctx context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	server.Progress(ctx, 1, 1, "")
	return &mcp.CallToolResult{Content: []mcp.ContentBlock{}}, nil
}

// TestLogLevelGates: a namespace's log messages reach a request only when
// its level asks for them (2026-07-28 _meta logLevel; legacy setLevel).
func TestLogLevelGates(t *testing.T) {
	c := newClient(t)
	c.do("tools/call", `{`+modernMeta+`,"name":"echo"}`)
	for _, n := range c.sent {
		if n.Method == "notifications/message" {
			t.Errorf("log message without a logLevel: %s", n.Params)
		}
	}
	c.sent = nil
	c.do("tools/call", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"info"},"name":"echo"}`)
	if len(c.sent) != 1 || c.sent[0].Method != "notifications/message" {
		t.Errorf("with logLevel info: sent %v", c.sent)
	}
}

// TestInitializeNegotiation — "An unknown or modern version now gets the
// latest legacy one mcpx serves, and the client decides."
func TestInitializeNegotiation(t *testing.T) {
	cases := map[string]mcp.Revision{"1999-01-01": revs.NewestLegacy(), "": revs.NewestLegacy()}
	for _, rev := range revs.Legacy() {
		cases[string(rev)] = rev
	}
	for _, rev := range revs.Modern() {
		cases[string(rev)] = revs.NewestLegacy()
	}
	for requested, want := range cases {
		if got := newClient(t).initialize(requested); got != want {
			t.Errorf("initialize %q: got %s, want %s", requested, got, want)
		}
	}
}

// TestRemovedMethodsAreNotFound: 2026-07-28 has no initialize, ping,
// logging/setLevel or resources/subscribe: -32601 with HTTP 404.
func TestRemovedMethodsAreNotFound(t *testing.T) {
	c := newClient(t)
	for _, method := range []string{"initialize", "ping", "logging/setLevel", "resources/subscribe", "tasks/list", "nope/nope"} {
		r := c.do(method, `{`+modernMeta+`}`)
		if e := rpcError(t, r); e.Code != jsonrpc.MethodNotFound || r.Status != http.StatusNotFound {
			t.Errorf("%s: %d status %d", method, e.Code, r.Status)
		}
	}
}

// TestResourceNotFound — "-32602 to a 2026-07-28 client, -32002 to every
// earlier one, both with data.uri."
func TestResourceNotFound(t *testing.T) {
	c := newClient(t)
	e := rpcError(t, c.do("resources/read", `{`+modernMeta+`,"uri":"test://missing"}`))
	if e.Code != jsonrpc.InvalidParams || !strings.Contains(string(e.Data), `"uri":"test://missing"`) {
		t.Errorf("modern: %d %s", e.Code, e.Data)
	}
	for _, rev := range revs.Strings(revs.Legacy()) {
		c := newClient(t)
		c.initialize(rev)
		e := rpcError(t, c.do("resources/read", `{"uri":"test://missing"}`))
		if e.Code != jsonrpc.ResourceNotFound || !strings.Contains(string(e.Data), `"uri":"test://missing"`) {
			t.Errorf("%s: %d %s", rev, e.Code, e.Data)
		}
	}
}

// TestTemplatesSpellURITemplate — "every revision's ResourceTemplate spells
// it uriTemplate".
func TestTemplatesSpellURITemplate(t *testing.T) {
	for _, rev := range revs.Strings(revs.Legacy()) {
		c := newClient(t)
		c.initialize(rev)
		r := c.do("resources/templates/list", `{}`)
		if !strings.Contains(string(r.Msg.Result), `"uriTemplate":"test://t/{id}"`) {
			t.Errorf("%s: %s", rev, r.Msg.Result)
		}
	}
}

// TestErrorCodeSweep — "Nothing else in the reserved range; a test sweeps
// both eras": every failure either era can provoke maps to a code from the
// one table, and each to the one expected.
func TestErrorCodeSweep(t *testing.T) {
	legacy := func() *client { c := newClient(t); c.initialize("2025-06-18"); return c }
	modern := newClient
	cases := []struct {
		name   string
		client func(*testing.T) *client
		method string
		params string
		want   int64
	}{
		{"legacy unknown method", func(*testing.T) *client { return legacy() }, "nope", `{}`, jsonrpc.MethodNotFound},
		{"legacy unknown tool", func(*testing.T) *client { return legacy() }, "tools/call", `{"name":"nope"}`, jsonrpc.InvalidParams},
		{"legacy params of the wrong type", func(*testing.T) *client { return legacy() }, "tools/call", `{"name":7}`, jsonrpc.InvalidParams},
		{"legacy resource not found", func(*testing.T) *client { return legacy() }, "resources/read", `{"uri":"x:y"}`, jsonrpc.ResourceNotFound},
		{"legacy bad cursor", func(*testing.T) *client { return legacy() }, "tools/list", `{"cursor":"!!"}`, jsonrpc.InvalidParams},
		{"legacy bad log level", func(*testing.T) *client { return legacy() }, "logging/setLevel", `{"level":"loud"}`, jsonrpc.InvalidParams},
		{"modern unknown method", modern, "nope", `{` + modernMeta + `}`, jsonrpc.MethodNotFound},
		{"modern unknown prompt", modern, "prompts/get", `{` + modernMeta + `,"name":"nope"}`, jsonrpc.InvalidParams},
		{"modern resource not found", modern, "resources/read", `{` + modernMeta + `,"uri":"x:y"}`, jsonrpc.InvalidParams},
		{"modern missing protocol version", modern, "tools/list", `{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}`, jsonrpc.InvalidParams},
		{"modern missing capabilities", modern, "tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`, jsonrpc.InvalidParams},
		{"modern unsupported version", modern, "tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2020-01-01"}}`, jsonrpc.UnsupportedProtocolVersion},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := rpcError(t, tc.client(t).do(tc.method, tc.params))
			if e.Code != tc.want {
				t.Errorf("code %d, want %d (%s)", e.Code, tc.want, e.Message)
			}
			known := false
			for _, c := range jsonrpc.Codes {
				known = known || c == e.Code
			}
			if !known {
				t.Errorf("code %d is not in jsonrpc.Codes", e.Code)
			}
			if e.Message == "" || strings.Contains(strings.TrimSuffix(e.Message, "."), ". ") {
				t.Errorf("message should be one sentence: %q", e.Message)
			}
		})
	}
}

// blockNS's tool says it started, then runs until its context ends.
type blockNS struct {
	fakeNS
	started chan struct{}
}

func (b blockNS) CallTool(ctx context.Context, _ *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	b.started <- struct{}{}
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestDuplicateInFlightID: an id still in progress cannot be reused (every
// revision: MUST NOT); the second request gets -32600, the first is
// unaffected and can still be cancelled.
func TestDuplicateInFlightID(t *testing.T) {
	c := newClient(t)
	ns := blockNS{started: make(chan struct{}, 1)}
	c.e.Server.NS = ns
	c.initialize("2025-06-18")
	first := make(chan edge.Reply)
	go func() { first <- c.do("tools/call", `{"name":"echo"}`) }()
	<-ns.started
	r := c.do("tools/call", `{"name":"echo"}`)
	if r.Msg == nil || r.Msg.Error == nil || r.Msg.Error.Code != jsonrpc.InvalidRequest {
		t.Fatalf("want -32600 for a reused id while the first runs, got %+v", r.Msg)
	}
	c.sess.Cancel(json.RawMessage(`7`))
	if r := <-first; r.Msg != nil {
		t.Errorf("a cancelled request should get no answer, got %+v", r.Msg)
	}
}

// TestListCacheFollowsTheNamespace: a cached tools/list answer is replaced
// as soon as the namespace's lists change.
func TestListCacheFollowsTheNamespace(t *testing.T) {
	c := newClient(t)
	cat := catalog.New()
	c.e.Server.NS = cat
	add := func(name string) {
		cat.AddTool(mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
			return catalog.TextResult("ok"), nil
		})
	}
	add("first")
	for i := range 2 { // the second answer comes from the cache
		if r := c.do("tools/list", `{`+modernMeta+`}`); !strings.Contains(string(r.Msg.Result), `"first"`) {
			t.Fatalf("list %d: %s", i, r.Msg.Result)
		}
	}
	add("second")
	if r := c.do("tools/list", `{`+modernMeta+`}`); !strings.Contains(string(r.Msg.Result), `"second"`) {
		t.Errorf("after AddTool the list is stale: %s", r.Msg.Result)
	}
	r := c.do("tools/list", `{`+modernMeta+`}`)
	if r.Msg == nil || string(r.Msg.ID) != "7" {
		t.Errorf("a cached answer must carry the request's own id: %+v", r.Msg)
	}
}

// capsNS's tool needs the client's sampling capability.
type capsNS struct{ fakeNS }

func (capsNS) CallTool(ctx context.Context, _ *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	if server.ClientCapabilities(ctx).Sampling == nil {
		return nil, &server.MissingCapabilityError{Required: mcp.ClientCapabilities{Sampling: &mcp.ClientCapabilitiesSampling{}}}
	}
	return &mcp.CallToolResult{Content: []mcp.ContentBlock{}}, nil
}

// TestMissingClientCapability: a handler sees the capabilities declared on
// the request (2026-07-28) or at initialize (legacy); a missing one is
// -32021 with data.requiredCapabilities and HTTP 400 for 2026-07-28, and
// -32600 for legacy revisions, which define no such error.
func TestMissingClientCapability(t *testing.T) {
	c := newClient(t)
	c.e.Server.NS = capsNS{}
	r := c.do("tools/call", `{`+modernMeta+`,"name":"echo"}`)
	e := rpcError(t, r)
	if e.Code != jsonrpc.MissingRequiredClientCapability || r.Status != http.StatusBadRequest || !strings.Contains(string(e.Data), `"requiredCapabilities":{"sampling":{}}`) {
		t.Errorf("modern without sampling: %d %d %s", e.Code, r.Status, e.Data)
	}
	r = c.do("tools/call", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}}},"name":"echo"}`)
	result(t, r)

	legacy := newClient(t)
	legacy.e.Server.NS = capsNS{}
	legacy.initialize("2025-06-18")
	if e := rpcError(t, legacy.do("tools/call", `{"name":"echo"}`)); e.Code != jsonrpc.InvalidRequest {
		t.Errorf("legacy without sampling: %d", e.Code)
	}
	declared := newClient(t)
	declared.e.Server.NS = capsNS{}
	declared.do("initialize", `{"protocolVersion":"2025-06-18","capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"1"}}`)
	result(t, declared.do("tools/call", `{"name":"echo"}`))
}

// changerNS is fakeNS whose lists change when the test says so.
type changerNS struct {
	fakeNS
	ch chan string
}

func (n changerNS) Changes() <-chan string { return n.ch }

// TestListChanges: a namespace that tells of changes gets listChanged
// declared; a legacy session's stream hears every change, a 2026-07-28
// listen stream only those its agreed filter names, tagged with its id.
func TestListChanges(t *testing.T) {
	ns := changerNS{ch: make(chan string)}
	e := &edge.Edge{Server: &server.Server{NS: ns, Info: mcp.Implementation{Name: "t", Version: "1"}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go e.WatchChanges(ctx)

	// Legacy: initialize declares listChanged; the attached stream hears.
	legacy := new(edge.Session)
	init := e.Handle(ctx, legacy, edge.In{Msg: &jsonrpc.Message{JSONRPC: "2.0", ID: json.RawMessage(`1`), Method: "initialize",
		Params: json.RawMessage(`{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`)}}, nil)
	if !strings.Contains(string(init.Msg.Result), `"tools":{"listChanged":true}`) {
		t.Fatalf("initialize: %s", init.Msg.Result)
	}
	heard := make(chan *jsonrpc.Message, 4)
	detach := e.Attach(legacy, func(m *jsonrpc.Message) { heard <- m })
	defer detach()

	// Modern: a listen asking for tools only.
	listened := make(chan *jsonrpc.Message, 4)
	listen := &jsonrpc.Message{JSONRPC: "2.0", ID: json.RawMessage(`"L"`), Method: "subscriptions/listen",
		Params: json.RawMessage(`{` + modernMeta + `,"notifications":{"toolsListChanged":true,"promptsListChanged":false}}`)}
	lctx, lcancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		e.Handle(lctx, new(edge.Session), edge.In{Msg: listen}, func(m *jsonrpc.Message) { listened <- m })
		close(done)
	}()
	ack := <-listened
	if ack.Method != "notifications/subscriptions/acknowledged" || !strings.Contains(string(ack.Params), `"notifications":{"toolsListChanged":true}`) {
		t.Fatalf("acknowledgement: %s %s", ack.Method, ack.Params)
	}

	ns.ch <- mcp.MethodNotificationsPromptsListChanged
	if m := <-heard; m.Method != mcp.MethodNotificationsPromptsListChanged {
		t.Errorf("legacy stream heard %s", m.Method)
	}
	ns.ch <- mcp.MethodNotificationsToolsListChanged
	if m := <-heard; m.Method != mcp.MethodNotificationsToolsListChanged {
		t.Errorf("legacy stream heard %s", m.Method)
	}
	m := <-listened // the prompts change was filtered out: the first is tools
	if m.Method != mcp.MethodNotificationsToolsListChanged || !strings.Contains(string(m.Params), `"io.modelcontextprotocol/subscriptionId":"L"`) {
		t.Errorf("listen stream: %s %s", m.Method, m.Params)
	}
	lcancel()
	<-done
}
