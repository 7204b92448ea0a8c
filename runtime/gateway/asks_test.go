package gateway

import "testing"

// asking is a fake that says how it asks its questions.
type asking struct {
	*fake
	byRequest bool
}

func (a asking) AsksByRequest() bool { return a.byRequest }

// TestOnlyRequestAskersAreParked: a call is made ready to park (its own
// goroutine, context and channels) only for an upstream that may ask by
// request, or cannot say; a modern upstream, which asks through
// input_required, is called directly (BenchmarkInputRound: 16 allocations
// fewer per 2026-07-28 call through the gateway).
func TestOnlyRequestAskersAreParked(t *testing.T) {
	for _, tc := range []struct {
		name string
		u    Upstream
		want bool
	}{
		{"legacy", asking{newFake("l"), true}, true},
		{"modern", asking{newFake("m"), false}, false},
		{"cannot say", newFake("x"), true},
	} {
		if got := asksByRequest(tc.u); got != tc.want {
			t.Errorf("%s: asksByRequest = %v, want %v", tc.name, got, tc.want)
		}
	}
}
