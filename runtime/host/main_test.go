package host_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/catalog"
	"github.com/mcpx-dev/mcpx/runtime/host"
)

// TestMain lets the test binary be an upstream of the gateways these tests
// build: with MCPX_HOST_TEST_UPSTREAM set it serves, on stdio, the tools
// "echo" and "crash" (which makes the process exit with status 3), and
// first appends a line to the file MCPX_HOST_TEST_MARK names, if any, so
// that a test can tell whether and how often it was started.
func TestMain(m *testing.M) {
	if os.Getenv("MCPX_HOST_TEST_UPSTREAM") == "" {
		os.Exit(m.Run())
	}
	if mark := os.Getenv("MCPX_HOST_TEST_MARK"); mark != "" {
		f, err := os.OpenFile(mark, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			os.Exit(4)
		}
		f.WriteString("started\n")
		f.Close()
	}
	c := catalog.New()
	c.AddTool(mcp.Tool{Name: "echo"}, func(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.ContentBlock{{Value: &mcp.TextContent{Text: "echo"}}}}, nil
	})
	c.AddTool(mcp.Tool{Name: "crash"}, func(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
		os.Exit(3)
		return nil, nil
	})
	host.Stdio(context.Background(), host.Config{NS: c, Info: mcp.Implementation{Name: "host-test-upstream", Version: "1"}}, os.Stdin, os.Stdout)
	os.Exit(0)
}

// self is the config entry that runs this test binary as an upstream, with
// env added.
func self(t *testing.T, env map[string]string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e := map[string]string{"MCPX_HOST_TEST_UPSTREAM": "1"}
	for k, v := range env {
		e[k] = v
	}
	b, err := json.Marshal(map[string]any{"command": exe, "env": e})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
