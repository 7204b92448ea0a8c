package upstream

import (
	"fmt"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// TestCompletionsBoundedAndExpiring: the map of URL-mode elicitations
// awaiting completion tells the client once, forgets an id after
// completionTTL, and holds at most maxCompletions (the oldest goes).
func TestCompletionsBoundedAndExpiring(t *testing.T) {
	now := time.Unix(1000, 0)
	cs := &completions{now: func() time.Time { return now }}
	var told []string
	tell := func(method string, params any) bool {
		if method != mcp.MethodNotificationsElicitationComplete {
			t.Errorf("told %s", method)
		}
		told = append(told, params.(*mcp.ElicitationCompleteNotificationParams).ElicitationID)
		return true
	}
	cs.expect("up-1", "client-1", tell)
	if !cs.complete("up-1") || len(told) != 1 || told[0] != "client-1" {
		t.Fatalf("completing up-1 told %q, want [client-1]", told)
	}
	if cs.complete("up-1") {
		t.Error("a second completion of up-1 was relayed")
	}
	if cs.complete("never") {
		t.Error("an unknown id was relayed")
	}

	cs.expect("up-2", "up-2", tell)
	now = now.Add(completionTTL + time.Second)
	if cs.complete("up-2") {
		t.Error("an expired id was relayed")
	}

	for i := range maxCompletions + 1 {
		now = now.Add(time.Millisecond)
		cs.expect(fmt.Sprint("b-", i), "x", tell)
	}
	if n := len(cs.m); n != maxCompletions {
		t.Errorf("%d awaiting completion, want at most %d", n, maxCompletions)
	}
	if cs.complete("b-0") {
		t.Error("the oldest was kept past the bound")
	}
	if !cs.complete(fmt.Sprint("b-", maxCompletions)) {
		t.Error("the newest was forgotten")
	}
}
