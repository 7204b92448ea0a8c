package gcfloor

import "testing"

// TestPercent: the percent whose goal is the floor, counting the stacks
// and globals as the runtime does, and base once the live heap is large.
func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name               string
		floor, live, roots uint64
		base, want         int
	}{
		{"small heap", 32 * mib, 4 * mib, 0, 100, 700},              // 4 + 4×7 = 32
		{"stacks count", 32 * mib, 4 * mib, 4 * mib, 100, 350},      // 4 + 8×3.5 = 32
		{"past half the floor", 32 * mib, 17 * mib, 0, 100, 100},    // 17 + 17 > 32
		{"over the floor", 32 * mib, 40 * mib, 8 * mib, 100, 100},   // no negative percent
		{"a larger base", 32 * mib, 8 * mib, 0, 400, 400},           // 8 + 8×4 = 40 > 32
		{"no live heap yet", 32 * mib, 0, 0, 100, 800},              // the minimum: 4 × 8 = 32
		{"under the minimum", 32 * mib, 1 * mib, 1 * mib, 100, 775}, // 4 × 7.75 = 31
		{"tiny heap, huge floor", 1 << 40, 1 * mib, 0, 100, maxPercent},
	} {
		if got := percent(c.floor, c.live, c.roots, c.base); got != c.want {
			t.Errorf("%s: percent(%d MiB, %d MiB, %d MiB, %d) = %d, want %d",
				c.name, c.floor/mib, c.live/mib, c.roots/mib, c.base, got, c.want)
		}
	}
}
