package edge

import (
	"context"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// TestLaterNeverTellsAModernClient: a 2026-07-28 client has no way to be
// told anything after its request (and 2026-07-28 removed
// notifications/elicitation/complete): Later is nil. A 2025-11-25 call's
// Later sends it on the call's stream while the call runs; a 2025-06-18
// client, whose revision has no such notification, is sent nothing.
func TestLaterNeverTellsAModernClient(t *testing.T) {
	e := &Edge{}
	if f := (&asker{e: e, c: &call{ctx: context.Background(), rev: "2026-07-28", sess: &Session{}}}).Later(); f != nil {
		t.Error("a 2026-07-28 client has a Later")
	}
	params := &mcp.ElicitationCompleteNotificationParams{ElicitationID: "x"}
	for rev, want := range map[mcp.Revision]int{"2025-11-25": 1, "2025-06-18": 0} {
		var sent []*jsonrpc.Message
		c := &call{ctx: context.Background(), rev: rev, sess: &Session{rev: rev}, sink: func(m *jsonrpc.Message) { sent = append(sent, m) }}
		f := (&asker{e: e, c: c}).Later()
		if f == nil {
			t.Fatalf("%s: no Later", rev)
		}
		f(mcp.MethodNotificationsElicitationComplete, params)
		if len(sent) != want {
			t.Errorf("%s: sent %d notifications, want %d", rev, len(sent), want)
		}
	}
}
