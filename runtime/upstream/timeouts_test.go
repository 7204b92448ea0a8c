package upstream

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/catalog"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
)

// TestTimeoutSaidOnce: an upstream that does not answer its handshake in
// time fails the call with one sentence naming the upstream, the method
// and the timeout, each once; so does the call made during the backoff
// that follows.
func TestTimeoutSaidOnce(t *testing.T) {
	leakcheck.Check(t)
	p := newProc(t, "sleepy", "hang")
	p.spec.Timeout = 200 * time.Millisecond
	c := New(p.spec, mcpxInfo, testLog(t))
	defer c.Close()
	ctx := context.Background()
	err := within(t, 6*time.Second, "a call to an upstream that never answers", func() error { return echo(ctx, c) })
	want := regexp.MustCompile(`^upstream "sleepy" did not answer (server/discover|initialize) within 200ms$`)
	if err == nil || !want.MatchString(err.Error()) {
		t.Fatalf("got %v, want %s", err, want)
	}
	method := want.FindStringSubmatch(err.Error())[1]
	// The backoff's answer gives the same reason, still said once.
	err = echo(ctx, c)
	if err == nil {
		t.Fatal("a call during the backoff succeeded")
	}
	for _, s := range []string{`"sleepy"`, method, "200ms"} {
		if n := strings.Count(err.Error(), s); n != 1 {
			t.Errorf("%q said %d times in %q", s, n, err)
		}
	}
}

// TestProgressExtendsTimeout: a call whose upstream keeps reporting
// progress for its token does not time out while progress comes; its
// timeout counts from the last progress notification, and progress
// extends it to maxProgressExtension times the timeout at most.
func TestProgressExtendsTimeout(t *testing.T) {
	leakcheck.Check(t)
	const timeout = 200 * time.Millisecond
	cat := catalog.New()
	// work reports progress every 50ms for steps steps, then answers;
	// steps 0 reports until cancelled; stall reports for 300ms, then
	// nothing.
	cat.AddTool(mcp.Tool{Name: "work", InputSchema: json.RawMessage(`{"type":"object","properties":{"steps":{"type":"integer"},"stall":{"type":"boolean"}}}`)},
		func(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
			var a struct {
				Steps int
				Stall bool
			}
			_ = json.Unmarshal(args, &a)
			for i := 1; a.Steps == 0 || i <= a.Steps; i++ {
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(50 * time.Millisecond):
				}
				if !a.Stall || i <= 6 {
					server.Progress(ctx, float64(i), 0, "")
				}
			}
			return catalog.TextResult("worked"), nil
		})
	c := New(Spec{Name: "busy", URL: serveCatalog(t, cat), Timeout: timeout}, mcpxInfo, testLog(t))
	defer c.Close()
	call := func(args string) (time.Duration, *notifier, error) {
		n := &notifier{token: json.RawMessage(`"client-token"`)}
		ctx := server.WithNotifier(context.Background(), n)
		start := time.Now()
		_, err := mcp.CallTool(ctx, c, &mcp.CallToolRequestParams{Name: "work", Arguments: json.RawMessage(args)})
		return time.Since(start), n, err
	}

	// 16 steps of 50ms: 800ms, four times the timeout.
	took, n, err := call(`{"steps":16}`)
	if err != nil {
		t.Fatalf("a call reporting progress every 50ms, %s in all, failed after %s: %v", 16*50*time.Millisecond, took.Round(time.Millisecond), err)
	}
	if got := len(n.progress()); got == 0 {
		t.Error("the client got no progress")
	}

	// Progress for 300ms, then silence: the timeout counts from the last.
	took, _, err = call(`{"steps":1000,"stall":true}`)
	if err == nil || err.Error() != `upstream "busy" did not answer tools/call within 200ms of its last progress notification` {
		t.Errorf("a call whose progress stopped: %v", err)
	}
	if took < 450*time.Millisecond || took > 1500*time.Millisecond {
		t.Errorf("a call whose progress stopped after 300ms timed out after %s, want about 500ms", took.Round(time.Millisecond))
	}

	// Progress for ever: the maximum ends it.
	took, _, err = call(`{"steps":0}`)
	if err == nil || !strings.Contains(err.Error(), `upstream "busy" did not answer tools/call within 2s`) {
		t.Errorf("a call reporting progress for ever: %v", err)
	}
	if most := maxProgressExtension * timeout; took < most || took > most+time.Second {
		t.Errorf("a call reporting progress for ever ended after %s, want %s", took.Round(time.Millisecond), most)
	}
}
