//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// serveLines runs `mcpx serve args...` until it says where it serves,
// and returns its standard error so far (and after, while it runs), and a
// stop that SIGTERMs it and waits.
func serveLines(t *testing.T, bin string, args ...string) (lines func() []string, stop func()) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []string
	serving := make(chan struct{})
	go func() {
		s := bufio.NewScanner(stderr)
		once := sync.Once{}
		for s.Scan() {
			mu.Lock()
			got = append(got, s.Text())
			mu.Unlock()
			if strings.Contains(s.Text(), "serving") {
				once.Do(func() { close(serving) })
			}
		}
	}()
	select {
	case <-serving:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("mcpx serve did not say where it serves")
	}
	return func() []string {
			mu.Lock()
			defer mu.Unlock()
			return append([]string(nil), got...)
		}, func() {
			cmd.Process.Signal(syscall.SIGTERM)
			if code := exitCode(t, cmd, 10*time.Second); code != 0 {
				t.Errorf("mcpx serve exited %d", code)
			}
		}
}

// TestAdminOffByDefault: without --admin, mcpx serve opens no admin
// listener (nothing logs one) and serves no /metrics beside /mcp.
func TestAdminOffByDefault(t *testing.T) {
	lines, stop := serveLines(t, mcpxBin(t))
	defer stop()
	var url string
	for _, l := range lines() {
		if strings.Contains(l, "admin") {
			t.Errorf("an admin listener without --admin: %s", l)
		}
		if m := regexp.MustCompile(`at (http://\S+)/mcp`).FindStringSubmatch(l); m != nil {
			url = m[1]
		}
	}
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("/metrics on the MCP listener: %d; want 404", resp.StatusCode)
	}
}

// TestAdminFlagAndJSONLogs: --admin 0 (a bare port) listens on loopback
// and serves the four paths; --log-format json writes every line of
// mcpx's log as a JSON object, and --log-level warn drops the info lines.
func TestAdminFlagAndJSONLogs(t *testing.T) {
	bin := mcpxBin(t)
	lines, stop := serveLines(t, bin, "--admin", "0", "--log-format", "json")
	var admin string
	for _, l := range lines() {
		if !strings.HasPrefix(l, "{") {
			continue // "mcpx: serving ..." is mcpx's own, not its log
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Errorf("a log line is not JSON: %s", l)
		}
		if u, _ := rec["url"].(string); strings.Contains(rec["msg"].(string), "admin") {
			admin = u
		}
	}
	if !strings.HasPrefix(admin, "http://127.0.0.1:") {
		t.Fatalf("the admin listener is at %q; want loopback (lines: %q)", admin, lines())
	}
	for path, want := range map[string]string{"/healthz": "ok", "/readyz": `"ready":true`, "/metrics": "mcpx_requests_in_flight", "/debug/pprof/": "goroutine"} {
		resp, err := http.Get(admin + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Contains(b, []byte(want)) {
			t.Errorf("%s: %d, want 200 with %q: %.200s", path, resp.StatusCode, want, b)
		}
	}
	stop()

	lines, stop = serveLines(t, bin, "--admin", "0", "--log-level", "warn")
	defer stop()
	for _, l := range lines() {
		if strings.Contains(l, "level=INFO") {
			t.Errorf("--log-level warn logged %s", l)
		}
	}
}

// TestMetricsFollowReload: a namespace a reload adds (here by --watch)
// gets its own label in /metrics; before the fix it counted as "other"
// until a restart. The first namespace, a contributed command's, has its
// label from the start.
func TestMetricsFollowReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcpx.json")
	tool := func(ns string) string {
		return `"` + ns + `": {"tools": {"v": {"command": "printf", "args": ["x"]}}}`
	}
	os.WriteFile(path, []byte(`{"mcpServers": {}, "mcpx": {"commands": {`+tool("first")+`}}}`), 0o600)
	lines, stop := serveLines(t, mcpxBin(t), "--config", path, "--watch", "--admin", "0")
	defer stop()
	var url, admin string
	for _, l := range lines() {
		if m := regexp.MustCompile(`at (http://\S+/mcp)`).FindStringSubmatch(l); m != nil {
			url = m[1]
		}
		if m := regexp.MustCompile(`admin listener.* url=(http://\S+)`).FindStringSubmatch(l); m != nil {
			admin = m[1]
		}
	}
	if url == "" || admin == "" {
		t.Fatalf("no MCP or admin URL in %q", lines())
	}
	call := func(name string) string {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", name)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	scrape := func() string {
		resp, err := http.Get(admin + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	call("first__v")
	if m := scrape(); !strings.Contains(m, `namespace="first"`) {
		t.Errorf("a contributed command's namespace has no label of its own:\n%s", grepLines(m, "mcpx_requests_total"))
	}
	os.WriteFile(path, []byte(`{"mcpServers": {}, "mcpx": {"commands": {`+tool("first")+`, `+tool("second")+`}}}`), 0o600)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(call("second__v"), `"x"`) {
		if time.Now().After(deadline) {
			t.Fatal("--watch did not reload the config")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if m := scrape(); !strings.Contains(m, `namespace="second"`) {
		t.Errorf("the reloaded namespace has no label of its own:\n%s", grepLines(m, "mcpx_requests_total"))
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestLogFlagsRefuseBadValues: a --log-format or --log-level mcpx does
// not know is a usage error (exit 2) naming what it wants.
func TestLogFlagsRefuseBadValues(t *testing.T) {
	for _, args := range [][]string{{"--log-format", "xml"}, {"--log-level", "loud"}} {
		var stderr bytes.Buffer
		code := runServe("stdio", args, strings.NewReader(""), io.Discard, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), "want") {
			t.Errorf("mcpx stdio %v: exit %d, %q; want 2 and what it wants", args, code, stderr.String())
		}
	}
	var stderr bytes.Buffer
	if code := runServe("serve", []string{"--admin", "host"}, strings.NewReader(""), io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), "--admin") {
		t.Errorf("mcpx serve --admin host: exit %d, %q; want 2 naming --admin", code, stderr.String())
	}
}
