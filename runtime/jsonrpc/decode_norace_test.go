//go:build !race

package jsonrpc

import "testing"

// TestDecodeAllocations: reading a request costs its Message, its
// method's string and the slices Decode returns, the id and method not
// copied first nor the version made a string (8 allocations before), nor
// the members read into a wire of their own (pooled: 5 before). Not under
// -race, which empties the decoder's pools.
func TestDecodeAllocations(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
	}{
		{`{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{"name":"x"}}`, 4},
		{`{"jsonrpc":"2.0","id":"abc","result":{"content":[]}}`, 3},
	} {
		in := []byte(tc.in)
		if n := testing.AllocsPerRun(100, func() { Decode(in, false) }); n > tc.want {
			t.Errorf("Decode(%s): %v allocations, want at most %v", in, n, tc.want)
		}
		// Long enough to be scanned: as many.
		long := padded(in)
		if n := testing.AllocsPerRun(100, func() { Decode(long, false) }); n > tc.want {
			t.Errorf("Decode(%.60s): %v allocations, want at most %v", long, n, tc.want)
		}
	}
}
