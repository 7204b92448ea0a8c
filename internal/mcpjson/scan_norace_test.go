//go:build !race

package mcpjson_test

import (
	"runtime"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/mcpjson"
)

// TestScanObjectAllocations: none a message, the scanner pooled; three
// when collections have emptied the pool: the scanner, with room for its
// names (growing them was seven more, and a 1 MB result is collected
// every few calls), and the pool's own room on its first Put.
func TestScanObjectAllocations(t *testing.T) {
	data := []byte(scanSure[4])
	fn := func(name, val []byte) {}
	if n := testing.AllocsPerRun(100, func() { mcpjson.ScanObject(data, fn) }); n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
	if n := testing.AllocsPerRun(20, func() { runtime.GC(); runtime.GC(); mcpjson.ScanObject(data, fn) }); n > 3 {
		t.Errorf("after two collections: %v allocations, want 3", n)
	}
}
