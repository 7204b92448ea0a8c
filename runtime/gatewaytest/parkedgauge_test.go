package gatewaytest

import (
	"testing"

	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/testkit/wiretest"
)

// TestParkedNowCountsParkedCalls: what the mcpx_parked_calls gauge reads
// (Gateway.ParkedNow) is 1 while a call waits, parked, for the client's
// retry, and 0 once the retry has brought the answer and the call ended.
func TestParkedNowCountsParkedCalls(t *testing.T) {
	var g *gateway.Gateway
	parkedTransports(t, func(gw *gateway.Gateway) { g = gw }, one, func(t *testing.T, c *modernClient, _ []*parkedUpstream, _ *wiretest.LockedBuffer) {
		if n := g.ParkedNow(); n != 0 {
			t.Fatalf("ParkedNow before any call = %d", n)
		}
		st := asked(t, c.call("up__one", "", ""), true, "mcpx-q1")
		if n := g.ParkedNow(); n != 1 {
			t.Errorf("ParkedNow with one call parked = %d; want 1", n)
		}
		if got := text(c.call("up__one", st, nameAdaQ1)); got == "" {
			t.Fatal("the retry got no result")
		}
		if n := g.ParkedNow(); n != 0 {
			t.Errorf("ParkedNow after the call ended = %d; want 0", n)
		}
	})
}
