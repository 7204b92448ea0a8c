//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/testkit/testbin"
)

// mcpxBin builds the mcpx command, outside the tree, for the tests that
// run it as a process (signals, exit codes).
func mcpxBin(t *testing.T) string {
	t.Helper()
	bin, err := testbin.Build(t.TempDir(), "./cmd/mcpx")
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// exitCode waits for cmd within d and returns its exit code.
func exitCode(t *testing.T, cmd *exec.Cmd, d time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(d):
		cmd.Process.Kill()
		<-done
		t.Fatalf("mcpx did not exit within %v", d)
		return -1
	}
}

// TestServeSIGTERMAnswersAndExitsZero: `mcpx serve` with a tools/call
// running (a countdown of 10 s) answers it, on SIGTERM, with a JSON-RPC
// error saying the server is shutting down, and exits 0 within its
// shutdown deadline.
func TestServeSIGTERMAnswersAndExitsZero(t *testing.T) {
	cmd := exec.Command(mcpxBin(t), "serve", "--listen", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	urls := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`at (http://\S+)`)
		for s.Scan() {
			if m := re.FindStringSubmatch(s.Text()); m != nil {
				select {
				case urls <- m[1]:
				default:
				}
			}
		}
	}()
	var url string
	select {
	case url = <-urls:
	case <-time.After(10 * time.Second):
		t.Fatal("mcpx serve did not say where it serves")
	}
	type answer struct {
		body []byte
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"countdown","arguments":{"seconds":10}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			got <- answer{nil, err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- answer{b, err}
	}()
	time.Sleep(300 * time.Millisecond) // the call is running
	began := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	a := <-got
	var r struct {
		ID    json.RawMessage
		Error *struct {
			Code    int64
			Message string
		}
	}
	if a.err != nil || json.Unmarshal(a.body, &r) != nil || r.Error == nil || r.Error.Code != -32603 || !strings.Contains(r.Error.Message, "shutting down") || string(r.ID) != "5" {
		t.Errorf("the running call was answered %q (%v); want a -32603 error saying the server is shutting down", a.body, a.err)
	}
	if code := exitCode(t, cmd, 10*time.Second); code != 0 {
		t.Errorf("exit code %d after SIGTERM; want 0", code)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("shutdown took %v", d)
	}
}

// TestStdioSIGTERMWithUnreadOutput: `mcpx stdio` whose client stops
// reading its stdout (answers pile up in the pipe until writes block)
// still exits on SIGTERM, with 0, within its shutdown deadline: writes it
// cannot make are given up.
func TestStdioSIGTERMWithUnreadOutput(t *testing.T) {
	cmd := exec.Command(mcpxBin(t), "stdio")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe() // never read
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	cmd.Stdout = outW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	defer cmd.Process.Kill()
	go func() {
		// Far more answers than a pipe holds (tools/list is over 1 kB).
		for i := range 2000 {
			if _, err := fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`+"\n", i); err != nil {
				return
			}
		}
	}()
	time.Sleep(time.Second) // the pipe is full, writes block
	began := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	if code := exitCode(t, cmd, 8*time.Second); code != 0 {
		t.Errorf("exit code %d after SIGTERM; want 0", code)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("exiting took %v", d)
	}
}
