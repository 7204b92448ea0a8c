// Package tasks holds the tasks mcpx shows its clients: a [Store] of plain
// records behind a small interface, an in-memory one bounded by count and
// time to live ([Memory]), and a [Runner] that keeps what cannot be plain
// data (the cancel function of the call behind a task, the questions it
// waits on) beside the records, in this process.
//
// mcpx always holds the task a client sees. The call behind it is an
// ordinary blocking call (a built-in tool, or the gateway's forward, which
// turns an upstream's own task into one by polling it); the edge decides
// when a call becomes a task and speaks each revision's task flavour.
//
// Everything in a [Record] is plain data (strings, times, raw JSON), so a
// store shared by several mcpx replicas can implement [Store] later; the
// runner's in-process part is only ever needed by the replica running the
// call.
package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// Record is one task, as stored.
type Record struct {
	ID string `json:"id"`
	// Owner is who may see the task: a legacy client session's token, or
	// "" for a task anyone holding its (unguessable) id may read, as a
	// 2026-07-28 client's, which has no session.
	Owner         string         `json:"owner,omitempty"`
	Status        mcp.TaskStatus `json:"status"`
	StatusMessage string         `json:"statusMessage,omitempty"`
	CreatedAt     time.Time      `json:"createdAt"`
	LastUpdatedAt time.Time      `json:"lastUpdatedAt"`
	// TTL is how long the task is kept from its creation; 0 is no limit.
	TTL time.Duration `json:"ttl"`
	// PollInterval is the polling interval suggested to the client.
	PollInterval time.Duration `json:"pollInterval,omitempty"`
	// Result is the call's result (hub JSON) once completed.
	Result json.RawMessage `json:"result,omitempty"`
	// Error is the JSON-RPC error object once failed.
	Error json.RawMessage `json:"error,omitempty"`
	// InputRequests are the questions outstanding while input_required,
	// by key (each a hub InputRequest), keys unique over the task's life.
	InputRequests map[string]json.RawMessage `json:"inputRequests,omitempty"`
	// LeaseUntil is when the replica running the call behind a task that
	// has not ended must have renewed its lease by; past it, the task is
	// failed by whoever reads it ([Record.FailLapsed]). Zero: no lease
	// (the store dies with the process running the call).
	LeaseUntil time.Time `json:"leaseUntil,omitzero"`
	// Answers are answers to InputRequests given on a replica other than
	// the one running the call, by key, waiting for that replica to take
	// them ([Runner.Answer]); their keys have left InputRequests.
	Answers map[string]json.RawMessage `json:"answers,omitempty"`
}

// Terminal reports whether the task has ended: completed, failed or
// cancelled.
func (r *Record) Terminal() bool { return Terminal(r.Status) }

// Terminal reports whether s is a status a task never leaves.
func Terminal(s mcp.TaskStatus) bool {
	return s == mcp.TaskStatusCompleted || s == mcp.TaskStatusFailed || s == mcp.TaskStatusCancelled
}

// Expired reports whether the task's time to live has passed at now.
func (r *Record) Expired(now time.Time) bool {
	return r.TTL > 0 && !now.Before(r.CreatedAt.Add(r.TTL))
}

// clone copies r deeply enough that no caller shares the store's maps.
func (r *Record) clone() *Record {
	c := *r
	if r.InputRequests != nil {
		c.InputRequests = make(map[string]json.RawMessage, len(r.InputRequests))
		for k, v := range r.InputRequests {
			c.InputRequests[k] = v
		}
	}
	if r.Answers != nil {
		c.Answers = make(map[string]json.RawMessage, len(r.Answers))
		for k, v := range r.Answers {
			c.Answers[k] = v
		}
	}
	return &c
}

// Errors a store answers with.
var (
	// ErrNotFound: no such task, it expired, or it belongs to someone
	// else (who must not learn it exists).
	ErrNotFound = errors.New("task not found")
	// ErrFull: the store holds as many live tasks as it may; none is
	// evicted to make room.
	ErrFull = errors.New("task store full")
	// ErrExists: Create with an id already taken.
	ErrExists = errors.New("task id already exists")
	// ErrUnavailable wraps every failure to reach a shared store (Redis):
	// the request that needed it fails saying so (HTTP 503 with
	// Retry-After for a 2026-07-28 request, -32603 otherwise); others go on.
	ErrUnavailable = errors.New("the task store is unavailable")
)

// Store holds task records. Implementations are safe for concurrent use,
// and hand out copies: a record returned is the caller's.
type Store interface {
	// Create adds rec; ErrFull when the store holds as many live tasks as
	// it may (a live task is never evicted for a new one).
	Create(ctx context.Context, rec *Record) error
	// Get returns the task with this id; ErrNotFound for none, or one
	// expired. A task whose lease lapsed is returned failed, and stays so
	// ([Record.FailLapsed]); Update and List see it failed too.
	Get(ctx context.Context, id string) (*Record, error)
	// Update changes the task with this id atomically: fn gets a copy,
	// changes it, and what it leaves is stored, unless it returns an error,
	// which Update returns. It returns the record as stored.
	Update(ctx context.Context, id string, fn func(*Record) error) (*Record, error)
	// List returns the live tasks of owner, oldest first, at most limit
	// from cursor ("" for the first page), and the cursor of the next page
	// ("" when none).
	List(ctx context.Context, owner, cursor string, limit int) ([]*Record, string, error)
	// Expire removes the tasks whose time to live has passed at now and
	// returns their ids.
	Expire(ctx context.Context, now time.Time) ([]string, error)
}
