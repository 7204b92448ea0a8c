package edge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/generated/convert"
	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
	"github.com/mcpx-dev/mcpx/runtime/auth"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/tasks"
)

// Tasks: mcpx holds every task a client sees (runtime/tasks). The call
// behind one is the namespace's ordinary blocking tools/call; this file
// decides when a call becomes a task and answers the task methods, in
// each era's flavour (docs: mcpx-revisions.md, "Tasks"):
//
//   - 2026-07-28 with the io.modelcontextprotocol/tasks extension declared
//     on the request (server-directed): the tool's execution.taskSupport
//     decides; a call that has not finished within the eager window, or
//     asked its first question there (answered inline, input_required),
//     is answered with a flat task handle; tasks/get, tasks/update,
//     tasks/cancel follow it.
//   - 2025-11-25 (client-directed): a task field on tools/call makes the
//     call a task at once, answered {task}; tasks/get, tasks/list, the
//     blocking tasks/result and tasks/cancel follow it. A task started
//     on a legacy session belongs to that session.

// TaskOptions are the edge's task settings. The zero value takes the
// defaults below and an in-memory store of tasks.DefaultMax tasks.
type TaskOptions struct {
	// Runner holds the tasks; nil means one with an in-memory store.
	Runner *tasks.Runner
	// Eager is how long a call of a tool that supports tasks may take to
	// finish or ask its first question before it becomes a task; 0 means
	// DefaultTaskEager.
	Eager time.Duration
	// After is the same for a tool that declares no task support; 0
	// means DefaultTaskAfter.
	After time.Duration
}

// Defaults of [TaskOptions].
const (
	DefaultTaskEager = 250 * time.Millisecond
	DefaultTaskAfter = 10 * time.Second
)

// taskState is what the edge keeps of tasks besides the runner's
// records: the runner made for a zero TaskOptions, and the legacy tasks'
// sessions (tasks_legacy.go).
type taskState struct {
	once     sync.Once
	runner   *tasks.Runner
	sessions taskSessions
	listens  taskListens // listens following tasks (listentasks.go)

	// The tools' task support by name, for one version of the tool list.
	mu             sync.Mutex
	support        map[string]mcp.TaskSupport
	supportVersion uint64
	supportOK      bool
}

func (e *Edge) runner() *tasks.Runner {
	e.tasks.once.Do(func() {
		e.tasks.runner = e.Tasks.Runner
		if e.tasks.runner == nil {
			e.tasks.runner = &tasks.Runner{}
		}
	})
	return e.tasks.runner
}

func (e *Edge) eager() time.Duration {
	if e.Tasks.Eager > 0 {
		return e.Tasks.Eager
	}
	return DefaultTaskEager
}

func (e *Edge) after() time.Duration {
	if e.Tasks.After > 0 {
		return e.Tasks.After
	}
	return DefaultTaskAfter
}

func init() {
	// tools/call still goes through the generated dispatch (handlers.go);
	// the task decision wraps it.
	handlers[mcp.MethodToolsCall] = taskCall(handlers[mcp.MethodToolsCall])
	handlers[mcp.MethodTasksGet] = (*Edge).tasksGet
	handlers[mcp.MethodTasksUpdate] = (*Edge).tasksUpdate
	handlers[mcp.MethodTasksCancel] = (*Edge).tasksCancel
	handlers[mcp.MethodTasksList] = (*Edge).tasksList
	handlers[mcp.MethodTasksResult] = (*Edge).tasksResult
	for _, m := range []string{mcp.MethodTasksGet, mcp.MethodTasksUpdate, mcp.MethodTasksCancel, mcp.MethodTasksList, mcp.MethodTasksResult} {
		delete(dispatched, m) // routed local: answered here
	}
}

// taskCapabilities adds what mcpx offers of tasks to caps: the extension
// (kept by the 2026-07-28 downgrade only) and the 2025-11-25 core tasks
// capability (kept by that revision's downgrade only, and removed from
// 2026-07-28 by the overlay: SEP-2663 forbids advertising it there).
func taskCapabilities(caps mcp.ServerCapabilities) mcp.ServerCapabilities {
	ext := map[string]json.RawMessage{}
	if len(caps.Extensions) > 0 {
		_ = json.Unmarshal(caps.Extensions, &ext)
	}
	ext[tasksExtension] = json.RawMessage(`{}`)
	caps.Extensions = mustJSON(ext)
	empty := json.RawMessage(`{}`)
	caps.Tasks = &mcp.ServerCapabilitiesTasks{List: empty, Cancel: empty,
		Requests: &mcp.ServerCapabilitiesTasksRequests{Tools: &mcp.ServerCapabilitiesTasksRequestsTools{Call: empty}}}
	return caps
}

// declaresTasks reports whether the client declared the tasks extension
// on this request (2026-07-28: capabilities are per request, and SEP-2663
// says a server MUST NOT return a task to a client that did not declare
// it on that request, whatever it declared before).
func (c *call) declaresTasks() bool {
	if !IsModern(c.rev) {
		return false
	}
	_, ok := declaredExtension(c.clientCapabilities(), tasksExtension)
	return ok
}

// canAnswerInline reports whether the client declared it can be asked
// questions (elicitation, sampling, roots).
func (c *call) canAnswerInline() bool {
	caps := c.clientCapabilities()
	return caps.Elicitation != nil || caps.Sampling != nil || caps.Roots != nil
}

// errTasksUndeclared is -32021 naming the extension.
func errTasksUndeclared(what string) error {
	return jsonrpc.Errorf(jsonrpc.MissingRequiredClientCapability,
		map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{tasksExtension: map[string]any{}}}},
		"%s needs the %s extension, which this request's clientCapabilities do not declare", what, tasksExtension)
}

// taskSupport is the tool's execution.taskSupport as the namespace lists
// it; "" when the tool declares none or is not listed (the call then says
// what is wrong). A namespace that reports its version has its tool list
// read once per version, in the same listing as the Mcp-Param headers
// (params.go).
func (e *Edge) taskSupport(ctx context.Context, name string) mcp.TaskSupport {
	if v, versioned := e.Server.NS.(server.Versioned); versioned {
		for range 2 { // a list that changed meanwhile is read again once
			version := v.Version()
			st := &e.tasks
			st.mu.Lock()
			byTool, ok := st.support, st.supportOK && st.supportVersion == version
			st.mu.Unlock()
			if ok {
				return byTool[name]
			}
			e.ParamHeaders(ctx, name) // lists the tools and notes their support
		}
	}
	tools, err := e.Server.NS.ListTools(ctx)
	if err != nil {
		return ""
	}
	return supportByTool(tools)[name]
}

// supportByTool is each listed tool's execution.taskSupport.
func supportByTool(tools []mcp.Tool) map[string]mcp.TaskSupport {
	byTool := map[string]mcp.TaskSupport{}
	for i := range tools {
		if x := tools[i].Execution; x != nil && x.TaskSupport != "" {
			byTool[tools[i].Name] = x.TaskSupport
		} else {
			delete(byTool, tools[i].Name) // a later tool of the same name declares none
		}
	}
	return byTool
}

// noteTaskSupport keeps the tools' task support of this version of the
// tool list (ParamHeaders calls it with each listing it makes).
func (e *Edge) noteTaskSupport(version uint64, tools []mcp.Tool) {
	byTool := supportByTool(tools)
	st := &e.tasks
	st.mu.Lock()
	st.support, st.supportVersion, st.supportOK = byTool, version, true
	st.mu.Unlock()
}

// owner is who a task started by c belongs to: the request's principal
// when mcpx authenticates (auth.Owner), and within it the legacy session;
// for a 2026-07-28 request, which has no session, the principal alone, or
// nobody in particular without auth (the id is unguessable).
func (c *call) owner() string {
	principal := auth.Owner(c.ctx)
	if IsModern(c.rev) || c.sess == nil || c.sess.Revision() == "" {
		return principal
	}
	if principal != "" {
		return principal + " session-" + c.sess.ownerKey()
	}
	return "session-" + c.sess.ownerKey()
}

// taskCall wraps the tools/call handler with the task decision.
func taskCall(inner handler) handler {
	return func(e *Edge, c *call) (any, error) {
		p, _ := c.params.(*mcp.CallToolRequestParams)
		if p == nil {
			return inner(e, c)
		}
		c.followLimit = e.followLimit(c, p) // taskinput.go; the handler's context carries it
		if IsModern(c.rev) {
			declared := c.declaresTasks()
			support := e.taskSupport(c.ctx, p.Name)
			switch {
			case support == mcp.TaskSupportRequired && !declared:
				return nil, errTasksUndeclared(fmt.Sprintf("tool %s runs only as a task; it", jsonrpc.Quote(p.Name)))
			case !declared || support == mcp.TaskSupportForbidden:
				c.lane.openFor(e, c.rev) // answered from its result
				return inner(e, c)
			case support == mcp.TaskSupportOptional || support == mcp.TaskSupportRequired:
				return e.eagerCall(inner, c, e.eager())
			case c.canAnswerInline():
				// Never a task of mcpx's making; one the upstream made
				// becomes the client's (server.UpstreamTask).
				return e.eagerCall(inner, c, 0)
			default:
				return e.eagerCall(inner, c, e.after())
			}
		}
		if p.Task != nil && e.legacyTasks(c) {
			return e.legacyTaskCall(inner, c, p)
		}
		c.lane.openFor(e, c.rev) // answered from its result
		return inner(e, c)
	}
}

// legacyTasks reports whether c's revision has the core tasks methods.
func (e *Edge) legacyTasks(c *call) bool {
	_, ok := revision.Lookup(c.rev).Method(mcp.MethodTasksResult)
	return ok
}

// outcome is what a call's handler answered.
type outcome struct {
	result any
	err    error
}

// detached is c for work that may outlive the request: its context keeps
// the request's values but not its end (stop cuts the tie to the request
// when the call becomes a task; cancel ends the work), and its
// notifications leave the request's stream once gate is set (the stream
// ended with the handle), for the gate's then.
func detached(c *call) (d *call, gate *taskGate, stop func() bool, cancel context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(c.ctx))
	stop = context.AfterFunc(c.ctx, cancel)
	gate = new(taskGate)
	sink := c.sink
	cc := *c
	cc.ctx = ctx
	// Its own count: the request's settles when the request is answered,
	// while the task goes on asking.
	cc.asks = new(askCount)
	// Until the call is a task its own stream, if any; after, the gate's
	// then, if set (taskprogress.go).
	cc.sink = func(m *jsonrpc.Message) {
		if !gate.Load() {
			if sink != nil {
				sink(m)
			}
			return
		}
		if later := gate.later(); later != nil {
			later(m)
		}
	}
	return &cc, gate, stop, cancel
}

// eagerCall runs c and answers inline what it answers within window (its
// result, error, or first question); past it, or as soon as the upstream
// made the call its task, the call is a task and the client gets its
// handle. Window 0 waits for the upstream alone.
func (e *Edge) eagerCall(inner handler, c *call, window time.Duration) (any, error) {
	d, gate, stop, cancel := detached(c)
	// An upstream that made the call its task has outlasted its own
	// window: the call is a task now (server.UpstreamTask).
	hinted := make(chan struct{})
	var hintOnce sync.Once
	d.ctx = server.WithUpstreamTask(d.ctx, func() { hintOnce.Do(func() { close(hinted) }) })
	// Questions may be posed on the task directly once it is one
	// (taskinput.go); until decided, a call asking waits for the decision.
	ti := newTaskInput(e, d)
	defer func() { ti.decide("") }() // an answer inline: no task
	d.ctx = server.WithTaskInput(d.ctx, ti.of)
	done := make(chan outcome, 1)
	go func() {
		r, err := inner(e, d)
		done <- outcome{r, err}
	}()
	var timeout <-chan time.Time // none for window 0: only the upstream's task
	if window > 0 {
		t := time.NewTimer(window)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case o := <-done:
		stop()
		cancel()
		return o.result, o.err
	case <-c.ctx.Done():
		cancel()
		return nil, c.ctx.Err()
	case <-timeout:
	case <-hinted:
	}
	rec, err := e.runner().Start(c.ctx, c.owner(), 0, cancel)
	if err != nil {
		// The call goes on inline: a full store refuses the task, not the
		// call (and says so in mcpx's log); its questions do not wait for
		// a task (taskinput.go).
		ti.decide("")
		e.log().Warn("task not created; the call is answered when it ends", "err", err)
		select {
		case o := <-done:
			stop()
			cancel()
			return o.result, o.err
		case <-c.ctx.Done():
			cancel()
			return nil, c.ctx.Err()
		}
	}
	stop()
	gate.then(e.describing(d.ctx, rec.ID)) // taskprogress.go
	gate.Store(true)
	ti.decide(rec.ID)
	go e.follow(inner, d, rec.ID, done, cancel)
	return taskHandle(rec), nil
}

// follow waits for the call behind task id and records how it ends. A
// question it asks parks the task in input_required until tasks/update
// answers every key; the call then runs again with the answers, as an
// MRTR retry (inputResponses and requestState), which a built-in tool
// replays and the gateway resumes its parked upstream call from.
func (e *Edge) follow(inner handler, d *call, id string, done chan outcome, cancel context.CancelFunc) {
	defer cancel()
	r := e.runner()
	ctx := context.WithoutCancel(d.ctx)
	for round := 1; ; round++ {
		var o outcome
		select {
		case o = <-done:
		case <-d.ctx.Done():
			return // cancelled (tasks/cancel, or expired): the record says so
		}
		ir, ok := o.result.(*mcp.InputRequiredResult)
		if !ok || o.err != nil {
			e.finish(ctx, d, id, o)
			return
		}
		// Task keys are unique over the task's life (SEP-2663 MUST);
		// the call's own keys are unique only within a round.
		reqs := map[string]json.RawMessage{}
		keyOf := map[string]string{}
		for k, q := range ir.InputRequests {
			raw, err := json.Marshal(q)
			if err != nil {
				e.finish(ctx, d, id, outcome{err: err})
				return
			}
			tk := fmt.Sprintf("r%d-%s", round, k)
			reqs[tk], keyOf[tk] = raw, k
		}
		answers, err := r.Ask(d.ctx, id, reqs)
		if err != nil {
			if d.ctx.Err() == nil {
				e.finish(ctx, d, id, outcome{err: err})
			}
			return
		}
		p := *d.params.(*mcp.CallToolRequestParams)
		p.InputResponses = map[string]mcp.InputResponse{}
		for tk, raw := range answers {
			var resp mcp.InputResponse
			if err := json.Unmarshal(raw, &resp); err != nil {
				e.finish(ctx, d, id, outcome{err: server.InvalidParams("inputResponses[%q] is not an answer: %v", tk, err)})
				return
			}
			p.InputResponses[keyOf[tk]] = resp
		}
		p.RequestState = ir.RequestState
		rc := *d
		rc.params = &p
		d = &rc
		go func() {
			r, err := inner(e, d)
			done <- outcome{r, err}
		}()
	}
}

// finish records the call's end: a result (a tool result with isError
// too: SEP-2663 says completed) or the JSON-RPC error it would have been
// answered with (failed).
func (e *Edge) finish(ctx context.Context, d *call, id string, o outcome) {
	if o.err != nil {
		je := e.rpcError(d.rev, o.err)
		raw, _ := json.Marshal(je)
		e.runner().Finish(ctx, id, nil, raw)
		return
	}
	raw, err := json.Marshal(o.result)
	if err != nil {
		raw, _ = json.Marshal(jsonrpc.Errorf(jsonrpc.InternalError, nil, "the result cannot be kept: %v", err))
		e.runner().Finish(ctx, id, nil, raw)
		return
	}
	e.runner().Finish(ctx, id, raw, nil)
}

// iso is a task time as the tasks pages write it (ISO 8601).
func iso(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func ms(d time.Duration) *float64 {
	v := float64(d.Milliseconds())
	return &v
}

// taskHandle is the CreateTaskResult of rec: flat in 2026-07-28, nested
// under task in 2025-11-25 (the overlay's nest entry).
func taskHandle(rec *tasks.Record) *mcp.CreateTaskResult {
	h := &mcp.CreateTaskResult{TaskID: rec.ID, Status: rec.Status, StatusMessage: rec.StatusMessage,
		CreatedAt: iso(rec.CreatedAt), LastUpdatedAt: iso(rec.LastUpdatedAt), ResultType: "task"}
	if rec.TTL > 0 {
		h.TTLMs = ms(rec.TTL)
	}
	if rec.PollInterval > 0 {
		h.PollIntervalMs = ms(rec.PollInterval)
	}
	return h
}

// taskID is the taskId of the task methods' params.
func taskID(params any) string {
	switch p := params.(type) {
	case *mcp.GetTaskRequestParams:
		return p.TaskID
	case *mcp.UpdateTaskRequestParams:
		return p.TaskID
	case *mcp.CancelTaskRequestParams:
		return p.TaskID
	case *mcp.GetTaskPayloadRequestParams:
		return p.TaskID
	}
	return ""
}

// lookupTask is the task the request names, for its client; -32602 for
// an unknown, expired or someone else's one (SEP-2663 MUST for tasks/get,
// SHOULD for the others; the 2025-11-25 page likewise).
func (e *Edge) lookupTask(c *call, method string) (*tasks.Record, error) {
	if IsModern(c.rev) && !c.declaresTasks() {
		return nil, errTasksUndeclared(method)
	}
	id := taskID(c.params)
	rec, err := e.runner().Get(c.ctx, id, c.owner())
	if errors.Is(err, tasks.ErrNotFound) {
		return nil, jsonrpc.Errorf(jsonrpc.InvalidParams, nil, "unknown task %s: it does not exist, has expired, or is not this client's", jsonrpc.Quote(id))
	}
	return rec, err
}

func (e *Edge) tasksGet(c *call) (any, error) {
	rec, err := e.lookupTask(c, mcp.MethodTasksGet)
	if err != nil {
		return nil, err
	}
	return e.detailed(c.rev, rec)
}

// detailed is the tasks/get answer for rec in rev: the task, and in
// 2026-07-28 its result, error or questions inline (the 2025-11-25
// downgrade drops them: that revision has tasks/result).
func (e *Edge) detailed(rev mcp.Revision, rec *tasks.Record) (*mcp.GetTaskResult, error) {
	g := &mcp.GetTaskResult{TaskID: rec.ID, Status: rec.Status, StatusMessage: rec.StatusMessage,
		CreatedAt: iso(rec.CreatedAt), LastUpdatedAt: iso(rec.LastUpdatedAt)}
	if rec.TTL > 0 {
		g.TTLMs = ms(rec.TTL)
	}
	if rec.PollInterval > 0 {
		g.PollIntervalMs = ms(rec.PollInterval)
	}
	if !IsModern(rev) {
		return g, nil
	}
	switch rec.Status {
	case mcp.TaskStatusCompleted:
		raw, err := e.inlineResult(rev, rec.Result)
		if err != nil {
			return nil, err
		}
		g.Result = raw
	case mcp.TaskStatusFailed:
		g.Error = rec.Error
	case mcp.TaskStatusInputRequired:
		g.InputRequests = map[string]mcp.GetTaskResultInputRequestsValue{}
		for k, raw := range rec.InputRequests {
			var q mcp.InputRequest
			if err := json.Unmarshal(raw, &q); err != nil {
				return nil, err
			}
			wire, err := convert.Downgrade(rev, &q)
			if err != nil {
				return nil, err
			}
			b, err := json.Marshal(wire)
			if err != nil {
				return nil, err
			}
			var v mcp.GetTaskResultInputRequestsValue
			if err := json.Unmarshal(b, &v); err != nil {
				return nil, err
			}
			g.InputRequests[k] = v
		}
	}
	return g, nil
}

// inlineResult is a completed task's tool result in rev, as the call
// would have been answered (resultType complete), without the
// related-task key (SEP-2663: the taskId is at the root already).
func (e *Edge) inlineResult(rev mcp.Revision, hub json.RawMessage) (json.RawMessage, error) {
	var res mcp.CallToolResult
	if err := json.Unmarshal(hub, &res); err != nil {
		return nil, err
	}
	if res.Meta != nil {
		res.Meta = res.Meta.Without(mcp.MetaKeyRelatedTask)
	}
	res.ResultType = "complete"
	wire, err := convert.Downgrade(rev, &res)
	if err != nil {
		return nil, err
	}
	return json.Marshal(wire)
}

func (e *Edge) tasksUpdate(c *call) (any, error) {
	rec, err := e.lookupTask(c, mcp.MethodTasksUpdate)
	if err != nil {
		return nil, err
	}
	p := c.params.(*mcp.UpdateTaskRequestParams)
	var responses map[string]json.RawMessage
	if err := json.Unmarshal(p.InputResponses, &responses); err != nil || responses == nil {
		return nil, jsonrpc.Errorf(jsonrpc.InvalidParams, nil, "inputResponses must be an object of answers by key")
	}
	if err := e.runner().Answer(c.ctx, rec.ID, c.owner(), responses); err != nil {
		return nil, err
	}
	return &mcp.UpdateTaskResult{}, nil
}

func (e *Edge) tasksCancel(c *call) (any, error) {
	if _, err := e.lookupTask(c, mcp.MethodTasksCancel); err != nil {
		return nil, err
	}
	rec, err := e.runner().Cancel(c.ctx, taskID(c.params), c.owner())
	switch {
	case errors.Is(err, tasks.ErrTerminal) && IsModern(c.rev):
		// SEP-2663: cancelling a finished task is acknowledged too.
	case errors.Is(err, tasks.ErrTerminal):
		// 2025-11-25: a terminal task MUST be refused with -32602.
		return nil, jsonrpc.Errorf(jsonrpc.InvalidParams, nil, "task %s has already ended (%s) and cannot be cancelled", jsonrpc.Quote(rec.ID), rec.Status)
	case err != nil:
		return nil, err
	}
	res := &mcp.CancelTaskResult{}
	if !IsModern(c.rev) {
		res.TaskID, res.Status, res.StatusMessage = rec.ID, rec.Status, rec.StatusMessage
		res.CreatedAt, res.LastUpdatedAt = iso(rec.CreatedAt), iso(rec.LastUpdatedAt)
		if rec.TTL > 0 {
			ttl := rec.TTL.Milliseconds()
			res.TTL = &ttl
		}
		if rec.PollInterval > 0 {
			pi := rec.PollInterval.Milliseconds()
			res.PollInterval = &pi
		}
	}
	return res, nil
}

// tasksList answers a 2025-11-25 client's tasks/list: its own tasks only.
func (e *Edge) tasksList(c *call) (any, error) {
	cursor := ""
	if p, ok := c.params.(*mcp.PaginatedRequestParams); ok && p != nil {
		cursor = p.Cursor
	}
	recs, next, err := e.runner().List(c.ctx, c.owner(), cursor, e.Server.PageSize)
	if errors.Is(err, tasks.ErrUnavailable) {
		return nil, err // -32603: the store, not the cursor
	}
	if err != nil {
		return nil, server.InvalidParams("%v", err)
	}
	out := &mcp.ListTasksResult{Tasks: []mcp.Task{}, NextCursor: next}
	for _, rec := range recs {
		h := taskHandle(rec)
		out.Tasks = append(out.Tasks, mcp.Task{TaskID: h.TaskID, Status: h.Status, StatusMessage: h.StatusMessage,
			CreatedAt: h.CreatedAt, LastUpdatedAt: h.LastUpdatedAt, TTLMs: h.TTLMs, PollIntervalMs: h.PollIntervalMs})
	}
	return out, nil
}

// tasksResult answers a 2025-11-25 client's blocking tasks/result: once
// the task ends, exactly what the call would have been answered with (its
// result, or its JSON-RPC error), tagged with related-task.
func (e *Edge) tasksResult(c *call) (any, error) {
	rec, err := e.lookupTask(c, mcp.MethodTasksResult)
	if err != nil {
		return nil, err
	}
	// The task's questions and progress come on this stream meanwhile.
	defer e.resultStream(c, rec.ID)()
	rec, err = e.runner().Wait(c.ctx, rec.ID, c.owner())
	if err != nil {
		return nil, err
	}
	related := mustJSON(mcp.MetaRelatedTask{TaskID: rec.ID})
	switch rec.Status {
	case mcp.TaskStatusCompleted:
		var res mcp.CallToolResult
		if err := json.Unmarshal(rec.Result, &res); err != nil {
			return nil, err
		}
		m := make(mcp.Meta, len(res.Meta)+1)
		for k, v := range res.Meta {
			m[k] = v
		}
		m[mcp.MetaKeyRelatedTask] = related
		res.Meta = m
		return &res, nil
	case mcp.TaskStatusFailed:
		var je jsonrpc.Error
		if err := json.Unmarshal(rec.Error, &je); err != nil {
			return nil, err
		}
		return nil, &je
	}
	return nil, jsonrpc.Errorf(jsonrpc.InvalidParams, nil, "task %s was cancelled; it has no result", jsonrpc.Quote(rec.ID))
}

// legacyTaskCall starts a 2025-11-25 client-directed task at once: the
// client asked for one with params.task.
func (e *Edge) legacyTaskCall(inner handler, c *call, p *mcp.CallToolRequestParams) (any, error) {
	d, gate, stop, cancel := detached(c)
	stop()
	gate.Store(true)
	var ttl time.Duration
	if p.Task.TTL != nil && *p.Task.TTL > 0 {
		ttl = time.Duration(*p.Task.TTL) * time.Millisecond
	}
	rec, err := e.runner().Start(c.ctx, c.owner(), ttl, cancel)
	if err != nil {
		cancel()
		if errors.Is(err, tasks.ErrUnavailable) {
			return nil, err // said so, in rpcError
		}
		return nil, jsonrpc.Errorf(jsonrpc.InternalError, nil, "%v", err)
	}
	cp := *p
	cp.Task = nil
	d.params = &cp
	d.sink = e.newTaskRoute(c.sess, rec.ID).send // tasks_legacy.go
	id := rec.ID
	// input_required while any question waits: the call may ask several
	// at once, and the first answered must not say working while another
	// waits (TestLegacyTaskTwoQuestions).
	var asking sync.Mutex
	waiting := 0
	d.asking = func() func() {
		ctx := context.WithoutCancel(d.ctx)
		asking.Lock()
		if waiting++; waiting == 1 {
			e.runner().Waiting(ctx, id, true)
		}
		asking.Unlock()
		return func() {
			asking.Lock()
			if waiting--; waiting == 0 {
				e.runner().Waiting(ctx, id, false)
			}
			asking.Unlock()
		}
	}
	done := make(chan outcome, 1)
	go func() {
		r, err := inner(e, d)
		done <- outcome{r, err}
	}()
	go e.follow(inner, d, rec.ID, done, cancel)
	return taskHandle(rec), nil
}

// listenTasks refuses a subscriptions/listen that asks for task
// notifications from a client that did not declare the extension on it
// (SEP-2663: -32021, MUST). The hub's filter does not hold the
// extension's member, so it is read from the params as sent, under both
// the SEP's name (taskIds) and the extension schema's (tasksStatus).
func (c *call) listenTasks() error {
	var p struct {
		Notifications map[string]json.RawMessage `json:"notifications"`
	}
	if json.Unmarshal(c.raw, &p) != nil {
		return nil
	}
	asks := false
	for _, k := range []string{"taskIds", "tasksStatus"} {
		if v, ok := p.Notifications[k]; ok && string(v) != "null" && string(v) != "[]" {
			asks = true
		}
	}
	if !asks || c.declaresTasks() {
		return nil
	}
	return errTasksUndeclared("a subscription to task notifications")
}
