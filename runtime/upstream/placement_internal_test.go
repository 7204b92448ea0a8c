package upstream

import (
	"context"
	"testing"

	"github.com/mcpx-dev/mcpx/runtime/server"
)

// nobody is an asker for a test: placement only looks at whether a call
// has one.
type nobody struct{}

func (nobody) Ask(context.Context, string, any) (any, error) { return nil, nil }

// TestQuestionPlacedBesideMcpxsOwnCalls: a question that names no call
// goes to the one client call in flight, however many of mcpx's own calls
// (list loads: no client to ask) run beside it; two client calls are
// ambiguous, and mcpx's calls alone are no one's. (server-everything's
// sampling tool was refused as ambiguous when a list load after its list
// change ran at the same time.)
func TestQuestionPlacedBesideMcpxsOwnCalls(t *testing.T) {
	client := server.WithAsker(context.Background(), nobody{})
	for _, tc := range []struct {
		name      string
		calls     map[string]context.Context
		want      string // the call placed, "" for none
		ambiguous bool
	}{
		{"one client call", map[string]context.Context{"1": client}, "1", false},
		{"a client call beside list loads", map[string]context.Context{"1": context.Background(), "2": client, "3": context.Background()}, "2", false},
		{"list loads alone", map[string]context.Context{"1": context.Background()}, "", false},
		{"two client calls", map[string]context.Context{"1": client, "2": client}, "", true},
	} {
		c := &Client{}
		for id, ctx := range tc.calls {
			c.inflight.Store(id, &callClock{caller: ctx})
		}
		got, _, why := c.askTarget(nil)
		if got != tc.want {
			t.Errorf("%s: placed with %q (%s), want %q", tc.name, got, why, tc.want)
		}
		if amb := why != "" && tc.want == "" && len(why) > 8 && why[:7] == "several"; amb != tc.ambiguous {
			t.Errorf("%s: why %q; ambiguous %v, want %v", tc.name, why, amb, tc.ambiguous)
		}
	}
}
