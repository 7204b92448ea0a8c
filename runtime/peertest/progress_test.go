package peertest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx-dev/mcpx/testkit/revs"
)

// progress is one notifications/progress as a client decoded it.
type progress struct {
	token           any
	progress, total float64
	message         string
}

// wantProgress is what countdown for one second reports: a start and a
// finish, with messages from 2025-03-26 on (2024-11-05 has no message).
func wantProgress(rev string) []progress {
	want := []progress{{"countdown", 0, 1, "1…"}, {"countdown", 1, 1, "liftoff"}}
	if !revs.HasMember(rev, "ProgressNotificationParams", "message") {
		for i := range want {
			want[i].message = ""
		}
	}
	return want
}

const countdownResult = "Liftoff after 1 second."

// notificationWait bounds how long a client may take to hand over a
// notification mcpx has already sent (SDKs dispatch them on goroutines of
// their own); it is never waited out when all is well.
const notificationWait = 10 * time.Second

// receive collects n notifications from ch.
func receive(t *testing.T, ch <-chan progress, n int) []progress {
	t.Helper()
	var got []progress
	for range n {
		select {
		case p := <-ch:
			got = append(got, p)
		case <-time.After(notificationWait):
			t.Fatalf("got %d progress notifications, want %d: %+v", len(got), n, got)
		}
	}
	return got
}

func checkProgress(t *testing.T, rev string, got []progress) {
	t.Helper()
	want := wantProgress(rev)
	if len(got) != len(want) {
		t.Fatalf("progress %+v, want %+v", got, want)
	}
	for i := range want {
		if fmt.Sprint(got[i].token) != want[i].token || got[i].progress != want[i].progress || got[i].total != want[i].total || got[i].message != want[i].message {
			t.Errorf("progress %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestProgress calls countdown for one second with a progress token, from
// each client pinned to each revision over each transport: mcpx sends two
// notifications/progress before the result (over HTTP the response becomes
// an SSE stream), each checked on the wire like every other message. The
// countdown takes a second of mcpx's own clock, so the cases run all at
// once rather than two at a time as t.Parallel would on two cores.
func TestProgress(t *testing.T) {
	t.Parallel()
	clients := []struct {
		name string
		revs []string
		run  func(t *testing.T, transport, rev string)
	}{
		{"go-sdk", goSDKRevisions, goSDKProgress},
		{"mcp-go", mcpGoRevisions, mcpGoProgress},
	}
	var wg sync.WaitGroup
	for _, c := range clients {
		for _, transport := range transports {
			for _, rev := range c.revs {
				wg.Go(func() {
					t.Run(fmt.Sprintf("%s over %s pinned to %s", c.name, transport, rev), func(t *testing.T) { c.run(t, transport, rev) })
				})
			}
		}
	}
	wg.Wait()
}

func goSDKProgress(t *testing.T, transport, rev string) {
	ch := make(chan progress, 8)
	cs, _ := connectGoSDK(t, transport, rev, &gosdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *gosdk.ProgressNotificationClientRequest) {
			ch <- progress{req.Params.ProgressToken, req.Params.Progress, req.Params.Total, req.Params.Message}
		},
	})
	params := &gosdk.CallToolParams{Name: "countdown", Arguments: map[string]any{"seconds": 1}}
	params.SetProgressToken("countdown")
	res, err := cs.CallTool(t.Context(), params)
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := res.Content[0].(*gosdk.TextContent); res.IsError || len(res.Content) != 1 || !ok || tc.Text != countdownResult {
		t.Errorf("result %+v, want the text %q", res, countdownResult)
	}
	checkProgress(t, rev, receive(t, ch, 2))
}

func mcpGoProgress(t *testing.T, transport, rev string) {
	c, _, _ := connectMCPGo(t, transport, rev)
	ch := make(chan progress, 8)
	c.OnNotification(func(n mcpgo.JSONRPCNotification) {
		if n.Method != string(mcpgo.MethodNotificationProgress) {
			return
		}
		f := n.Params.AdditionalFields
		p := progress{token: f["progressToken"]}
		p.progress, _ = f["progress"].(float64)
		p.total, _ = f["total"].(float64)
		p.message, _ = f["message"].(string)
		ch <- p
	})
	req := mcpgo.CallToolRequest{}
	req.Params.Name = "countdown"
	req.Params.Arguments = map[string]any{"seconds": 1}
	req.Params.Meta = &mcpgo.Meta{ProgressToken: "countdown"}
	res, err := c.CallTool(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := mcpGoText(t, res.Content); res.IsError || got != countdownResult {
		t.Errorf("isError %v text %q, want %q", res.IsError, got, countdownResult)
	}
	checkProgress(t, rev, receive(t, ch, 2))
}
