package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/fixture"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
	"github.com/mcpx-dev/mcpx/testkit/closedworld"
	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
	"github.com/mcpx-dev/mcpx/testkit/revs"
	"github.com/mcpx-dev/mcpx/testkit/testbin"
)

// fixtureBin is the mcpx-fixture binary TestMain builds.
var fixtureBin string

func TestMain(m *testing.M) {
	if mode := os.Getenv(envMode); mode != "" {
		os.Exit(serveMode(mode))
	}
	dir, err := os.MkdirTemp("", "mcpx-upstream-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if fixtureBin, err = testbin.Build(dir, "./cmd/mcpx-fixture"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	// No goroutine the tests started may outlive them (issue 17: leaks).
	// The one that starts upstream processes from a locked thread
	// (lifetime_linux.go, for Pdeathsig) lives as long as the program.
	if err := goleak.Find(goleak.IgnoreTopFunction("github.com/mcpx-dev/mcpx/runtime/upstream.init.0.func1")); code == 0 && err != nil {
		fmt.Fprintln(os.Stderr, "goleak: goroutines left after the tests:", err)
		code = 1
	}
	os.Exit(code)
}

var mcpxInfo = mcp.Implementation{Name: "mcpx-test", Version: "0.0.0"}

// testLog sends the client's log to t.Log.
func testLog(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(b []byte) (int, error) {
	w.t.Helper()
	defer func() { _ = recover() }() // a line logged after the test ended
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// proc is a stdio upstream re-executing this test binary in a mode.
type proc struct {
	spec   Spec
	record string // the lines the upstream read
	marks  string // the upstream's events
}

func newProc(t *testing.T, name, mode string) *proc {
	dir := t.TempDir()
	p := &proc{record: filepath.Join(dir, "stdin.jsonl"), marks: filepath.Join(dir, "marks")}
	p.spec = Spec{
		Name:    name,
		Command: os.Args[0],
		// GORACE: a race-enabled child otherwise lingers 1s at exit.
		Env:     map[string]string{envMode: mode, envRecord: p.record, envMark: p.marks, "GORACE": "atexit_sleep_ms=0"},
		Timeout: 10 * time.Second,
	}
	return p
}

func (p *proc) hasMark(s string) bool {
	b, _ := os.ReadFile(p.marks)
	return strings.Contains(string(b), s)
}

func (p *proc) waitMark(t *testing.T, s string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !p.hasMark(s) {
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(p.marks)
			t.Fatalf("the upstream never marked %q within %s (marks: %q)", s, within, b)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// notifier is a client's server.Notifier that asked for progress.
type notifier struct {
	token json.RawMessage
	mu    sync.Mutex
	got   []mcp.ProgressNotificationParams
}

func (n *notifier) Notify(method string, params any) bool {
	if p, ok := params.(*mcp.ProgressNotificationParams); ok && method == mcp.MethodNotificationsProgress {
		n.mu.Lock()
		n.got = append(n.got, *p)
		n.mu.Unlock()
	}
	return true
}
func (n *notifier) ProgressToken() json.RawMessage { return n.token }
func (n *notifier) LogLevel() mcp.LoggingLevel     { return "" }

func (n *notifier) progress() []mcp.ProgressNotificationParams {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]mcp.ProgressNotificationParams(nil), n.got...)
}

// features says what an upstream serves and what to ask it.
type features struct {
	tool, toolArgs, toolText string
	resource, resourceText   string
	template                 string
	templated, templatedText string
	prompt                   string
	promptArgs               map[string]string
	promptText               string
	complete                 *mcp.CompleteRequestParams
	completeWant             string
	notFoundCode             int64
	progressTool             string
	progressSteps            int
	sleepTool                string // "" when the upstream has none
	marks                    marker // where sleepTool's events show
}

// marker is where an upstream's events show: a file for a child process,
// memory for a server in this process.
type marker interface {
	waitMark(t *testing.T, s string, within time.Duration)
}

// marks are the events of a server in this process.
type marks struct {
	mu sync.Mutex
	b  strings.Builder
}

func (m *marks) mark(format string, args ...any) {
	m.mu.Lock()
	fmt.Fprintf(&m.b, format+"\n", args...)
	m.mu.Unlock()
}

func (m *marks) waitMark(t *testing.T, s string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		m.mu.Lock()
		got := m.b.String()
		m.mu.Unlock()
		if strings.Contains(got, s) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the upstream never marked %q within %s (marks: %q)", s, within, got)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sdkFeatures are those of goSDKServer and mark3Server.
func sdkFeatures(notFound int64) features {
	return features{
		tool: "echo", toolArgs: `{"text":"hi"}`, toolText: "echo: hi",
		resource: "test://static", resourceText: "static text",
		template: "test://items/{id}", templated: "test://items/42", templatedText: "item at test://items/42",
		prompt: "greet", promptArgs: map[string]string{"name": "Ada"}, promptText: "Hello, Ada!",
		complete: &mcp.CompleteRequestParams{
			Ref:      mcp.CompleteRequestParamsRef{Value: &mcp.PromptReference{Name: "greet"}},
			Argument: mcp.CompleteRequestParamsArgument{Name: "name", Value: "x"},
		},
		completeWant: "x-alpha",
		notFoundCode: notFound,
		progressTool: "progress", progressSteps: 3,
		sleepTool: "sleep",
	}
}

var fixtureFeatures = features{
	tool: "test_simple_text", toolText: "This is a simple text response for testing.",
	resource: "test://static-text", resourceText: "",
	template: "test://template/{id}/data", templated: "test://template/7/data", templatedText: "7",
	prompt: "test_simple_prompt", promptText: "",
	complete: &mcp.CompleteRequestParams{
		Ref:      mcp.CompleteRequestParamsRef{Value: &mcp.ResourceTemplateReference{URI: "test://template/{id}/data"}},
		Argument: mcp.CompleteRequestParamsArgument{Name: "id", Value: ""},
	},
	notFoundCode: -32602,
	progressTool: "test_tool_with_progress", progressSteps: 3,
}

func mustJSONString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// exercise runs every feature against c and checks the hub values.
func exercise(t *testing.T, c *Client, want mcp.Revision, f features) {
	ctx := context.Background()
	caps, err := c.Capabilities(ctx)
	if err != nil {
		t.Fatalf("Capabilities: %v", err)
	}
	c.mu.Lock()
	d := c.d
	c.mu.Unlock()
	if d == nil || d.Revision() != want {
		t.Fatalf("negotiated %v, want %s", d, want)
	}
	t.Logf("negotiated %s with %s; capabilities %s", d.Revision(), d.ServerInfo.Name, mustJSONString(t, caps))

	// A routed method the upstream's revision lacks is refused without a
	// round trip: -32601 naming the upstream and its revision, which the
	// gateway passes on (the route's fallback).
	refused := 0
	for _, m := range mcp.ClientMethods {
		// Every request the revision lacks, routed or mcpx's own (the
		// task methods are local since mcpx holds tasks itself, yet the
		// gateway calls an upstream's tasks/get to poll its task).
		if m.Name == mcp.MethodInitialize || d.Has(m.Name) {
			continue
		}
		refused++
		_, err := c.Call(ctx, m.Name, mcp.New(m.Params))
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != jsonrpc.MethodNotFound || !strings.Contains(je.Message, fmt.Sprintf("%q", c.spec.Name)) || !strings.Contains(je.Message, string(want)) {
			t.Errorf("Call(%s) on a %s upstream: err = %v, want -32601 naming the upstream and its revision", m.Name, want, err)
		}
	}
	if refused == 0 {
		t.Errorf("every routed method exists in %s: the refusal went unchecked", want)
	}

	tools, err := mcp.ListTools(ctx, c, nil)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	found := false
	for _, tool := range tools.Tools {
		found = found || tool.Name == f.tool
	}
	if !found {
		t.Errorf("ListTools has no %s: %s", f.tool, mustJSONString(t, tools))
	}
	var args json.RawMessage
	if f.toolArgs != "" {
		args = json.RawMessage(f.toolArgs)
	}
	res, err := mcp.CallTool(ctx, c, &mcp.CallToolRequestParams{Name: f.tool, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	if len(res.Content) == 0 {
		t.Fatalf("CallTool: no content: %s", mustJSONString(t, res))
	}
	if txt, ok := res.Content[0].Value.(*mcp.TextContent); !ok || txt.Text != f.toolText {
		t.Errorf("CallTool content = %s, want text %q", mustJSONString(t, res.Content), f.toolText)
	}

	rl, err := mcp.ListResources(ctx, c, nil)
	if err != nil {
		t.Fatalf("ListResources: %v", err)
	}
	if !strings.Contains(mustJSONString(t, rl), `"uri":"`+f.resource+`"`) {
		t.Errorf("ListResources has no %s: %s", f.resource, mustJSONString(t, rl))
	}
	rr, err := mcp.ReadResource(ctx, c, &mcp.ReadResourceRequestParams{URI: f.resource})
	if err != nil {
		t.Fatalf("ReadResource: %v", err)
	}
	if len(rr.Contents) != 1 {
		t.Fatalf("ReadResource: %s", mustJSONString(t, rr))
	}
	if tc, ok := rr.Contents[0].Value.(*mcp.TextResourceContents); !ok || tc.URI != f.resource || !strings.Contains(tc.Text, f.resourceText) {
		t.Errorf("ReadResource(%s) = %s, want text %q", f.resource, mustJSONString(t, rr), f.resourceText)
	}
	rt, err := mcp.ListResourceTemplates(ctx, c, nil)
	if err != nil {
		t.Fatalf("ListResourceTemplates: %v", err)
	}
	if len(rt.ResourceTemplates) == 0 || rt.ResourceTemplates[0].URITemplate != f.template {
		t.Errorf("ListResourceTemplates = %s, want %s", mustJSONString(t, rt), f.template)
	}
	rr, err = mcp.ReadResource(ctx, c, &mcp.ReadResourceRequestParams{URI: f.templated})
	if err != nil {
		t.Fatalf("ReadResource(%s): %v", f.templated, err)
	}
	if !strings.Contains(mustJSONString(t, rr), f.templatedText) {
		t.Errorf("ReadResource(%s) = %s, want %q", f.templated, mustJSONString(t, rr), f.templatedText)
	}

	_, err = mcp.ReadResource(ctx, c, &mcp.ReadResourceRequestParams{URI: "test://no/such/thing"})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != f.notFoundCode {
		t.Errorf("ReadResource(unknown) = %T %v, want a *jsonrpc.Error with code %d", err, err, f.notFoundCode)
	}

	pl, err := mcp.ListPrompts(ctx, c, nil)
	if err != nil {
		t.Fatalf("ListPrompts: %v", err)
	}
	if !strings.Contains(mustJSONString(t, pl), `"name":"`+f.prompt+`"`) {
		t.Errorf("ListPrompts has no %s: %s", f.prompt, mustJSONString(t, pl))
	}
	gp, err := mcp.GetPrompt(ctx, c, &mcp.GetPromptRequestParams{Name: f.prompt, Arguments: f.promptArgs})
	if err != nil {
		t.Fatalf("GetPrompt: %v", err)
	}
	if len(gp.Messages) == 0 {
		t.Fatalf("GetPrompt: no messages: %s", mustJSONString(t, gp))
	}
	if txt, ok := gp.Messages[0].Content.Value.(*mcp.TextContent); !ok || !strings.Contains(txt.Text, f.promptText) || gp.Messages[0].Role != mcp.RoleUser {
		t.Errorf("GetPrompt = %s, want a user message with %q", mustJSONString(t, gp), f.promptText)
	}

	if f.complete != nil {
		cr, err := mcp.Complete(ctx, c, f.complete)
		if err != nil {
			t.Fatalf("Complete: %v", err)
		}
		if len(cr.Completion.Values) == 0 || !strings.Contains(strings.Join(cr.Completion.Values, ","), f.completeWant) {
			t.Errorf("Complete = %s, want a value with %q", mustJSONString(t, cr), f.completeWant)
		}
	}

	// Progress: the caller's notifier gets every step of the upstream's.
	n := &notifier{token: json.RawMessage(`"client-token-1"`)}
	pres, err := mcp.CallTool(server.WithNotifier(ctx, n), c, &mcp.CallToolRequestParams{Name: f.progressTool})
	if err != nil {
		t.Fatalf("CallTool(%s): %v", f.progressTool, err)
	}
	got := n.progress()
	// Notifications on stdio may be read after the response; give them a moment.
	for deadline := time.Now().Add(time.Second); len(got) < f.progressSteps && time.Now().Before(deadline); got = n.progress() {
		time.Sleep(5 * time.Millisecond)
	}
	if len(got) != f.progressSteps {
		t.Errorf("progress: the notifier got %d notifications, want %d: %s (result %s)", len(got), f.progressSteps, mustJSONString(t, got), mustJSONString(t, pres))
	}
	for i, p := range got {
		if string(p.ProgressToken) != `"client-token-1"` {
			t.Errorf("progress %d carries token %s, want the client's", i, p.ProgressToken)
		}
		if i > 0 && p.Progress <= got[i-1].Progress {
			t.Errorf("progress does not increase: %s", mustJSONString(t, got))
		}
	}

	// Cancellation: the upstream's handler sees its context end, and the
	// call returns promptly.
	if f.sleepTool != "" {
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := mcp.CallTool(cctx, c, &mcp.CallToolRequestParams{Name: f.sleepTool})
			done <- err
		}()
		f.marks.waitMark(t, "sleep started", 5*time.Second)
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("a cancelled call returned %v, want context.Canceled", err)
			}
		case <-time.After(time.Second):
			t.Fatal("a cancelled call did not return within 1s")
		}
		f.marks.waitMark(t, "sleep cancelled", 3*time.Second)
	}
}

// goSDKRevisions are the revisions in the tables that the go-sdk v1.8.0
// server these tests run speaks (its SupportedProtocolVersions), newest
// first.
func goSDKRevisions() []mcp.Revision {
	return revs.Peer{Name: "go-sdk v1.8.0 server", Speaks: sdk.SupportedProtocolVersions()}.Revisions()
}

func TestStdioUpstreams(t *testing.T) {
	leakcheck.Check(t)
	legacyNotFound := func(rev mcp.Revision) int64 {
		if revs.IsModern(rev) {
			return -32602
		}
		return -32002
	}
	type tc struct {
		name, mode string
		env        map[string]string
		want       mcp.Revision
		f          features
	}
	var cases []tc
	for _, rev := range goSDKRevisions() {
		env := map[string]string{}
		if !revs.IsModern(rev) {
			// The go-sdk answers -32602 since v1.7.0; this restores the
			// -32002 legacy servers answer.
			env["MCPGODEBUG"] = "customresnotfounderrcode=1"
		}
		cases = append(cases, tc{"gosdk/" + string(rev), "gosdk:" + string(rev), env, rev, sdkFeatures(legacyNotFound(rev))})
	}
	cases = append(cases,
		tc{"mark3/2025-11-25", "mark3:legacy", nil, mcp.Rev20251125, sdkFeatures(-32002)},
		tc{"mark3/2026-07-28", "mark3:modern", nil, edge.Modern, sdkFeatures(-32602)},
		// The fixture is mcpx and speaks every revision: it is reached at the newest.
		tc{"fixture/" + string(revs.NewestModern()), "exec", map[string]string{envExec: fixtureBin}, revs.NewestModern(), fixtureFeatures},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := newProc(t, "up-"+strings.ReplaceAll(c.name, "/", "-"), c.mode)
			for k, v := range c.env {
				p.spec.Env[k] = v
			}
			cl := New(p.spec, mcpxInfo, testLog(t))
			c.f.marks = p
			exercise(t, cl, c.want, c.f)
			if err := cl.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			checkSent(t, p.record, c.want)
		})
	}
}

func TestHTTPUpstreams(t *testing.T) {
	leakcheck.Check(t)
	type tc struct {
		name    string
		handler http.Handler
		want    mcp.Revision
		f       features
	}
	var cases []tc
	for _, rev := range goSDKRevisions() {
		f := sdkFeatures(-32602)
		m := &marks{}
		f.marks = m
		s := goSDKServer(string(rev), m.mark)
		cases = append(cases, tc{"gosdk/" + string(rev), sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s },
			&sdk.StreamableHTTPOptions{Stateless: revs.IsModern(rev), PropagateRequestCancellation: true}), rev, f})
	}
	fx := streamhttp.New(&edge.Edge{Server: &server.Server{NS: fixture.New(), Info: mcp.Implementation{Name: "fixture", Version: "1"}}}, streamhttp.Options{})
	cases = append(cases, tc{"mcpx-streamhttp/fixture", fx, revs.NewestModern(), fixtureFeatures})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{next: c.handler}
			srv := httptest.NewServer(rec)
			defer srv.Close()
			cl := New(Spec{Name: "http-" + c.name, URL: srv.URL + "/mcp", Timeout: 10 * time.Second}, mcpxInfo, testLog(t))
			// Closed before the server even when exercise fails: a legacy
			// session's GET stream would hold srv.Close forever.
			closed := false
			defer func() {
				if !closed {
					cl.Close()
				}
			}()
			exercise(t, cl, c.want, c.f)
			closed = true
			if err := cl.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			checkLines(t, rec.lines(), c.want)
		})
	}
}

// recorder keeps every POST body on its way to an HTTP upstream.
type recorder struct {
	next http.Handler
	mu   sync.Mutex
	body []string
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodPost {
		b, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(b))
		r.mu.Lock()
		r.body = append(r.body, string(b))
		r.mu.Unlock()
	}
	r.next.ServeHTTP(w, req)
}

func (r *recorder) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.body...)
}

// checkSent validates every line an upstream read on its stdin.
func checkSent(t *testing.T, path string, rev mcp.Revision) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the recording: %v", err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		t.Fatal("the upstream read nothing")
	}
	checkLines(t, lines, rev)
}

// checkLines: every message mcpx sent is closed-world valid for the
// revision it was sent under: the server/discover probe for 2026-07-28,
// initialize for the revision it asks for, the rest for rev.
func checkLines(t *testing.T, lines []string, rev mcp.Revision) {
	t.Helper()
	v, err := closedworld.Default()
	if err != nil {
		t.Fatalf("closedworld: %v", err)
	}
	for _, line := range lines {
		var m struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Method  string          `json:"method"`
			Params  json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("mcpx sent a line that is not JSON: %q: %v", line, err)
			continue
		}
		if m.Method == "" {
			continue // a response to the upstream's request
		}
		sentAs := rev
		switch m.Method {
		case mcp.MethodServerDiscover:
			sentAs = edge.Modern
		case mcp.MethodInitialize:
			sentAs = edge.LatestLegacy
		}
		def := "ClientRequest"
		if m.ID == nil {
			def = "ClientNotification"
		}
		inst := []byte(line)
		if sentAs < mcp.Rev20251125 {
			// Before 2025-11-25 the schema declares params._meta (and its
			// progressToken) only on the abstract Request, not on each
			// request's params, though the progress page puts the token
			// there on every request. A _meta is checked against Request
			// and the rest against the request's own definition.
			var params map[string]json.RawMessage
			if json.Unmarshal(m.Params, &params) == nil && params["_meta"] != nil {
				meta := []byte(fmt.Sprintf(`{"method":%q,"params":{"_meta":%s}}`, m.Method, params["_meta"]))
				if err := v.Validate(string(sentAs), "Request", meta); err != nil {
					t.Errorf("mcpx sent a %s message whose _meta is not valid:\n%s\n%v", sentAs, line, err)
				}
				delete(params, "_meta")
				m.Params, _ = json.Marshal(params)
			}
			inst = []byte(fmt.Sprintf(`{"method":%q,"params":%s}`, m.Method, m.Params))
			if m.Params == nil {
				inst = []byte(fmt.Sprintf(`{"method":%q}`, m.Method))
			}
		}
		if err := v.Validate(string(sentAs), def, inst); err != nil {
			t.Errorf("mcpx sent a %s message that is not closed-world valid:\n%s\n%v", sentAs, line, err)
		}
	}
}

// settle waits for the goroutine count to come back to at most base.
func settle(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Errorf("goroutines: %d, were %d\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
