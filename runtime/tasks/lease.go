package tasks

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// Leases: with a store shared by replicas, the call behind a task runs in
// one replica's memory only. That replica renews the task's lease
// (Record.LeaseUntil) while the call runs ([Runner.Lease]); a replica that
// dies stops renewing, and the first reader past the lease finds the task
// failed, on any replica, in either task flavour. The check uses the
// reader's clock: replicas' clocks must agree within a small part of the
// lease (NTP does).

// Lapsed reports whether the task has not ended and its lease passed
// before now.
func (r *Record) Lapsed(now time.Time) bool {
	return !r.Terminal() && !r.LeaseUntil.IsZero() && now.After(r.LeaseUntil)
}

// FailLapsed makes a task whose lease lapsed at now failed, with a
// JSON-RPC internal error saying its replica stopped; it reports whether
// it changed r. Every reader derives the same record (its time is the
// lease's end, not the reader's clock), so a store may persist it lazily.
func (r *Record) FailLapsed(now time.Time) bool {
	if !r.Lapsed(now) {
		return false
	}
	msg := fmt.Sprintf("the mcpx replica running this task stopped before it ended (its lease ran out at %s); the call's outcome is unknown", r.LeaseUntil.UTC().Format(time.RFC3339Nano))
	raw, _ := json.Marshal(struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}{-32603, msg})
	r.Status, r.StatusMessage, r.Error = mcp.TaskStatusFailed, msg, raw
	r.Result, r.InputRequests, r.Answers = nil, nil, nil
	r.LastUpdatedAt = r.LeaseUntil
	return true
}
