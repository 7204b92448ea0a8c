package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
)

// within runs f and fails the test when it takes longer than d.
func within[T any](t *testing.T, d time.Duration, what string, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(d):
		t.Fatalf("%s did not return within %s", what, d)
		panic("unreachable")
	}
}

func echo(ctx context.Context, c *Client) error {
	res, err := mcp.CallTool(ctx, c, &mcp.CallToolRequestParams{Name: "echo", Arguments: []byte(`{"text":"again"}`)})
	if err != nil {
		return err
	}
	if txt, ok := res.Content[0].Value.(*mcp.TextContent); !ok || txt.Text != "echo: again" {
		return errors.New("wrong echo: " + mustJSONStringNoT(res))
	}
	return nil
}

func mustJSONStringNoT(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// pidOf is the pid of the upstream's current process.
func pidOf(t *testing.T, c *Client) int {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.c.(*process)
	if !ok {
		t.Fatalf("the upstream has no process (%T)", c.c)
	}
	return p.cmd.Process.Pid
}

// alive reports whether pid is a process that is not a zombie.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

func waitGone(t *testing.T, pid int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Errorf("process %d is still running %s after Close", pid, d)
			_ = syscall.Kill(pid, syscall.SIGKILL)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func drain(ch <-chan string) []string {
	var got []string
	for {
		select {
		case s := <-ch:
			got = append(got, s)
		default:
			return got
		}
	}
}

// TestCrashMidCall: an upstream that exits during tools/call fails that
// call with an error naming it; calls during the backoff say when mcpx
// retries; the next call after it restarts the upstream and works.
func TestCrashMidCall(t *testing.T) {
	leakcheck.Check(t)
	p := newProc(t, "crashy", "gosdk:2025-11-25")
	c := New(p.spec, mcpxInfo, testLog(t))
	defer c.Close()
	ctx := context.Background()
	if err := echo(ctx, c); err != nil {
		t.Fatal(err)
	}
	first := pidOf(t, c)
	err := within(t, 5*time.Second, "a call whose upstream crashed", func() error {
		_, err := mcp.CallTool(ctx, c, &mcp.CallToolRequestParams{Name: "crash"})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), `"crashy"`) || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("the crashed call returned %v, want an error naming the upstream and saying it exited", err)
	}
	t.Logf("crashed call: %v", err)
	// Right after the crash mcpx waits before restarting.
	time.Sleep(20 * time.Millisecond) // the watcher notices
	if err := echo(ctx, c); err == nil || !strings.Contains(err.Error(), "retries in") || !strings.Contains(err.Error(), `"crashy"`) {
		t.Errorf("a call during the backoff returned %v, want one saying when mcpx retries", err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		err := echo(ctx, c)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the upstream never came back: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if second := pidOf(t, c); second == first {
		t.Errorf("the upstream was not restarted (pid %d)", second)
	}
	if got := strings.Join(drain(c.Changes()), ","); got != "down,up" {
		t.Errorf("Changes = %q, want down,up", got)
	}
}

// TestCrashWithGrandchildHoldingStdout: a crash is noticed even when a
// process the upstream started still holds its stdout.
func TestCrashWithGrandchildHoldingStdout(t *testing.T) {
	leakcheck.Check(t)
	p := newProc(t, "crashy-parent", "grandchild:inherit")
	c := New(p.spec, mcpxInfo, testLog(t))
	defer c.Close()
	ctx := context.Background()
	if err := echo(ctx, c); err != nil {
		t.Fatal(err)
	}
	pids := grandchildren(t, p)
	start := time.Now()
	err := within(t, 8*time.Second, "a call whose upstream crashed", func() error {
		_, err := mcp.CallTool(ctx, c, &mcp.CallToolRequestParams{Name: "crash"})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "exited") || time.Since(start) > 2*time.Second {
		t.Errorf("the crashed call returned %v after %s, want an error saying the upstream exited, at once", err, time.Since(start).Round(time.Millisecond))
	}
	for _, pid := range pids {
		waitGone(t, pid, 3*time.Second)
	}
}

// grandchildren are the pids the grandchild mode marked.
func grandchildren(t *testing.T, p *proc) []int {
	t.Helper()
	p.waitMark(t, "pid ", 3*time.Second)
	b, _ := os.ReadFile(p.marks)
	var pids []int
	for _, l := range strings.Split(string(b), "\n") {
		if s, ok := strings.CutPrefix(l, "pid "); ok {
			pid, err := strconv.Atoi(s)
			if err != nil {
				t.Fatal(err)
			}
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestHang: an upstream that never answers anything fails the call after
// Spec.Timeout with an error naming it, handshake included; Close works.
func TestHang(t *testing.T) {
	leakcheck.Check(t)
	p := newProc(t, "sleepy", "hang")
	p.spec.Timeout = 200 * time.Millisecond
	c := New(p.spec, mcpxInfo, testLog(t))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	err := within(t, 6*time.Second, "a call to an upstream that never answers", func() error { return echo(ctx, c) })
	if err == nil || !strings.Contains(err.Error(), `"sleepy"`) || !strings.Contains(err.Error(), "did not answer") || !strings.Contains(err.Error(), "within") {
		t.Errorf("got %v after %s, want an error naming the upstream saying it did not answer within the timeout", err, time.Since(start))
	}
	t.Logf("after %s: %v", time.Since(start).Round(time.Millisecond), err)
	within(t, 5*time.Second, "Close", c.Close)
}

// TestDeaf: an upstream that stops reading its input cannot hold a call
// beyond its timeout, even when the request does not fit in the pipe; nor
// the call after it.
func TestDeaf(t *testing.T) {
	leakcheck.Check(t)
	p := newProc(t, "deaf", "deaf:2025-06-18")
	p.spec.Timeout = 300 * time.Millisecond
	c := New(p.spec, mcpxInfo, testLog(t))
	defer c.Close()
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	big := json.RawMessage(`{"text":"` + strings.Repeat("x", 1<<20) + `"}`) // far beyond a pipe's 64 kB
	err := within(t, 5*time.Second, "a call to an upstream that stopped reading", func() error {
		_, err := mcp.CallTool(ctx, c, &mcp.CallToolRequestParams{Name: "echo", Arguments: big})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), `upstream "deaf" did not answer tools/call within 300ms`) {
		t.Errorf("got %v, want the timeout naming the upstream", err)
	}
	within(t, 5*time.Second, "the next call", func() error {
		_, err := mcp.CallTool(ctx, c, &mcp.CallToolRequestParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)})
		return err
	})
}

// TestHangMidCall: an upstream that answers the handshake but not a tool
// call fails the call after Spec.Timeout, naming it, and cancels upstream.
func TestHangMidCall(t *testing.T) {
	leakcheck.Check(t)
	p := newProc(t, "slow", "gosdk:2025-06-18")
	p.spec.Timeout = 200 * time.Millisecond
	c := New(p.spec, mcpxInfo, testLog(t))
	defer c.Close()
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := mcp.CallTool(ctx, c, &mcp.CallToolRequestParams{Name: "sleep"})
	if err == nil || !strings.Contains(err.Error(), `upstream "slow" did not answer tools/call within 200ms`) {
		t.Errorf("got %v, want the timeout naming the upstream", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the timed-out call took %s", d)
	}
	p.waitMark(t, "sleep cancelled", 3*time.Second)
	if err := echo(ctx, c); err != nil {
		t.Errorf("after a timeout: %v", err)
	}
}

// TestGarbage: lines on stdout that are not JSON-RPC are ignored; the
// upstream then works.
func TestGarbage(t *testing.T) {
	leakcheck.Check(t)
	p := newProc(t, "noisy", "garbage:2025-06-18")
	c := New(p.spec, mcpxInfo, testLog(t))
	defer c.Close()
	if err := within(t, 5*time.Second, "a call to a noisy upstream", func() error { return echo(context.Background(), c) }); err != nil {
		t.Fatal(err)
	}
}

// TestGarbageOnly: an upstream that answers with garbage only fails with
// a clear error naming it.
func TestGarbageOnly(t *testing.T) {
	leakcheck.Check(t)
	p := newProc(t, "babbler", "garbagehang")
	p.spec.Timeout = 200 * time.Millisecond
	c := New(p.spec, mcpxInfo, testLog(t))
	err := within(t, 6*time.Second, "a call to a babbling upstream", func() error { return echo(context.Background(), c) })
	if err == nil || !strings.Contains(err.Error(), `"babbler"`) {
		t.Errorf("got %v, want an error naming the upstream", err)
	}
	t.Logf("%v", err)
	within(t, 5*time.Second, "Close", c.Close)
}

// TestChatty: an upstream that sends a notification and a ping before it
// answers the handshake is served.
func TestChatty(t *testing.T) {
	leakcheck.Check(t)
	p := newProc(t, "chatty", "chatty:2025-11-25")
	c := New(p.spec, mcpxInfo, testLog(t))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := within(t, 5*time.Second, "a call to an upstream that talks first", func() error { return echo(ctx, c) }); err != nil {
		t.Error(err)
	}
	cancel()
	within(t, 5*time.Second, "Close", c.Close)
}

// TestCommandNotFound: the error names the upstream and the command, and
// restarts back off, doubling; a failed start sends no "down" (the error
// says why, a gateway's reason must not be the bare event).
func TestCommandNotFound(t *testing.T) {
	defer noLeaks(t)()
	c := New(Spec{Name: "ghost", Command: "/nonexistent/mcp-server-ghost"}, mcpxInfo, testLog(t))
	defer c.Close()
	ctx := context.Background()
	err := echo(ctx, c)
	if err == nil || !strings.Contains(err.Error(), `"ghost"`) || !strings.Contains(err.Error(), "/nonexistent/mcp-server-ghost") {
		t.Fatalf("got %v, want an error naming the upstream and the command", err)
	}
	err = echo(ctx, c)
	if err == nil || !strings.Contains(err.Error(), "retries in") || !strings.Contains(err.Error(), "/nonexistent/mcp-server-ghost") {
		t.Errorf("an immediate second call: %v, want one saying when mcpx retries", err)
	}
	time.Sleep(minBackoff + 20*time.Millisecond)
	if err := echo(ctx, c); err == nil || strings.Contains(err.Error(), "retries in") {
		t.Errorf("after the backoff: %v, want a new attempt", err)
	}
	c.mu.Lock()
	b := c.backoff
	c.mu.Unlock()
	if b != 2*minBackoff {
		t.Errorf("backoff after two failures = %s, want %s", b, 2*minBackoff)
	}
	if got := drain(c.Changes()); len(got) != 0 {
		t.Errorf("Changes = %q, want none", got)
	}
}

// TestCloseLeavesNothing: Close ends the upstream and everything it
// started, promptly, and no goroutine stays behind.
func TestCloseLeavesNothing(t *testing.T) {
	leakcheck.Check(t)
	for _, mode := range []string{"grandchild:detached", "grandchild:inherit"} {
		t.Run(mode, func(t *testing.T) {
			base := runtime.NumGoroutine()
			p := newProc(t, "parent", mode)
			c := New(p.spec, mcpxInfo, testLog(t))
			if err := echo(context.Background(), c); err != nil {
				t.Fatal(err)
			}
			pids := append(grandchildren(t, p), pidOf(t, c))
			start := time.Now()
			if err := within(t, 5*time.Second, "Close", c.Close); err != nil {
				t.Errorf("Close: %v", err)
			}
			t.Logf("Close took %s", time.Since(start).Round(time.Millisecond))
			for _, pid := range pids {
				waitGone(t, pid, 500*time.Millisecond)
			}
			if err := echo(context.Background(), c); err == nil || !strings.Contains(err.Error(), "closed") {
				t.Errorf("a call after Close: %v", err)
			}
			settle(t, base)
		})
	}
}
