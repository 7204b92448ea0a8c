package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// TestLeaseRenewedWhileTheCallRuns: a runner with a lease keeps its
// running task's lease ahead of the clock, so the task is still working
// well past one lease; it stops renewing once the call has ended.
func TestLeaseRenewedWhileTheCallRuns(t *testing.T) {
	ctx := context.Background()
	store := &Memory{}
	// A lease long enough that a loaded machine's scheduling stall (a
	// renewal every third of it) does not lapse it: a 150 ms lease did
	// at a load average of 20.
	r := &Runner{Store: store, Lease: time.Second}
	rec, err := r.Start(ctx, "", 0, func() {})
	if err != nil {
		t.Fatal(err)
	}
	if rec.LeaseUntil.IsZero() {
		t.Fatal("no lease on a task of a runner with one")
	}
	time.Sleep(2500 * time.Millisecond) // two and a half leases
	got, err := r.Get(ctx, rec.ID, "")
	if err != nil || got.Status != mcp.TaskStatusWorking {
		t.Fatalf("after two and a half leases with its call running: %+v %v", got, err)
	}
	r.Finish(ctx, rec.ID, json.RawMessage(`{"content":[]}`), nil)
	if got, _ := r.Get(ctx, rec.ID, ""); got.Status != mcp.TaskStatusCompleted {
		t.Fatalf("finished: %+v", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		r.mu.Lock()
		renewing := r.renewing
		r.mu.Unlock()
		if !renewing {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the renewal loop runs on with no call running")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLeaseLapsesWithoutItsRunner: a task whose runner is gone (a
// replica killed: here a second runner on the same store stands for the
// survivor) is failed once its lease has run out, in both flavours' terms:
// failed, a statusMessage, and the JSON-RPC error tasks/result answers.
func TestLeaseLapsesWithoutItsRunner(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Unix(1000, 0)}
	store := &Memory{Now: c.now}
	dead := &Runner{Store: store, Now: c.now} // never renews: no Lease, as if it had died
	rec, err := dead.Start(ctx, "o", 0, func() {})
	if err != nil {
		t.Fatal(err)
	}
	if !rec.LeaseUntil.IsZero() {
		t.Fatal("a lease without Runner.Lease")
	}
	// The record as a leased runner writes it.
	store.Update(ctx, rec.ID, func(r *Record) error { r.LeaseUntil = c.now().Add(time.Second); return nil })
	alive := &Runner{Store: store, Now: c.now, Lease: time.Second}
	c.add(900 * time.Millisecond)
	if got, _ := alive.Get(ctx, rec.ID, "o"); got.Status != mcp.TaskStatusWorking {
		t.Fatalf("within the lease: %+v", got)
	}
	c.add(200 * time.Millisecond)
	got, err := alive.Wait(ctx, rec.ID, "o")
	if err != nil || got.Status != mcp.TaskStatusFailed {
		t.Fatalf("past the lease: %+v %v", got, err)
	}
	var je struct{ Code int64 }
	if json.Unmarshal(got.Error, &je) != nil || je.Code != -32603 || got.StatusMessage == "" {
		t.Errorf("the failure: %q %s", got.StatusMessage, got.Error)
	}
	// The dead runner's late outcome does not overwrite the failure.
	dead.Finish(ctx, rec.ID, json.RawMessage(`{"content":[]}`), nil)
	if got, _ := alive.Get(ctx, rec.ID, "o"); got.Status != mcp.TaskStatusFailed {
		t.Errorf("a late finish replaced the failure: %+v", got)
	}
}

// TestCancelOnAnotherReplica: a tasks/cancel answered by another runner
// on the shared store reaches the call on the runner holding it, at its
// next renewal.
func TestCancelOnAnotherReplica(t *testing.T) {
	ctx := context.Background()
	store := &Memory{}
	holder := &Runner{Store: store, Lease: 150 * time.Millisecond}
	other := &Runner{Store: store, Lease: 150 * time.Millisecond}
	var cancelled atomic.Bool
	rec, err := holder.Start(ctx, "", 0, func() { cancelled.Store(true) })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Cancel(ctx, rec.ID, ""); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for !cancelled.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the call was not cancelled on the runner holding it")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if holder.Running() != 0 {
		t.Errorf("%d calls still running on the holder", holder.Running())
	}
}

// flaky is a store that is unavailable for its first n updates.
type flaky struct {
	Store
	n atomic.Int32
}

func (f *flaky) Update(ctx context.Context, id string, fn func(*Record) error) (*Record, error) {
	if f.n.Add(-1) >= 0 {
		return nil, fmt.Errorf("%w: down", ErrUnavailable)
	}
	return f.Store.Update(ctx, id, fn)
}

// TestFinishOutlastsAShortOutage: an outcome reached while the store is
// down for a moment is recorded once it is back, not lost.
func TestFinishOutlastsAShortOutage(t *testing.T) {
	ctx := context.Background()
	f := &flaky{Store: &Memory{}}
	r := &Runner{Store: f}
	rec, err := r.Start(ctx, "", 0, func() {})
	if err != nil {
		t.Fatal(err)
	}
	f.n.Store(3)
	r.Finish(ctx, rec.ID, json.RawMessage(`{"content":[]}`), nil)
	got, err := r.Get(ctx, rec.ID, "")
	if err != nil || got.Status != mcp.TaskStatusCompleted {
		t.Fatalf("after the outage: %+v %v", got, err)
	}
}

// TestAnswerOnAnotherReplica: a tasks/update answered by a runner other
// than the one whose call waits (another replica) reaches the waiting
// call through the shared record; a key not outstanding is ignored.
func TestAnswerOnAnotherReplica(t *testing.T) {
	ctx := context.Background()
	store := &Memory{}
	holder := &Runner{Store: store, Lease: time.Second}
	other := &Runner{Store: store, Lease: time.Second}
	rec, err := holder.Start(ctx, "o", 0, func() {})
	if err != nil {
		t.Fatal(err)
	}
	// Its call ends with the test, and the holder's lease renewal with it.
	defer holder.Finish(ctx, rec.ID, json.RawMessage(`{}`), nil)
	got := make(chan map[string]json.RawMessage, 1)
	go func() {
		a, err := holder.Ask(ctx, rec.ID, map[string]json.RawMessage{"k1": json.RawMessage(`{"method":"elicitation/create"}`), "k2": json.RawMessage(`{}`)})
		if err != nil {
			t.Error(err)
		}
		got <- a
	}()
	deadline := time.Now().Add(2 * time.Second)
	for {
		r, _ := other.Get(ctx, rec.ID, "o")
		if r.Status == mcp.TaskStatusInputRequired {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("not input_required")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := other.Answer(ctx, rec.ID, "o", map[string]json.RawMessage{"k1": json.RawMessage(`"one"`), "nope": json.RawMessage(`1`)}); err != nil {
		t.Fatal(err)
	}
	if r, _ := other.Get(ctx, rec.ID, "o"); len(r.InputRequests) != 1 || r.InputRequests["k2"] == nil {
		t.Errorf("after one answer: %v", r.InputRequests)
	}
	other.Answer(ctx, rec.ID, "o", map[string]json.RawMessage{"k2": json.RawMessage(`"two"`)})
	select {
	case a := <-got:
		if string(a["k1"]) != `"one"` || string(a["k2"]) != `"two"` || len(a) != 2 {
			t.Errorf("answers: %s", a)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the waiting call did not get the answers given on another runner")
	}
	if r, _ := other.Get(ctx, rec.ID, "o"); r.Status != mcp.TaskStatusWorking || len(r.Answers) != 0 {
		t.Errorf("after the answers were taken: %+v", r)
	}
}

// TestAnswerTakenWhenTheStoreFails: the last answer reaches the waiting
// call even when the store could not record it (before, the call waited
// on, its answers taken, until its context ended).
func TestAnswerTakenWhenTheStoreFails(t *testing.T) {
	ctx := context.Background()
	f := &flaky{Store: &Memory{}}
	r := &Runner{Store: f}
	rec, err := r.Start(ctx, "", 0, func() {})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan map[string]json.RawMessage, 1)
	go func() {
		a, _ := r.Ask(ctx, rec.ID, map[string]json.RawMessage{"k": json.RawMessage(`{}`)})
		got <- a
	}()
	for {
		if g, _ := r.Get(ctx, rec.ID, ""); g.Status == mcp.TaskStatusInputRequired {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	f.n.Store(1)
	if err := r.Answer(ctx, rec.ID, "", map[string]json.RawMessage{"k": json.RawMessage(`"v"`)}); err == nil {
		t.Error("the store's failure was not said")
	}
	select {
	case a := <-got:
		if string(a["k"]) != `"v"` {
			t.Errorf("answers: %s", a)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the waiting call did not get its answer")
	}
}
