//go:build !race

package streamhttp

import "testing"

// TestReadPeekAllocations: the peek and _meta's map, nothing more: no
// decoder (pooled), no copies of the raw values, and the reserved keys
// of _meta are the constants (two strings more, with UnmarshalShared).
func TestReadPeekAllocations(t *testing.T) {
	params := []byte(`{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`)
	readPeek(params)
	n := testing.AllocsPerRun(200, func() { readPeek(params) })
	t.Logf("%v allocations", n)
	if n > 3 {
		t.Errorf("readPeek: %v allocations, want at most 3", n)
	}
}
