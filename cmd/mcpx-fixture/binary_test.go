package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// buildFixture builds the mcpx-fixture binary into a temporary directory.
func buildFixture(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "mcpx-fixture")
	cmd := exec.Command(goBin, "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestBinaryStdio runs the built binary with no flags, as a gateway will
// run it as a stdio upstream: initialize, initialized, tools/list, then
// EOF on stdin ends it with exit code 0.
func TestBinaryStdio(t *testing.T) {
	cmd := exec.Command(buildFixture(t))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()

	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 1<<20)
	send := func(msg string) {
		t.Helper()
		if _, err := io.WriteString(stdin, msg+"\n"); err != nil {
			t.Fatalf("writing %s: %v (stderr: %s)", msg, err, stderr.String())
		}
	}
	recv := func(v any) {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("no answer: %v (stderr: %s)", lines.Err(), stderr.String())
		}
		if err := json.Unmarshal(lines.Bytes(), v); err != nil {
			t.Fatalf("answer %s: %v", lines.Bytes(), err)
		}
	}

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	var init struct {
		ID     int `json:"id"`
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
			ServerInfo      struct {
				Name string `json:"name"`
			} `json:"serverInfo"`
			Capabilities map[string]any `json:"capabilities"`
		} `json:"result"`
	}
	recv(&init)
	if init.ID != 1 || init.Result.ProtocolVersion != "2025-11-25" || init.Result.ServerInfo.Name != serverName {
		t.Errorf("initialize answer = %+v, want id 1, 2025-11-25 and server %s", init, serverName)
	}
	if _, ok := init.Result.Capabilities["tools"]; !ok {
		t.Errorf("initialize declares no tools capability: %v", init.Result.Capabilities)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	var list struct {
		ID     int `json:"id"`
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"result"`
	}
	recv(&list)
	names := map[string]bool{}
	for _, tool := range list.Result.Tools {
		names[tool.Name] = true
	}
	if list.ID != 2 {
		t.Errorf("tools/list answered id %d, want 2", list.ID)
	}
	for _, want := range []string{"test_simple_text", "test_image_content", "test_error_handling", "test_tool_with_progress"} {
		if !names[want] {
			t.Errorf("tools/list has no %s (has %d tools)", want, len(list.Result.Tools))
		}
	}

	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("after EOF on stdin: %v (stderr: %s)", err, stderr.String())
	}
}

// TestBinaryHTTP runs the built binary with --listen on a free port: it
// prints the endpoint's URL on stderr, answers initialize there, and
// exits 0 on SIGINT.
func TestBinaryHTTP(t *testing.T) {
	cmd := exec.Command(buildFixture(t), "--listen", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()

	urls := make(chan string, 1)
	go func() { // reads stderr to its end, so Wait may follow the close of urls
		re := regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+/mcp`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if u := re.FindString(sc.Text()); u != "" {
				urls <- u
			}
		}
		close(urls)
	}()
	url, ok := <-urls
	if !ok {
		t.Fatalf("no URL on stderr; exit: %v", cmd.Wait())
	}
	exited := false
	defer func() { // on a failure below: stop the server before returning
		if !exited {
			cmd.Process.Kill()
			for range urls {
			}
			cmd.Wait()
		}
	}()

	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"name":"`+serverName+`"`) {
		t.Errorf("initialize over HTTP: %s %s, want 200 and server %s", resp.Status, body, serverName)
	}

	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	for range urls { // stderr closed: the process has ended
	}
	exited = true
	if err := cmd.Wait(); err != nil {
		t.Errorf("after SIGINT: %v", err)
	}
}
