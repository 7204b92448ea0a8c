package upstream

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
)

// secrets are in the specs of TestDownSaysWhy and must be in no error.
var secrets = []string{"s3cret", "hunter2", "alice", "#frag"}

// TestDownSaysWhy: a client's call to an upstream that cannot be reached
// through the gateway fails with an error naming the upstream and giving
// the cause (command not found, exit status, connection refused), with no
// environment value, header value, userinfo or query in it.
func TestDownSaysWhy(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	for _, tc := range []struct {
		spec Spec
		want []string
	}{
		{Spec{Name: "ghost", Command: "/nonexistent/mcp-server-ghost", Env: map[string]string{"GHOST_TOKEN": "s3cret-env"}},
			[]string{`cannot start command "/nonexistent/mcp-server-ghost": no such file or directory`}},
		{Spec{Name: "nopath", Command: "mcp-server-not-in-path-" + strings.Repeat("q", 8)},
			[]string{`command "mcp-server-not-in-path-qqqqqqqq" not found in $PATH`}},
		{newProc(t, "quitter", "raw:exit=3").spec, []string{"exited (exit status 3)"}},
		{Spec{Name: "refused", URL: "http://alice:hunter2@" + closed + "/mcp?key=s3cret-query#frag", Headers: map[string]string{"Authorization": "Bearer s3cret-header"}},
			[]string{`"http://` + closed + `/mcp"`, "connection refused"}},
	} {
		t.Run(tc.spec.Name, func(t *testing.T) {
			defer noLeaks(t)()
			tc.spec.Timeout = 5 * time.Second
			g := gateway.New(testLog(t))
			g.RetryMin = time.Hour // one load: the first failure's reason stays
			defer g.Close()
			if err := g.Add(New(tc.spec, mcpxInfo, testLog(t)), gateway.Options{}); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if err := g.Ready(ctx); err != nil {
				t.Fatal(err)
			}
			_, err := g.CallTool(ctx, &mcp.CallToolRequestParams{Name: tc.spec.Name + "__echo"})
			if err == nil {
				t.Fatal("the call succeeded")
			}
			t.Logf("the client's error: %v", err)
			for _, w := range append(tc.want, `upstream "`+tc.spec.Name+`"`) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q", w)
				}
			}
			for _, s := range secrets {
				if strings.Contains(err.Error(), s) {
					t.Errorf("the error gives away %q", s)
				}
			}
		})
	}
}

// TestStoppedSaysWhy: an upstream mcpx stopped for an oversized line
// fails the call it was answering saying so, and so does a call while
// mcpx waits to restart it; the restarted upstream works.
func TestStoppedSaysWhy(t *testing.T) {
	defer noLeaks(t)()
	p := newProc(t, "big", "raw")
	c := New(p.spec, mcpxInfo, testLog(t))
	defer c.Close()
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	pid := pidOf(t, c)
	const why = "mcpx stopped the upstream process: it wrote a line over 16 MiB on stdout"
	err := within(t, 10*time.Second, "a call answered with an oversized line", func() error {
		_, err := mcp.CallTool(ctx, c, &mcp.CallToolRequestParams{Name: "bigline"})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), `upstream "big"`) || !strings.Contains(err.Error(), why) {
		t.Errorf("the call returned %v, want an error naming the upstream saying %q", err, why)
	}
	waitGone(t, pid, 2*time.Second)
	// During the backoff, as the gateway's next load sees it.
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		c.mu.Lock()
		gone := c.c == nil
		c.mu.Unlock()
		if gone {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the client did not notice its upstream was stopped")
		}
	}
	c.mu.Lock()
	c.retryAt = time.Now().Add(time.Minute) // hold the backoff for the check
	c.mu.Unlock()
	if _, err := c.Capabilities(ctx); err == nil || !strings.Contains(err.Error(), `upstream "big" is unavailable (`+why+")") {
		t.Errorf("during the backoff: %v, want %q", err, why)
	}
	c.mu.Lock()
	c.retryAt = time.Time{}
	c.mu.Unlock()
	if err := echo(ctx, c); err != nil {
		t.Errorf("after the backoff: %v", err)
	}
}
