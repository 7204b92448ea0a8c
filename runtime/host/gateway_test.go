package host_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/config"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/runtime/host"
	"github.com/mcpx-dev/mcpx/testkit/testbin"
)

// fixture builds the mcpx-fixture binary.
func fixture(t *testing.T) string {
	t.Helper()
	bin, err := testbin.Build(t.TempDir(), "./cmd/mcpx-fixture")
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestGatewaySurvivesBrokenUpstreams: one upstream never starts, one never
// answers, one works. The working one is served as if alone, the others'
// calls fail with errors naming them, and closing the gateway leaves no
// process and no goroutine behind.
func TestGatewaySurvivesBrokenUpstreams(t *testing.T) {
	bin := fixture(t)
	marker := fmt.Sprintf("%d.%d", os.Getpid(), time.Now().UnixNano()%1000) // finds the mute upstream's process
	cfg, err := config.Parse("faults.json", []byte(`{"mcpServers": {
		"good":  {"command": "`+bin+`"},
		"dead":  {"command": "/nonexistent/mcp-server", "mcpx": {"timeout": "300ms"}},
		"mute":  {"command": "sleep", "args": ["6`+marker+`"], "mcpx": {"timeout": "300ms"}}
	}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	ctx := context.Background()
	g, err := host.Gateway(ctx, cfg, mcp.Implementation{Name: "mcpx", Version: "test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := g.ListTools(ctx)
	if err != nil {
		t.Fatalf("tools/list with two broken upstreams: %v", err)
	}
	found := false
	for _, tl := range tools {
		found = found || tl.Name == "good__test_simple_text"
		if strings.HasPrefix(tl.Name, "dead__") || strings.HasPrefix(tl.Name, "mute__") {
			t.Errorf("a broken upstream contributed %s", tl.Name)
		}
	}
	if !found {
		t.Fatalf("the working upstream's tools are missing: %d tools", len(tools))
	}
	r, err := g.CallTool(ctx, &mcp.CallToolRequestParams{Name: "good__test_simple_text"})
	if err != nil || len(r.Content) == 0 {
		t.Fatalf("call to the working upstream: %v", err)
	}
	for _, name := range []string{"dead__anything", "mute__anything"} {
		_, err := g.CallTool(ctx, &mcp.CallToolRequestParams{Name: name})
		if ns, _, _ := strings.Cut(name, "__"); err == nil || !strings.Contains(err.Error(), ns) {
			t.Errorf("%s: err = %v, want one naming the upstream %q", name, err, ns)
		}
	}
	if err := g.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if out, _ := exec.Command("pgrep", "-f", "sleep 6"+marker).Output(); len(out) > 0 {
		t.Errorf("the mute upstream's process is still running: %s", out)
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after Close, %d before", n, before)
	}
}

// TestCrashSaysWhy: an upstream that was running and crashed makes the
// client's calls fail with one sentence that names it once and says why
// (its exit status), both the call that met the crash and a call while it
// is down, not "the upstream reported it is down".
func TestCrashSaysWhy(t *testing.T) {
	cfg, err := config.Parse("crash.json", []byte(`{"mcpServers": {"crashy": `+self(t, nil)+`}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	g, err := host.Gateway(ctx, cfg, mcp.Implementation{Name: "mcpx", Version: "test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := g.CallTool(ctx, &mcp.CallToolRequestParams{Name: "crashy__echo"}); err != nil {
		t.Fatalf("before the crash: %v", err)
	}
	check := func(what string, err error) {
		t.Helper()
		t.Logf("%s: %v", what, err)
		switch {
		case err == nil:
			t.Errorf("%s succeeded", what)
		case !strings.Contains(err.Error(), "exit status 3"):
			t.Errorf("%s: %v; want the cause, exit status 3", what, err)
		case strings.Count(err.Error(), `upstream "crashy"`) != 1:
			t.Errorf("%s: %v; want the upstream named once", what, err)
		case strings.Contains(err.Error(), "reported it is down"):
			t.Errorf("%s: %v; want the cause, not the event", what, err)
		}
	}
	_, err = g.CallTool(ctx, &mcp.CallToolRequestParams{Name: "crashy__crash"})
	check("the call that crashed it", err)
	// The gateway hears "down" and withdraws the tools (it restarts the
	// upstream after its backoff, 1 s at first).
	deadline := time.Now().Add(time.Second)
	for {
		tools, err := g.ListTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(tools) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the crashed upstream's tools are still listed: %d", len(tools))
		}
		time.Sleep(5 * time.Millisecond)
	}
	_, err = g.CallTool(ctx, &mcp.CallToolRequestParams{Name: "crashy__echo"})
	check("a call while it is down", err)
}

// TestHungUpstreamDoesNotHoldClients: an upstream that never answers its
// initialize (with the default 60 s timeout) does not hold a client's
// capabilities and tools/list beyond the gateway's first-load bound; the
// upstream that answers is listed.
func TestHungUpstreamDoesNotHoldClients(t *testing.T) {
	cfg, err := config.Parse("hung.json", []byte(`{"mcpServers": {
		"good": `+self(t, nil)+`,
		"mute": {"command": "sleep", "args": ["30"]}
	}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start := time.Now()
	g, err := host.Gateway(ctx, cfg, mcp.Implementation{Name: "mcpx", Version: "test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	caps := g.Capabilities()
	tools, err := g.ListTools(ctx)
	if d := time.Since(start); d > gateway.DefaultFirstWait+time.Second {
		t.Errorf("capabilities and tools/list took %s; want at most %s and a little", d, gateway.DefaultFirstWait)
	}
	if err != nil || caps.Tools == nil {
		t.Fatalf("tools/list: %v; capabilities %+v", err, caps)
	}
	if len(tools) != 2 || !strings.HasPrefix(tools[0].Name, "good__") {
		t.Errorf("tools: %+v; want good's two", tools)
	}
}

// TestLazyStartsOnFirstRequest: a lazy server (the default) is not started
// when the gateway is built; a client's first contact (Capabilities, what
// initialize asks) starts it, and the first list lists its tools. An eager
// one is started when the gateway is built.
func TestLazyStartsOnFirstRequest(t *testing.T) {
	dir := t.TempDir()
	lazyMark, eagerMark := dir+"/lazy", dir+"/eager"
	cfg, err := config.Parse("lazy.json", []byte(`{"mcpServers": {
		"lazy": `+self(t, map[string]string{"MCPX_HOST_TEST_MARK": lazyMark})+`,
		"eager": `+strings.Replace(self(t, map[string]string{"MCPX_HOST_TEST_MARK": eagerMark}), "{", `{"mcpx": {"start": "eager"},`, 1)+`
	}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	starts := func(mark string) int {
		b, _ := os.ReadFile(mark)
		return strings.Count(string(b), "started")
	}
	ctx := context.Background()
	g, err := host.Gateway(ctx, cfg, mcp.Implementation{Name: "mcpx", Version: "test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if n := starts(eagerMark); n != 1 {
		t.Errorf("the eager server was started %d times at launch, want 1", n)
	}
	time.Sleep(200 * time.Millisecond)
	if n := starts(lazyMark); n != 0 {
		t.Fatalf("the lazy server was started before any client came (%d times)", n)
	}
	if caps := g.Capabilities(); caps.Tools == nil {
		t.Errorf("capabilities: %+v; want tools", caps)
	}
	if n := starts(lazyMark); n != 1 {
		t.Errorf("the lazy server was started %d times by a client's first contact, want 1", n)
	}
	start := time.Now()
	tools, err := g.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the first list took %s", time.Since(start))
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "lazy__echo") || !slices.Contains(names, "eager__echo") {
		t.Errorf("tools after the first list: %v; want both servers'", names)
	}
	if n := starts(lazyMark); n != 1 {
		t.Errorf("the lazy server was started %d times in all, want 1", n)
	}
}
