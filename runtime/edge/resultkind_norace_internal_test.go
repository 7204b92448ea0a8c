//go:build !race

package edge

import (
	"encoding/json"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
)

// Not under -race: the race detector empties the JSON decoder's pools,
// whose reuse the count below takes for granted.

// TestUnrelayedCompleteCheap: the check every upstream result goes
// through costs a complete one nothing: its members are looked at, not
// decoded (complete), and no error is made ready (6 allocations before,
// for the second; 2 while its head was decoded).
func TestUnrelayedCompleteCheap(t *testing.T) {
	rev := revision.Lookup(mcp.Rev20260728)
	for _, raw := range []string{
		`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"upstream","version":"bench"}},"content":[{"text":"{\"text\":\"hello\"}","type":"text"}],"resultType":"complete"}`,
		`{"content":[{"type":"text","text":"x"}],"structuredContent":{"a":[1,2,3]},"resultType":"complete"}`,
	} {
		b := json.RawMessage(raw)
		n := testing.AllocsPerRun(100, func() {
			if err := unrelayed(rev, "tools/call", "CallToolResult", b); err != nil {
				t.Fatal(err)
			}
		})
		if n > 0 {
			t.Errorf("%s: %v allocations, want none", raw, n)
		}
	}
}
