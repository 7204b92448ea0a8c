package edge

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/tasks"
)

// The task a 2026-07-28 call runs behind, offered to the call
// (server.TaskInput): an upstream task's questions are posed on it
// directly (tasks.Runner.Pose), all of one round at once, and each answer
// a tasks/update brings goes back to the call as it comes. Without it,
// they would reach the task one input_required round of the parked call
// at a time (follow), so tasks/get would show one of several questions
// asked at once.

// taskInput is the hook eagerCall installs in the call's context before
// the call runs: whether the call becomes a task is decided later.
type taskInput struct {
	e       *Edge
	d       *call
	decided chan struct{} // closed once decide ran
	once    sync.Once
	id      string // the task's id; "" when the call is no task

	mu  sync.Mutex
	seq int // the TaskInputs handed out, numbering their keys
}

func newTaskInput(e *Edge, d *call) *taskInput {
	return &taskInput{e: e, d: d, decided: make(chan struct{})}
}

// decide says which task the call runs behind ("" none); only the first
// decision counts.
func (t *taskInput) decide(id string) {
	t.once.Do(func() {
		t.id = id
		close(t.decided)
	})
}

// of is the server.TaskInput of the call's task, once decided; nil when
// the call is no task (or ctx ended first).
func (t *taskInput) of(ctx context.Context) server.TaskInput {
	select {
	case <-t.decided:
	case <-ctx.Done():
		return nil
	}
	if t.id == "" {
		return nil
	}
	t.mu.Lock()
	t.seq++
	n := t.seq
	t.mu.Unlock()
	return &taskQuestions{t: t, prefix: fmt.Sprintf("u%d-", n)}
}

// taskQuestions is one caller's share of the task's questions: its keys
// are prefixed (the task's keys are unique over its life, SEP-2663 MUST;
// a caller's only over its own).
type taskQuestions struct {
	t      *taskInput
	prefix string
}

func (q *taskQuestions) Pose(ctx context.Context, qs map[string]mcp.InputRequest, answered func(string, json.RawMessage)) error {
	a := &asker{e: q.t.e, c: q.t.d}
	reqs := make(map[string]json.RawMessage, len(qs))
	for k, r := range qs {
		method, params := inputRequestOf(r)
		if method == "" {
			return fmt.Errorf("inputRequests[%q]: a %T is no question mcpx can put to a client", k, r.Value)
		}
		if err := a.MayAsk(method, params); err != nil {
			return err
		}
		raw, err := json.Marshal(r)
		if err != nil {
			return err
		}
		reqs[q.prefix+k] = raw
	}
	n := len(q.prefix)
	return q.t.e.runner().Pose(ctx, q.t.id, reqs, func(key string, resp json.RawMessage) { answered(key[n:], resp) })
}

func (q *taskQuestions) Withdraw(ctx context.Context, keys []string) {
	ks := make([]string, len(keys))
	for i, k := range keys {
		ks[i] = q.prefix + k
	}
	q.t.e.runner().Withdraw(ctx, q.t.id, ks)
}

// inputRequestOf is an InputRequest's method and hub params, as MayAsk
// takes them; "" for a kind it does not know.
func inputRequestOf(r mcp.InputRequest) (string, any) {
	switch v := r.Value.(type) {
	case *mcp.ElicitRequest:
		return mcp.MethodElicitationCreate, &v.Params
	case *mcp.CreateMessageRequest:
		return mcp.MethodSamplingCreateMessage, &v.Params
	case *mcp.ListRootsRequest:
		return mcp.MethodRootsList, v.Params
	}
	return "", nil
}

// followLimit is how long the call p may wait on an upstream's task
// (server.WithFollowLimit): the time to live of the task it becomes, the
// client's own for a 2025-11-25 task field that gives one, else the
// runner's (mcpx.taskTTL), which also bounds a call behind no task.
func (e *Edge) followLimit(c *call, p *mcp.CallToolRequestParams) time.Duration {
	if !IsModern(c.rev) && p.Task != nil && p.Task.TTL != nil && *p.Task.TTL > 0 && e.legacyTasks(c) {
		return time.Duration(*p.Task.TTL) * time.Millisecond
	}
	if ttl := e.runner().TTL; ttl > 0 {
		return ttl
	}
	return tasks.DefaultTTL
}
