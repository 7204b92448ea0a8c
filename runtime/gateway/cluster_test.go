package gateway

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// TestRefreshReadsTheListAgain: a list change heard on another replica
// makes the gateway read that list again from its upstreams, though its
// own upstream said nothing.
func TestRefreshReadsTheListAgain(t *testing.T) {
	f := newFake("a", "one")
	g, _ := gateway(t, f)
	f.set(func(f *fake) { f.tools = append(f.tools, tool("two")) }) // no list_changed
	if got := toolNames(t, g); slices.Contains(got, "a__two") {
		t.Fatalf("listed before any change was heard: %v", got)
	}
	if err := g.Refresh(context.Background(), mcp.MethodNotificationsToolsListChanged); err != nil {
		t.Fatal(err)
	}
	if got := toolNames(t, g); !slices.Contains(got, "a__two") {
		t.Fatalf("after Refresh: %v", got)
	}
}

// TestParkedCallNamesItsReplica: a parked call's id names the gateway's
// replica; a state naming another replica is Elsewhere, this one's or
// none is not.
func TestParkedCallNamesItsReplica(t *testing.T) {
	g := &Gateway{Replica: "r1"}
	id := g.parkIDFor()
	if !strings.HasPrefix(id, "r1.") || replicaOf(id) != "r1" {
		t.Fatalf("id %q", id)
	}
	if err := g.elsewhere(id + ":1"); err != nil {
		t.Fatalf("its own: %v", err)
	}
	var el *server.Elsewhere
	if err := g.elsewhere("r2." + parkID() + ":1"); !errors.As(err, &el) || el.Replica != "r2" {
		t.Fatalf("another's: %v", err)
	}
	if err := g.elsewhere(parkID() + ":1"); err != nil { // one process alone's
		t.Fatalf("no replica: %v", err)
	}
	if (&Gateway{}).parkIDFor() == "" || strings.Contains((&Gateway{}).parkIDFor(), ".") {
		t.Fatal("an id without a replica names one")
	}
}
