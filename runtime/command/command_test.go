package command

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

func TestArgs(t *testing.T) {
	in := map[string]json.RawMessage{
		"path": json.RawMessage(`"a b; rm -rf /"`), "n": json.RawMessage(`3`), "flag": json.RawMessage(`true`),
		"files": json.RawMessage(`["x","y"]`), "obj": json.RawMessage(`{"a":1}`),
	}
	got, err := Args([]string{"-n", "{n}", "--path={path}", "{path}", "{files}", "{missing}", "--v={flag}", "--m={missing}"}, in)
	want := []string{"-n", "3", "--path=a b; rm -rf /", "a b; rm -rf /", "x", "y", "--v=true", "--m="}
	if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("%q %v", got, err)
	}
	if _, err := Args([]string{"{obj}"}, in); err == nil {
		t.Error("an object became an argument")
	}
}

func run(t *testing.T, tool Tool, args string) *mcp.CallToolResult {
	t.Helper()
	c, err := Catalog([]Tool{tool})
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.CallTool(context.Background(), &mcp.CallToolRequestParams{Name: tool.Name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func text(r *mcp.CallToolResult) string { return r.Content[0].Value.(*mcp.TextContent).Text }

func TestSuccess(t *testing.T) {
	r := run(t, Tool{Name: "greet", Command: "printf", Args: []string{"hello %s", "{who}"},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"who":{"type":"string"}},"required":["who"]}`)}, `{"who":"$(whoami); ada"}`)
	if r.IsError != nil || text(r) != "hello $(whoami); ada" {
		t.Fatalf("%+v %q", r.IsError, text(r))
	}
}

func TestFailure(t *testing.T) {
	r := run(t, Tool{Name: "fail", Command: "sh", Args: []string{"-c", "echo partial; echo 'it broke' >&2; exit 3"}}, `{}`)
	if r.IsError == nil || !strings.Contains(text(r), "exited with code 3") || !strings.Contains(text(r), "it broke") {
		t.Fatalf("%q", text(r))
	}
	r = run(t, Tool{Name: "missing", Command: "/nonexistent/program"}, `{}`)
	if r.IsError == nil || !strings.Contains(text(r), "could not be run") {
		t.Fatalf("%q", text(r))
	}
}

// TestTimeoutKillsTheGroup: past its timeout the run ends, and so do the
// children it started.
func TestTimeoutKillsTheGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	r := run(t, Tool{Name: "hang", Command: "sh", Args: []string{"-c", "sleep 30 & echo $! > " + pidFile + "; wait"}, Timeout: 300 * time.Millisecond}, `{}`)
	if r.IsError == nil || !strings.Contains(text(r), "did not finish within 300ms") {
		t.Fatalf("%q", text(r))
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %s", time.Since(start))
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	deadline := time.Now().Add(2 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the child %d outlived the timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestOutputCapped(t *testing.T) {
	r := run(t, Tool{Name: "loud", Command: "sh", Args: []string{"-c", "yes | head -c 100000"}, MaxOutput: 1000}, `{}`)
	if r.IsError != nil || len(text(r)) > 1100 || !strings.Contains(text(r), "output cut at 1000 bytes") {
		t.Fatalf("%d %q", len(text(r)), text(r)[len(text(r))-60:])
	}
}
