package upstream

import (
	"fmt"
	"slices"
	"sync"
	"testing"
)

// TestNameHeaderIsHeaderSafe: the shared values are headerSafe's, for
// names seen before or not, past the bound and from many goroutines.
func TestNameHeaderIsHeaderSafe(t *testing.T) {
	h := &httpConn{}
	names := []string{"echo", " padded", "naïve", "=?base64?x?=", ""}
	for i := range maxNameHeaders + 10 {
		names = append(names, fmt.Sprintf("tool%d", i))
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 2 {
				for _, n := range names {
					if got, want := h.nameHeader(n), []string{headerSafe(n)}; !slices.Equal(got, want) {
						t.Errorf("nameHeader(%q) = %q, want %q", n, got, want)
					}
				}
			}
		})
	}
	wg.Wait()
	if got := len(*h.names.Load()); got == 0 || got > maxNameHeaders {
		t.Errorf("%d names kept, want 1 to %d", got, maxNameHeaders)
	}
}
