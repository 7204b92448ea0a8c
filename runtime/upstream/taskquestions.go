package upstream

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// questions are the questions a 2026-07-28 upstream task asked that its
// follower put to the client, all of one tasks/get at once, and their
// answers as they come (partial fulfillment: each is sent on at once,
// the others stay outstanding). They go
//
//   - to the client's own mcpx task, when the call is one
//     (server.TaskInput: a 2026-07-28 client that declared the tasks
//     extension), as its inputRequests, answered by tasks/update;
//   - else to the client directly (server.Ask), each in a goroutine of its
//     own: a legacy client gets them as concurrent requests.
type questions struct {
	ctx   context.Context // the call's
	ready chan struct{}   // an answer (or a failure) came; buffered: 1

	once  sync.Once
	input server.TaskInput // nil: ask the client directly

	mu          sync.Mutex
	outstanding map[string]func() // asked, not answered: what withdraws it
	done        map[string]bool   // answered or failed: never asked again
	answers     map[string]mcp.InputResponse
	err         error
}

func (f *follower) questions(ctx context.Context) *questions {
	return &questions{ctx: ctx, ready: make(chan struct{}, 1), outstanding: map[string]func(){}, done: map[string]bool{}, answers: map[string]mcp.InputResponse{}}
}

// taskInput is the client's task the questions go to, or nil; asked the
// first time questions are posed (the edge decides whether the call is a
// task as the upstream's task begins).
func (q *questions) taskInput() server.TaskInput {
	q.once.Do(func() { q.input = server.TaskInputOf(q.ctx) })
	return q.input
}

// known reports whether key was asked already (outstanding or done).
func (q *questions) known(key string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.outstanding[key] != nil || q.done[key]
}

func (q *questions) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// heard records the answer to key (or why there is none), unless it was
// withdrawn meanwhile.
func (q *questions) heard(key string, resp mcp.InputResponse, err error) {
	q.mu.Lock()
	if q.outstanding[key] == nil {
		q.mu.Unlock()
		return
	}
	delete(q.outstanding, key)
	q.done[key] = true
	if err != nil {
		if q.err == nil {
			q.err = err
		}
	} else {
		q.answers[key] = resp
	}
	q.mu.Unlock()
	q.signal()
}

// pose puts asked (hub questions by the upstream's keys) to the client.
func (q *questions) pose(ctx context.Context, asked map[string]mcp.InputRequest) error {
	if in := q.taskInput(); in != nil {
		q.mu.Lock()
		for k := range asked {
			q.outstanding[k] = func() {} // Withdraw takes them in one go (withdraw)
		}
		q.mu.Unlock()
		err := in.Pose(ctx, asked, func(key string, raw json.RawMessage) {
			var resp mcp.InputResponse
			if err := json.Unmarshal(raw, &resp); err != nil {
				q.heard(key, resp, server.InvalidParams("inputResponses[%s] is not an answer: %v", jsonrpc.Quote(key), err))
				return
			}
			q.heard(key, resp, nil)
		})
		if err != nil {
			q.mu.Lock()
			for k := range asked {
				delete(q.outstanding, k)
			}
			q.mu.Unlock()
		}
		return err
	}
	for k, r := range asked {
		method, params, err := questionOf(r)
		if err != nil {
			return err // checked by ask already
		}
		actx, cancel := context.WithCancel(ctx)
		q.mu.Lock()
		q.outstanding[k] = cancel
		q.mu.Unlock()
		go func() {
			defer cancel()
			res, err := server.Ask(actx, method, params)
			if actx.Err() != nil {
				return // withdrawn, or the call ended
			}
			var resp mcp.InputResponse
			if err == nil {
				v, ok := res.(mcp.InputResponseValue)
				if !ok {
					err = jsonrpc.Errorf(jsonrpc.InternalError, nil, "the client's answer to %s is a %T, which is no input response", method, res)
				}
				resp.Value = v
			}
			q.heard(k, resp, err)
		}()
	}
	return nil
}

// take returns the answers that came since it was last called, or the
// first question's failure.
func (q *questions) take() (map[string]mcp.InputResponse, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err != nil {
		return nil, q.err
	}
	if len(q.answers) == 0 {
		return nil, nil
	}
	out := q.answers
	q.answers = map[string]mcp.InputResponse{}
	return out, nil
}

// withdraw takes back the outstanding questions the task no longer lists
// among still (nil: all of them).
func (q *questions) withdraw(ctx context.Context, still map[string]mcp.GetTaskResultInputRequestsValue) {
	q.mu.Lock()
	var keys []string
	var stops []func()
	for k, stop := range q.outstanding {
		if _, ok := still[k]; !ok {
			keys = append(keys, k)
			stops = append(stops, stop)
			delete(q.outstanding, k)
		}
	}
	q.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
	if len(keys) > 0 && q.input != nil {
		q.input.Withdraw(context.WithoutCancel(ctx), keys)
	}
}

// close withdraws every question still outstanding: the call is over.
func (q *questions) close() { q.withdraw(q.ctx, nil) }
