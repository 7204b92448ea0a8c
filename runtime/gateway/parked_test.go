package gateway

import (
	"errors"
	"testing"
	"time"
)

// TestMemoryParked: at most limit calls that have not expired; a round is
// claimed once; an expired call is said so (and frees its place) until it
// has been kept long enough; a forgotten one is unknown.
func TestMemoryParked(t *testing.T) {
	p := NewMemoryParked(2, time.Hour)
	rec := func(id string, round int) ParkedCall {
		return ParkedCall{ID: id, Namespace: "up", Method: "tools/call", Round: round, Key: "mcpx-q1", Question: "elicitation/create", Status: Parked, Deadline: time.Now().Add(time.Minute)}
	}
	for _, id := range []string{"a", "b"} {
		if err := p.Park(rec(id, 1)); err != nil {
			t.Fatalf("Park %s: %v", id, err)
		}
	}
	if err := p.Park(rec("c", 1)); !errors.Is(err, ErrParkFull) {
		t.Errorf("a third call: %v, want ErrParkFull", err)
	}
	if err := p.Park(rec("a", 2)); err != nil {
		t.Errorf("a call between rounds is no new call: %v", err)
	}
	if _, err := p.Claim("a", 1); !errors.Is(err, ErrParkUsed) {
		t.Errorf("an old round: %v, want ErrParkUsed", err)
	}
	if r, err := p.Claim("a", 2); err != nil || r.Status != Parked || r.Key != "mcpx-q1" {
		t.Errorf("Claim: %+v, %v", r, err)
	}
	if _, err := p.Claim("a", 2); !errors.Is(err, ErrParkUsed) {
		t.Errorf("the same round twice: %v, want ErrParkUsed", err)
	}
	p.Expire("b", time.Now())
	if _, err := p.Claim("b", 1); !errors.Is(err, ErrParkExpired) {
		t.Errorf("an expired call: %v, want ErrParkExpired", err)
	}
	if err := p.Park(rec("c", 1)); err != nil {
		t.Errorf("an expired call still takes a place: %v", err)
	}
	p.Forget("a")
	if _, err := p.Claim("a", 2); !errors.Is(err, ErrNoParked) {
		t.Errorf("a forgotten call: %v, want ErrNoParked", err)
	}

	// Expired records are dropped once kept long enough.
	q := NewMemoryParked(1, time.Millisecond)
	q.Park(rec("x", 1))
	q.Expire("x", time.Now().Add(-time.Second))
	q.Park(rec("y", 1))
	if _, err := q.Claim("x", 1); !errors.Is(err, ErrNoParked) {
		t.Errorf("an expired call kept past keep: %v, want ErrNoParked", err)
	}
}
