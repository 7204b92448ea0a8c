package gatewaytest

import (
	"testing"

	"github.com/mcpx-dev/mcpx/testkit/closedworld"
)

// TestCheckToUpstreamCatchesViolations makes sure the check of what mcpx
// sends an upstream can fail, and picks the revision each message is in.
func TestCheckToUpstreamCatchesViolations(t *testing.T) {
	t.Parallel()
	v, err := closedworld.Default()
	if err != nil {
		t.Fatalf("closed-world validator: %v (run `make schemas`)", err)
	}
	const (
		discover   = `{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"mcpx","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
		initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{},"clientInfo":{"name":"mcpx","title":"mcpx gateway","version":"1"},"protocolVersion":"2025-11-25"}}`
		bareList   = `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}`
		modernList = `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"mcpx","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
		initd      = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
		titled     = `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"progressToken":"t"}}}`
		extra      = `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","extra":1}}`
	)
	for _, c := range []struct {
		name, pinned, msg, wantRev string
		wantOK                     bool
	}{
		{"the era probe is a 2026-07-28 request to any upstream", "2024-11-05", discover, "2026-07-28", true},
		{"initialize is in the revision it offers", "2024-11-05", initialize, "2025-11-25", true},
		{"a legacy request to a legacy upstream", "2025-03-26", bareList, "2025-03-26", true},
		{"a legacy request to a modern upstream lacks _meta", "2026-07-28", bareList, "2026-07-28", false},
		{"a modern request to a modern upstream", "2026-07-28", modernList, "2026-07-28", true},
		{"initialized to a legacy upstream", "2025-11-25", initd, "2025-11-25", true},
		{"initialized to a modern upstream", "2026-07-28", initd, "2026-07-28", false},
		{"a progress token at 2024-11-05", "2024-11-05", titled, "2024-11-05", true},
		{"an undeclared member", "2025-06-18", extra, "2025-06-18", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			rev, err := checkToUpstream(v, c.pinned, []byte(c.msg))
			if rev != c.wantRev || (err == nil) != c.wantOK {
				t.Errorf("checkToUpstream(pinned %s, %s) = %s, %v; want %s, ok=%v", c.pinned, c.msg, rev, err, c.wantRev, c.wantOK)
			}
		})
	}
}
