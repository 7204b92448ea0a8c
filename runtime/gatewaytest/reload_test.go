package gatewaytest

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
	"github.com/mcpx-dev/mcpx/testkit/wiretest"

	"github.com/mcpx-dev/mcpx/runtime/config"
	"github.com/mcpx-dev/mcpx/runtime/host"
)

// reloadConfig is a config of command namespaces: keep (a tool that takes
// a second), then the namespaces named, each with a tool v printing text.
func reloadConfig(extra map[string]string) string {
	var b strings.Builder
	b.WriteString(`{"mcpServers": {}, "mcpx": {"commands": {"keep": {"tools": {"nap": {"command": "sh", "args": ["-c", "sleep 1; printf rested"]}}}`)
	names := make([]string, 0, len(extra))
	for ns := range extra {
		names = append(names, ns)
	}
	slices.Sort(names)
	for _, ns := range names {
		b.WriteString(`, "` + ns + `": {"tools": {"v": {"command": "printf", "args": ["` + extra[ns] + `"]}}}`)
	}
	b.WriteString(`}}}`)
	return b.String()
}

// TestReload: a reload adds, removes and restarts namespaces while a
// client holds its session and a call runs on a namespace that did not
// change: the call finishes, the session goes on, the client hears
// tools/list_changed and sees the new lists; a file that does not check
// changes nothing.
func TestReload(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcpx.json")
	write := func(doc string) {
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(reloadConfig(map[string]string{"gone": "bye", "alter": "one"}))
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	logs, log := logBuffer()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	gw, err := host.Gateway(ctx, cfg, serverInfo, log)
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	r := host.NewReloader(path, gw, cfg, nil, serverInfo, log)

	const rev = "2025-11-25"
	url, hc, e := serveWatchedHTTP(t, gw, rev)
	var changed atomic.Int32
	cl := gosdk.NewClient(&gosdk.Implementation{Name: "reload", Version: "1"}, &gosdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *gosdk.ToolListChangedRequest) { changed.Add(1) },
	})
	cs, err := cl.Connect(ctx, &gosdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, &gosdk.ClientSessionOptions{ProtocolVersion: rev})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools := func() []string {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		return names
	}
	call := func(name string) string {
		res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: name})
		if err != nil {
			return "error: " + err.Error()
		}
		return res.Content[0].(*gosdk.TextContent).Text
	}
	if got := tools(); !slices.Equal(got, []string{"alter__v", "gone__v", "keep__nap"}) {
		t.Fatalf("before: %v", got)
	}

	// A 2026-07-28 client holds a listen stream for tool list changes
	// across the reload: it hears the change, and is not ended.
	// The same edge (one watcher of the gateway's changes), on a listener
	// of its own, unrecorded: the recorder validates one revision.
	modernHTTP := httptest.NewServer(streamhttp.New(e, streamhttp.Options{}))
	defer modernHTTP.Close()
	murl, mhc := modernHTTP.URL+"/mcp", modernHTTP.Client()
	lctx, stopListen := context.WithCancel(ctx)
	defer stopListen()
	lreq, _ := http.NewRequestWithContext(lctx, "POST", murl, strings.NewReader(`{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	lreq.Header.Set("Content-Type", "application/json")
	lreq.Header.Set("Accept", "application/json, text/event-stream")
	lreq.Header.Set("MCP-Protocol-Version", "2026-07-28")
	lreq.Header.Set("Mcp-Method", "subscriptions/listen")
	lresp, err := mhc.Do(lreq)
	if err != nil {
		t.Fatal(err)
	}
	heard := make(chan string, 16)
	go func() {
		defer lresp.Body.Close()
		sc := bufio.NewScanner(lresp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				heard <- d
			}
		}
		close(heard)
	}()
	if first := <-heard; !strings.Contains(first, "notifications/subscriptions/acknowledged") {
		t.Fatalf("the listen began with %s", first)
	}

	// A call on the namespace that stays runs across the reload.
	napped := make(chan string, 1)
	go func() { napped <- call("keep__nap") }()
	time.Sleep(200 * time.Millisecond)

	write(reloadConfig(map[string]string{"alter": "two", "fresh": "hello"}))
	ch, err := r.Reload(ctx)
	if err != nil {
		t.Fatalf("reload: %v\n%s", err, logs)
	}
	if !slices.Equal(ch.Added, []string{"fresh"}) || !slices.Equal(ch.Removed, []string{"gone"}) || !slices.Equal(ch.Restarted, []string{"alter"}) {
		t.Errorf("change %+v", ch)
	}
	if got := <-napped; got != "rested" {
		t.Errorf("the call across the reload: %q", got)
	}
	if got := tools(); !slices.Equal(got, []string{"alter__v", "fresh__v", "keep__nap"}) {
		t.Errorf("after: %v", got)
	}
	if got := call("alter__v"); got != "two" {
		t.Errorf("the changed tool answers %q", got)
	}
	if got := call("gone__v"); !strings.Contains(got, "error") {
		t.Errorf("the removed tool answers %q", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for changed.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if changed.Load() == 0 {
		t.Error("the client heard no tools/list_changed")
	}
	select {
	case m, ok := <-heard:
		if !ok || !strings.Contains(m, "notifications/tools/list_changed") || !strings.Contains(m, `"L"`) {
			t.Errorf("the listen stream got %q (open %v), want a tools list_changed tagged with its id", m, ok)
		}
	case <-time.After(5 * time.Second):
		t.Error("the listen stream heard nothing of the reload")
	}

	// A file that does not check is refused whole, said as config check says it.
	write(`{"mcpServers": {"bad": {"command": "x", "url": "http://y"}}}`)
	if _, err := r.Reload(ctx); err == nil {
		t.Fatal("an invalid file was applied")
	}
	_, want := config.Load(path)
	if !strings.Contains(logs.String(), "the config file was not reloaded") || !strings.Contains(logs.String(), "has both") || want == nil {
		t.Errorf("log:\n%s", logs)
	}
	if got := tools(); !slices.Equal(got, []string{"alter__v", "fresh__v", "keep__nap"}) {
		t.Errorf("after the refused reload: %v", got)
	}
	// The listen is still open: nothing ended it.
	select {
	case m, ok := <-heard:
		if !ok || strings.Contains(m, "notifications/cancelled") {
			t.Errorf("the listen ended after the reloads: %q (open %v)", m, ok)
		}
	default:
	}
	stopListen()
}

// TestReloadWatch: with Watch running, saving the file (replaced by a
// rename, as editors do) reloads it.
func TestReloadWatch(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcpx.json")
	os.WriteFile(path, []byte(reloadConfig(nil)), 0o600)
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	_, log := logBuffer()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gw, err := host.Gateway(ctx, cfg, serverInfo, log)
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	r := host.NewReloader(path, gw, cfg, nil, serverInfo, log)
	done := make(chan error, 1)
	go func() { done <- r.Watch(ctx) }()
	time.Sleep(100 * time.Millisecond) // the watch is set up
	tmp := filepath.Join(dir, ".mcpx.json.tmp")
	os.WriteFile(tmp, []byte(reloadConfig(map[string]string{"later": "x"})), 0o600)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		tools, _ := gw.ListTools(ctx)
		found := false
		for _, tl := range tools {
			found = found || tl.Name == "later__v"
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the saved file was not reloaded")
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// serveWatchedHTTP is serveHTTP with the edge following the gateway's
// changes (as host.HTTP does), so clients hear list_changed.
func serveWatchedHTTP(t *testing.T, gw *gateway.Gateway, rev string) (string, *http.Client, *edge.Edge) {
	w := recordHTTP(t, rev)
	logs, log := logBuffer()
	e := &edge.Edge{Server: &server.Server{NS: gw, Info: serverInfo, TTLMs: 60_000}, Log: log}
	wctx, stop := context.WithCancel(context.Background())
	watching := make(chan struct{})
	go func() { defer close(watching); e.WatchChanges(wctx) }()
	u := wiretest.ServeHTTP(t, e, w, logs)
	t.Cleanup(func() { stop(); <-watching })
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return u, &http.Client{Transport: tr}, e
}
