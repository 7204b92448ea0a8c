package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeSIGHUPReloads: `mcpx serve --config` applies the file again on
// SIGHUP: a namespace added in the file is listed without a restart.
func TestServeSIGHUPReloads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcpx.json")
	tool := func(ns string) string {
		return `"` + ns + `": {"tools": {"v": {"command": "printf", "args": ["x"]}}}`
	}
	os.WriteFile(path, []byte(`{"mcpServers": {}, "mcpx": {"commands": {`+tool("first")+`}}}`), 0o600)
	cmd := exec.Command(mcpxBin(t), "serve", "--listen", "127.0.0.1:0", "--config", path)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	urls := make(chan string, 1)
	logged := make(chan string, 64)
	go func() {
		s := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`at (http://\S+)`)
		for s.Scan() {
			if m := re.FindStringSubmatch(s.Text()); m != nil {
				urls <- m[1]
			}
			select {
			case logged <- s.Text():
			default:
			}
		}
	}()
	var url string
	select {
	case url = <-urls:
	case <-time.After(20 * time.Second):
		t.Fatal("mcpx serve did not say where it serves")
	}
	list := func() string {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/list")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if got := list(); !strings.Contains(got, "first__v") || strings.Contains(got, "second__v") {
		t.Fatalf("before: %s", got)
	}
	os.WriteFile(path, []byte(`{"mcpServers": {}, "mcpx": {"commands": {`+tool("first")+`, `+tool("second")+`}}}`), 0o600)
	cmd.Process.Signal(syscall.SIGHUP)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(list(), "second__v") {
		if time.Now().After(deadline) {
			t.Fatal("SIGHUP did not reload the config")
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code := exitCode(t, cmd, 10*time.Second); code != 0 {
		t.Errorf("exit code %d", code)
	}
}
