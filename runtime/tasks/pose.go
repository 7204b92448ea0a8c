package tasks

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// Pose adds reqs (hub InputRequests by key, keys new to the task) to the
// task's outstanding questions, moving it to input_required, and returns
// without waiting: unlike [Runner.Ask], each answer is handed to answered
// (with its key) as soon as [Runner.Answer] takes it, while the other
// keys stay outstanding. It serves a call that relays questions asked
// elsewhere (an upstream's task) and passes each answer on as it comes
// (partial fulfillment). answered is called without locks held.
func (r *Runner) Pose(ctx context.Context, id string, reqs map[string]json.RawMessage, answered func(key string, resp json.RawMessage)) error {
	r.init()
	r.mu.Lock()
	live := r.live[id]
	if live == nil {
		r.mu.Unlock()
		return ErrNotFound
	}
	for k := range reqs {
		if live.asked[k] || live.posed[k] != nil {
			r.mu.Unlock()
			return fmt.Errorf("tasks: question %q is already outstanding on the task", k)
		}
	}
	if live.posed == nil {
		live.posed = map[string]func(json.RawMessage){}
	}
	for k := range reqs {
		live.posed[k] = func(resp json.RawMessage) { answered(k, resp) }
	}
	r.mu.Unlock()
	rec, err := r.askInRecord(ctx, id, reqs)
	if err != nil {
		r.mu.Lock()
		for k := range reqs {
			delete(live.posed, k)
		}
		r.mu.Unlock()
		return err
	}
	r.notify(rec)
	if r.Lease > 0 { // a shared store: answers may come on another replica
		r.pollPosed(id, live)
	}
	return nil
}

// Withdraw takes keys posed and not yet answered off the task: their
// answers are no longer wanted. A task left with nothing to answer is
// working again.
func (r *Runner) Withdraw(ctx context.Context, id string, keys []string) {
	r.init()
	r.mu.Lock()
	live := r.live[id]
	if live == nil {
		r.mu.Unlock()
		return
	}
	var gone []string
	for _, k := range keys {
		if live.posed[k] != nil {
			delete(live.posed, k)
			gone = append(gone, k)
		}
	}
	r.mu.Unlock()
	if len(gone) == 0 {
		return
	}
	rec, err := r.Store.Update(ctx, id, func(rec *Record) error {
		if rec.Terminal() {
			return ErrTerminal
		}
		for _, k := range gone {
			delete(rec.InputRequests, k)
		}
		if len(rec.InputRequests) == 0 && rec.Status == mcp.TaskStatusInputRequired {
			rec.Status = mcp.TaskStatusWorking
		}
		rec.LastUpdatedAt = r.now().UTC()
		return nil
	})
	if err == nil {
		r.notify(rec)
	}
}
