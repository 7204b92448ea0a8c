package tasks

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// downStore is a Memory whose updates fail as a shared store that cannot
// be reached does, while down is set.
type downStore struct {
	*Memory
	down atomic.Bool
}

func (s *downStore) Update(ctx context.Context, id string, fn func(*Record) error) (*Record, error) {
	if s.down.Load() {
		return nil, ErrUnavailable
	}
	return s.Memory.Update(ctx, id, fn)
}

// TestLapsedTaskIsTold: a runner that could not renew its task's lease
// for longer than the lease (its store unreachable) finds the task
// failed when the store is back; the call is cancelled, and those who
// hear the runner's changes (OnChange: status notifications to listens
// and legacy streams) hear the task failed, once.
func TestLapsedTaskIsTold(t *testing.T) {
	ctx := context.Background()
	store := &downStore{Memory: &Memory{}}
	r := &Runner{Store: store, Lease: 300 * time.Millisecond}
	var mu sync.Mutex
	var heard []*Record
	r.OnChange(func(rec *Record) {
		mu.Lock()
		heard = append(heard, rec)
		mu.Unlock()
	})
	cancelled := make(chan struct{})
	rec, err := r.Start(ctx, "", 0, func() { close(cancelled) })
	if err != nil {
		t.Fatal(err)
	}
	store.down.Store(true)
	time.Sleep(600 * time.Millisecond) // two leases without a renewal
	store.down.Store(false)
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the call of a task failed past its lease was not cancelled")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		var failed []*Record
		for _, h := range heard {
			if h.ID == rec.ID && h.Status == mcp.TaskStatusFailed {
				failed = append(failed, h)
			}
		}
		mu.Unlock()
		if len(failed) == 1 {
			if failed[0].StatusMessage == "" || failed[0].Error == nil {
				t.Fatalf("told failed without saying why: %+v", failed[0])
			}
			break
		}
		if len(failed) > 1 || time.Now().After(deadline) {
			t.Fatalf("told failed %d times, want once", len(failed))
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // a later renewal round tells nothing more
	mu.Lock()
	defer mu.Unlock()
	if n := len(heard); n != 2 { // working (Start), failed
		t.Fatalf("heard %d changes, want 2 (working, failed)", n)
	}
}
