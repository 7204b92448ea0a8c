package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// Upstream tasks (issue 13, bridging). mcpx holds every task its clients
// see; a task an upstream makes of a tools/call is followed here, inside
// the call, so that to the gateway the call stays a plain blocking
// tools/call that may ask questions, reports progress on the client's
// token, and is cancelled by its context:
//
//   - a 2025-11-25 upstream (core tasks, the gateway set the task field):
//     its {task} answer is followed with a blocking tasks/result, whose
//     answer (result or JSON-RPC error) is the call's. Its questions
//     (tagged related-task, on that request's stream, the GET stream or
//     stdio) are placed on the call and relayed as any other. An upstream
//     that answers tasks/result before the task ends is polled with
//     tasks/get instead, until the task is over or needs input. A
//     tasks/result that outlives the call timeout is a heartbeat: tasks/get
//     must still answer, and tasks/result is asked again.
//   - a 2026-07-28 upstream (the extension, declared on every tools/call):
//     a handle (resultType "task") is polled with tasks/get until it is
//     completed (the inlined result; isError stays a result), failed (the
//     inlined JSON-RPC error) or cancelled; input_required is answered by
//     asking the client (server.Ask) and sending the answers with
//     tasks/update.
//
// Polls respect the upstream's poll interval within [pollFloor,
// pollCeiling], and a notifications/tasks/status for the task wakes the
// poller at once (it is never forwarded). A call that ends before its task
// (the client cancelled, or mcpx gave up) sends tasks/cancel. A task
// handle of any other request, or from an upstream whose revision has no
// tasks/get, is left to the edge's UnrelayedResultError (-32603).

// The poll interval, when the upstream suggests none, and the bounds put
// on what it suggests: never a busy loop, never minutes between polls.
const (
	pollDefault = 500 * time.Millisecond
	pollFloor   = 50 * time.Millisecond
	pollCeiling = 5 * time.Second
)

// tasksExtension is the tasks extension's identifier in capabilities.
const tasksExtension = server.TasksExtension

// taskCall is the client call an upstream task is followed for: where
// the task's questions go, and what wakes its poller.
type taskCall struct {
	ctx  context.Context
	wake chan struct{} // a status notification came (buffered: 1)

	mu  sync.Mutex
	key string // the request the task's questions pause the clock of
}

func (t *taskCall) setKey(k string) {
	t.mu.Lock()
	t.key = k
	t.mu.Unlock()
}

func (t *taskCall) placeKey() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.key
}

// taskHandle is the part of a task handle mcpx reads, of either flavour:
// 2025-11-25's {task: {...}} and the extension's flat one (resultType
// "task"). Decoded here until the generated model has resultType on the
// task results and one hub member for pollInterval/pollIntervalMs (tasks
// branch).
type taskHandle struct {
	TaskID         string   `json:"taskId"`
	Status         string   `json:"status"`
	PollInterval   *float64 `json:"pollInterval"`
	PollIntervalMs *float64 `json:"pollIntervalMs"`
	TTL            *float64 `json:"ttl"`   // 2025-11-25, ms; null: no limit
	TTLMs          *float64 `json:"ttlMs"` // the extension's
}

func readHandle(raw json.RawMessage) (taskHandle, error) {
	var wrapped struct {
		Task *taskHandle `json:"task"`
	}
	var h taskHandle
	if mcpjson.Unmarshal(raw, &wrapped) == nil && wrapped.Task != nil {
		h = *wrapped.Task
	} else if err := mcpjson.Unmarshal(raw, &h); err != nil {
		return h, err
	}
	if h.TaskID == "" {
		return h, errors.New("the task handle has no taskId")
	}
	return h, nil
}

// ttl is how long the upstream keeps the task, 0 when it says no limit.
func (h taskHandle) ttl() time.Duration {
	ms := h.TTLMs
	if ms == nil {
		ms = h.TTL
	}
	if ms == nil || *ms <= 0 {
		return 0
	}
	return time.Duration(*ms * float64(time.Millisecond))
}

func (h taskHandle) interval() *float64 {
	if h.PollIntervalMs != nil {
		return h.PollIntervalMs
	}
	return h.PollInterval
}

// tasksOnly is the extensions member declaring the tasks extension alone.
var tasksOnly = json.RawMessage(`{"` + tasksExtension + `":{}}`)

// withTasksExtension is caps (nil: none declared) with the tasks
// extension added: mcpx follows every task an upstream makes of a
// tools/call, so it may always take one.
func withTasksExtension(caps *mcp.ClientCapabilities) *mcp.ClientCapabilities {
	out := &mcp.ClientCapabilities{}
	if caps != nil {
		*out = *caps
	}
	if len(out.Extensions) == 0 { // the common case: nothing to merge
		out.Extensions = tasksOnly
		return out
	}
	ext := map[string]json.RawMessage{}
	_ = json.Unmarshal(out.Extensions, &ext)
	if _, ok := ext[tasksExtension]; ok {
		return caps
	}
	ext[tasksExtension] = json.RawMessage(`{}`)
	out.Extensions, _ = json.Marshal(ext)
	return out
}

// declaresTasks reports whether a modern upstream declared the tasks
// extension: its tasks may ask the client through tasks/get, so its calls
// must be parkable for a 2026-07-28 client (see AsksByRequest).
func declaresTasks(d *edge.Dialect) bool {
	_, ok := server.Extension(d.Capabilities.Extensions, tasksExtension)
	return ok
}

// follower follows one upstream task for a call.
type follower struct {
	c        *Client
	cn       conn
	d        *edge.Dialect
	id       string // the upstream's task id
	tc       *taskCall
	interval time.Duration
	over     bool // the task reached a terminal status: nothing to cancel
}

// followTask turns the task handle ure (the upstream's answer to method)
// into the call's result or error, or returns ure when mcpx does not
// bridge it.
func (c *Client) followTask(ctx context.Context, cn conn, d *edge.Dialect, method string, ure *edge.UnrelayedResultError) (any, error) {
	if method != mcp.MethodToolsCall || !d.Has(mcp.MethodTasksGet) {
		return nil, ure
	}
	h, err := readHandle(ure.Raw)
	if err != nil {
		return nil, fmt.Errorf("upstream %q: %s: the upstream answered with a task handle mcpx cannot read: %w", c.spec.Name, method, err)
	}
	tc := &taskCall{ctx: ctx, wake: make(chan struct{}, 1)}
	if _, dup := c.tasks.LoadOrStore(h.TaskID, tc); dup {
		return nil, fmt.Errorf("upstream %q: %s: the upstream answered with task %s, which another call is following", c.spec.Name, method, jsonrpc.Quote(h.TaskID))
	}
	defer c.tasks.Delete(h.TaskID)
	server.UpstreamTask(ctx) // the client's call may become mcpx's task now
	limit, why := followLimit(ctx, h)
	fctx, stop := context.WithTimeout(ctx, limit)
	defer stop()
	f := &follower{c: c, cn: cn, d: d, id: h.TaskID, tc: tc}
	f.setInterval(h.interval())
	c.log.Debug("upstream task followed", "task", h.TaskID, "status", h.Status, "flavour", map[bool]string{true: "2025-11-25", false: "extension"}[d.Has(mcp.MethodTasksResult)], "limit", limit)
	var res any
	if d.Has(mcp.MethodTasksResult) {
		res, err = f.core(fctx)
	} else {
		res, err = f.extension(fctx)
	}
	if !f.over {
		f.cancel()
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if fctx.Err() != nil {
		c.log.Warn("an upstream task outlived its limit; mcpx stopped following it and cancelled it", "task", h.TaskID, "limit", limit, "why", why)
		// mcpx's own error (-32603), not one the upstream answered.
		return nil, fmt.Errorf("upstream %q: task %s did not end within %s (%s); mcpx stopped following it and cancelled it", c.spec.Name, jsonrpc.Quote(h.TaskID), limit, why)
	}
	return res, err
}

// DefaultFollowLimit bounds following an upstream's task when neither the
// upstream nor the client's call says less: mcpx's default task TTL.
const DefaultFollowLimit = time.Hour

// followLimit is how long the call follows the upstream's task h, and
// why: the upstream's own ttl (the task is gone after it, so tasks/get
// could not answer), capped by the limit of the client's call
// (server.FollowLimit: its own task's TTL, or for a call behind no task
// mcpx.taskTTL), else DefaultFollowLimit.
func followLimit(ctx context.Context, h taskHandle) (time.Duration, string) {
	limit, why := server.FollowLimit(ctx), "the time to live of the client's task, mcpx.taskTTL unless the client gave one"
	if limit <= 0 {
		limit, why = DefaultFollowLimit, "mcpx's limit on following an upstream task"
	}
	if ttl := h.ttl(); ttl > 0 && ttl < limit {
		limit, why = ttl, "the upstream's ttl for it"
	}
	return limit, why
}

func (f *follower) setInterval(ms *float64) {
	d := pollDefault
	if ms != nil {
		d = time.Duration(*ms * float64(time.Millisecond))
	}
	f.interval = min(max(d, pollFloor), pollCeiling)
}

// wait waits for the next poll: the interval, or a status notification.
func (f *follower) wait(ctx context.Context) error { return f.waitOr(ctx, nil) }

// waitOr is wait, cut short by also (an answer came).
func (f *follower) waitOr(ctx context.Context, also <-chan struct{}) error {
	t := time.NewTimer(f.interval)
	defer t.Stop()
	select {
	case <-t.C:
	case <-f.tc.wake:
	case <-also:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// request sends one request about the task and returns its result. It is
// bounded by the call timeout; placed (tasks/result) instead runs on a
// call clock of its own, paused while a question of the task waits, and
// the questions that come on its stream are the call's.
func (f *follower) request(ctx context.Context, method string, params any, placed bool) (json.RawMessage, error) {
	c := f.c
	// The extension's methods are declared with it (a modern upstream
	// refuses tasks/get of a request that does not, -32021).
	raw, err := f.d.RequestFor(method, params, nil, "", withTasksExtension(nil))
	if err != nil {
		return nil, err
	}
	id := json.RawMessage(strconv.FormatInt(c.nextTok.Add(1), 10))
	var rctx context.Context
	var timedOut func() *timeoutError
	if placed {
		cctx, clock := startClock(ctx, c.spec.Timeout)
		defer clock.stop()
		clock.caller = f.tc.ctx
		c.inflight.Store(string(id), clock)
		defer c.inflight.Delete(string(id))
		f.tc.setKey(string(id))
		rctx, timedOut = cctx, func() *timeoutError { return clock.timedOut(c.spec.Name, method) }
	} else {
		tctx, cancel := context.WithTimeout(ctx, c.spec.Timeout)
		defer cancel()
		rctx, timedOut = tctx, func() *timeoutError {
			if errors.Is(tctx.Err(), context.DeadlineExceeded) {
				return &timeoutError{upstream: c.spec.Name, method: method, after: c.spec.Timeout}
			}
			return nil
		}
	}
	resp, err := f.cn.roundTrip(rctx, jsonrpc.Request(id, method, raw), f.id)
	if err != nil {
		if rctx.Err() != nil && f.cn.cancelsByNotification() {
			f.cn.send(f.d.Cancel(id, "the client cancelled or the request timed out"))
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if te := timedOut(); te != nil {
			return nil, te
		}
		return nil, fmt.Errorf("upstream %q: %s: %w", c.spec.Name, method, redact(err))
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	return resp.Result, nil
}

// get is the task's state, from tasks/get.
func (f *follower) get(ctx context.Context) (*mcp.GetTaskResult, error) {
	raw, err := f.request(ctx, mcp.MethodTasksGet, &mcp.GetTaskRequestParams{TaskID: f.id}, false)
	if err != nil {
		return nil, f.refused(mcp.MethodTasksGet, err)
	}
	v, err := f.d.Result(mcp.MethodTasksGet, raw)
	if err != nil {
		return nil, fmt.Errorf("upstream %q: tasks/get: %w", f.c.spec.Name, err)
	}
	g, _ := v.(*mcp.GetTaskResult)
	if g == nil || g.TaskID != "" && g.TaskID != f.id {
		return nil, fmt.Errorf("upstream %q: tasks/get for task %s answered for another task", f.c.spec.Name, jsonrpc.Quote(f.id))
	}
	if g.PollIntervalMs != nil {
		f.setInterval(g.PollIntervalMs)
	}
	describeTask(ctx, g) // its statusMessage, as progress (taskprogress.go)
	return g, nil
}

func terminal(s mcp.TaskStatus) bool {
	return s == mcp.TaskStatusCompleted || s == mcp.TaskStatusFailed || s == mcp.TaskStatusCancelled
}

// result is the tool result a finished task carries (raw, in the
// upstream's revision).
func (f *follower) result(raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("upstream %q: task %s completed without a result", f.c.spec.Name, jsonrpc.Quote(f.id))
	}
	res, err := f.d.Result(mcp.MethodToolsCall, raw)
	if err == nil {
		untagged(res)
	}
	return res, err
}

// core follows a 2025-11-25 task.
func (f *follower) core(ctx context.Context) (any, error) {
	blocking := true
	stalled := 0 // tasks/result timed out on a task already over
	broken := 0  // tasks/result streams ended in a row without an answer
	for {
		if !blocking {
			if err := f.wait(ctx); err != nil {
				return nil, err
			}
			g, err := f.get(ctx)
			if err != nil {
				return nil, err
			}
			// Over, or waiting for an answer that tasks/result carries.
			blocking = terminal(g.Status) || g.Status == mcp.TaskStatusInputRequired
			continue
		}
		raw, err := f.request(ctx, mcp.MethodTasksResult, &mcp.GetTaskPayloadRequestParams{TaskID: f.id}, true)
		var je *jsonrpc.Error
		var te *timeoutError
		switch {
		case err == nil:
			f.over = true
			return f.result(raw)
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.As(err, &te):
			// A heartbeat: the task must still answer tasks/get.
			g, gerr := f.get(ctx)
			if gerr != nil {
				return nil, gerr
			}
			if terminal(g.Status) {
				if stalled++; stalled > 1 {
					return nil, fmt.Errorf("upstream %q: task %s is %s, but tasks/result does not answer", f.c.spec.Name, jsonrpc.Quote(f.id), g.Status)
				}
			}
		case errors.As(err, &je):
			// The task's own error, if it is over; else the upstream
			// does not block on tasks/result, and is polled.
			g, gerr := f.get(ctx)
			switch {
			case gerr != nil:
				return nil, fmt.Errorf("%w; and tasks/result answered: %s (code %d)", gerr, jsonrpc.Clip(je.Message), je.Code)
			case terminal(g.Status):
				f.over = true
				return nil, err
			}
			f.c.log.Info("upstream answered tasks/result before its task ended; polling tasks/get", "task", f.id, "status", g.Status, "code", je.Code, "err", je.Message)
			blocking = false
		default:
			// The stream ended without the answer (an upstream may close
			// it, and clients may reconnect): ask again, after a poll,
			// unless it keeps happening.
			select {
			case <-f.cn.dead():
				return nil, err
			default:
			}
			if broken++; broken > maxBrokenResults {
				return nil, err
			}
			f.c.log.Info("tasks/result ended without an answer; asking again", "task", f.id, "err", err)
			if err := f.wait(ctx); err != nil {
				return nil, err
			}
			continue
		}
		broken = 0
	}
}

// maxBrokenResults is how many tasks/result requests in a row may end
// without an answer before the call fails with the last one's error.
const maxBrokenResults = 3

// extension follows a 2026-07-28 task. Its questions (inputRequests) are
// put to the client all at once (questions, taskquestions.go), and each
// answer is sent on with tasks/update as it comes, while the others stay
// outstanding; the task is polled meanwhile, so that it may end, or ask
// more, while the client thinks.
func (f *follower) extension(ctx context.Context) (any, error) {
	qs := f.questions(ctx)
	defer qs.close()
	for {
		if err := f.waitOr(ctx, qs.ready); err != nil {
			return nil, err
		}
		if err := f.forward(ctx, qs); err != nil {
			return nil, err
		}
		g, err := f.get(ctx)
		if err != nil {
			return nil, err
		}
		switch g.Status {
		case mcp.TaskStatusWorking:
			qs.withdraw(ctx, nil) // it waits for nothing (any more)
		case mcp.TaskStatusCompleted:
			f.over = true
			return f.result(g.Result)
		case mcp.TaskStatusFailed:
			f.over = true
			return nil, f.failure(g)
		case mcp.TaskStatusCancelled:
			f.over = true
			return nil, fmt.Errorf("upstream %q: the upstream cancelled task %s%s", f.c.spec.Name, jsonrpc.Quote(f.id), said(g.StatusMessage))
		case mcp.TaskStatusInputRequired:
			if err := f.ask(ctx, qs, g.InputRequests); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("upstream %q: task %s has status %s, which mcpx does not know", f.c.spec.Name, jsonrpc.Quote(f.id), jsonrpc.Quote(string(g.Status)))
		}
	}
}

func said(msg string) string {
	if msg == "" {
		return ""
	}
	return ": " + jsonrpc.Clip(msg)
}

// failure is the JSON-RPC error a failed task carries: the call's error,
// as the upstream would have answered it.
func (f *follower) failure(g *mcp.GetTaskResult) error {
	var je jsonrpc.Error
	if len(g.Error) > 0 && mcpjson.Unmarshal(g.Error, &je) == nil && je.Code != 0 {
		return &je
	}
	return jsonrpc.Errorf(jsonrpc.InternalError, nil, "upstream %q: task %s failed without a JSON-RPC error%s", f.c.spec.Name, jsonrpc.Quote(f.id), said(g.StatusMessage))
}

// ask puts the task's questions not asked yet to the client, all at
// once, and withdraws those asked that the task no longer lists. The edge
// reads the questions (Dialect.TaskQuestions). A question mcpx does not
// relay, or that the client cannot take, fails the call (and so cancels
// the task): the task cannot go on.
func (f *follower) ask(ctx context.Context, qs *questions, reqs map[string]mcp.GetTaskResultInputRequestsValue) error {
	qs.withdraw(ctx, reqs)
	pending := map[string]mcp.GetTaskResultInputRequestsValue{}
	for k, q := range reqs {
		if !qs.known(k) {
			pending[k] = q
		}
	}
	if len(pending) == 0 {
		return nil // asked already, or answered and the upstream has not caught up
	}
	asked, err := f.d.TaskQuestions(pending)
	if err != nil {
		return fmt.Errorf("upstream %q: task %s: %w", f.c.spec.Name, jsonrpc.Quote(f.id), err)
	}
	for k, q := range asked {
		if _, _, err := questionOf(q); err != nil {
			return jsonrpc.Errorf(jsonrpc.InternalError, nil, "upstream %q: task %s: inputRequests[%s]: %v", f.c.spec.Name, jsonrpc.Quote(f.id), jsonrpc.Quote(k), err)
		}
	}
	return qs.pose(ctx, asked)
}

// forward sends the answers the client gave since the last call with one
// tasks/update; a question that failed fails the call.
func (f *follower) forward(ctx context.Context, qs *questions) error {
	out, err := qs.take()
	if err != nil || len(out) == 0 {
		return err
	}
	responses, err := f.d.TaskAnswers(out)
	if err != nil {
		return fmt.Errorf("upstream %q: task %s: %w", f.c.spec.Name, jsonrpc.Quote(f.id), err)
	}
	_, err = f.request(ctx, mcp.MethodTasksUpdate, &mcp.UpdateTaskRequestParams{TaskID: f.id, InputResponses: responses}, false)
	return f.refused(mcp.MethodTasksUpdate, err)
}

// questionOf is an inputRequests entry as the request to put to the
// client: its method and hub params (as bridge 3 asks them).
func questionOf(r mcp.InputRequest) (string, any, error) {
	switch q := r.Value.(type) {
	case *mcp.ElicitRequest:
		p := q.Params
		return mcp.MethodElicitationCreate, &p, nil
	case *mcp.CreateMessageRequest:
		p := q.Params
		return mcp.MethodSamplingCreateMessage, &p, nil
	case *mcp.ListRootsRequest:
		p := &mcp.RequestParams{}
		if q.Params != nil {
			p.Meta = q.Params.Meta
		}
		return mcp.MethodRootsList, p, nil
	}
	return "", nil, fmt.Errorf("a %T is no question mcpx can put to a client", r.Value)
}

// refused is err, the upstream's answer to mcpx's own request about the
// task, as the call's error: a JSON-RPC error said in words, since its
// code is about that request, not the call (-32601 to tasks/get is not
// the tool missing).
func (f *follower) refused(method string, err error) error {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return fmt.Errorf("upstream %q: task %s: %s was refused: %s (code %d)", f.c.spec.Name, jsonrpc.Quote(f.id), method, jsonrpc.Clip(je.Message), je.Code)
	}
	return err
}

// cancel sends tasks/cancel for a task its call no longer waits for, in
// the background and within sendWait: the call's answer does not wait on
// it. A 2025-11-25 upstream gets it only when it declared tasks.cancel.
func (f *follower) cancel() {
	c, d := f.c, f.d
	if !d.Has(mcp.MethodTasksCancel) || d.Has(mcp.MethodTasksResult) && (d.Capabilities.Tasks == nil || d.Capabilities.Tasks.Cancel == nil) {
		return
	}
	// Declaring the extension, as every request about the task does (a
	// modern upstream refuses tasks/cancel of a request that does not,
	// -32021, and the task would run on).
	raw, err := d.RequestFor(mcp.MethodTasksCancel, &mcp.CancelTaskRequestParams{TaskID: f.id}, nil, "", withTasksExtension(nil))
	if err != nil {
		return
	}
	id := json.RawMessage(strconv.FormatInt(c.nextTok.Add(1), 10))
	go func() {
		ctx, stop := context.WithTimeout(context.Background(), c.spec.sendWait)
		defer stop()
		resp, err := f.cn.roundTrip(ctx, jsonrpc.Request(id, mcp.MethodTasksCancel, raw), f.id)
		switch {
		case err != nil:
			c.log.Warn("tasks/cancel not delivered to the upstream", "task", f.id, "err", redact(err))
		case resp.Error != nil:
			c.log.Info("the upstream refused tasks/cancel", "task", f.id, "code", resp.Error.Code, "err", resp.Error.Message)
		default:
			c.log.Debug("upstream task cancelled", "task", f.id)
		}
	}()
}

// taskStatus takes an upstream's notifications/tasks/status: it wakes the
// poller of the task it names, and goes no further (mcpx's clients hear
// of mcpx's own tasks, not the upstream's).
func (c *Client) taskStatus(raw json.RawMessage) {
	var p struct {
		TaskID string `json:"taskId"`
	}
	if mcpjson.Unmarshal(raw, &p) != nil {
		return
	}
	if v, ok := c.tasks.Load(p.TaskID); ok {
		select {
		case v.(*taskCall).wake <- struct{}{}:
		default:
		}
	}
}

// taskTarget is the call a question tagged with related-task (in its
// params' _meta, raw) belongs to: the call following that task, and the
// key of the request whose clock it pauses; ok is false when it names no
// task followed here.
func (c *Client) taskTarget(raw json.RawMessage) (key string, ctx context.Context, ok bool) {
	var p struct {
		Meta struct {
			Related *mcp.MetaRelatedTask `json:"io.modelcontextprotocol/related-task"`
		} `json:"_meta"`
	}
	if len(raw) == 0 || mcpjson.Unmarshal(raw, &p) != nil || p.Meta.Related == nil {
		return "", nil, false
	}
	v, found := c.tasks.Load(p.Meta.Related.TaskID)
	if !found {
		return "", nil, false
	}
	tc := v.(*taskCall)
	return tc.placeKey(), tc.ctx, true
}

// untagged takes the upstream's related-task out of a question's hub
// params, or a result's: it names the upstream's task, which the client
// never sees (mcpx tags what belongs to its own tasks).
func untagged(params any) {
	if u, ok := params.(*mcp.ElicitRequestParams); ok && u != nil {
		params = u.Value // form or URL: the _meta is the variant's
	}
	if env, ok := params.(mcp.Enveloped); ok {
		if m := env.Envelope().Meta; m != nil && *m != nil {
			delete(*m, mcp.MetaKeyRelatedTask)
		}
	}
}
