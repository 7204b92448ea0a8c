//go:build !race

package jsonrpc

import "testing"

// TestDecodeAllocations: reading a request costs its Message, its
// method's string and the slices Decode returns, the id and method not
// copied first nor the version made a string (8 allocations before). Not
// under -race, which empties the decoder's pools.
func TestDecodeAllocations(t *testing.T) {
	in := []byte(`{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{"name":"x"}}`)
	if n := testing.AllocsPerRun(100, func() { Decode(in, false) }); n > 5 {
		t.Errorf("Decode: %v allocations, want at most 5", n)
	}
}
