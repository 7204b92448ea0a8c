package tasks

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// Runner runs the calls behind tasks: it creates each task's record,
// keeps the call's cancel function and the questions it waits on in this
// process (never in the record), and writes what happens to the store.
// Its zero value uses an in-memory store with the defaults.
type Runner struct {
	// Store holds the records; nil means a [Memory] with DefaultMax.
	Store Store
	// TTL is how long a task is kept from its creation; 0 means DefaultTTL.
	TTL time.Duration
	// PollInterval is the interval suggested to clients; 0 means
	// DefaultPollInterval.
	PollInterval time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	once sync.Once
	mu   sync.Mutex
	live map[string]*running
	// changed, when set, hears every change of a task (for status
	// notifications); called without locks held.
	changed func(*Record)
	swept   time.Time // when Start last removed the expired tasks
}

// sweepEvery is how often Start removes the expired tasks (and cancels
// their calls), so that no janitor goroutine is needed.
const sweepEvery = time.Minute

// Defaults of a [Runner].
const (
	DefaultTTL          = time.Hour
	DefaultPollInterval = time.Second
)

// running is the in-process part of a task whose call still runs.
type running struct {
	cancel func()
	// asked: the keys a waiting Ask wants answered, and where their
	// answers gather; nil while the call asks nothing.
	asked   map[string]bool
	answers map[string]json.RawMessage
	ready   chan struct{} // closed when every asked key is answered
	// posed: the keys posed without waiting (Pose), each with what hears
	// its answer.
	posed map[string]func(json.RawMessage)
}

func (r *Runner) init() {
	r.once.Do(func() {
		if r.Store == nil {
			r.Store = &Memory{Now: r.Now}
		}
		r.live = map[string]*running{}
	})
}

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// OnChange makes f hear every change of a task's record (its status, its
// questions); f must not block.
func (r *Runner) OnChange(f func(*Record)) {
	r.mu.Lock()
	r.changed = f
	r.mu.Unlock()
}

func (r *Runner) notify(rec *Record) {
	r.mu.Lock()
	f := r.changed
	r.mu.Unlock()
	if f != nil && rec != nil {
		f(rec)
	}
}

// NewID returns an unguessable task id (the tasks pages: MUST).
func NewID() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Start creates a working task for owner whose call is cancelled by
// cancel, and returns its record, stored before Start returns (so a
// tasks/get right after the handle resolves: SEP-2663 MUST). ttl 0 takes
// the runner's. The store's ErrFull is returned as it is.
func (r *Runner) Start(ctx context.Context, owner string, ttl time.Duration, cancel func()) (*Record, error) {
	r.init()
	if ttl <= 0 {
		ttl = r.TTL
	}
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	poll := r.PollInterval
	if poll <= 0 {
		poll = DefaultPollInterval
	}
	now := r.now().UTC()
	r.mu.Lock()
	sweep := now.Sub(r.swept) >= sweepEvery
	if sweep {
		r.swept = now
	}
	r.mu.Unlock()
	if sweep {
		_ = r.Expire(ctx)
	}
	rec := &Record{ID: NewID(), Owner: owner, Status: mcp.TaskStatusWorking, CreatedAt: now, LastUpdatedAt: now, TTL: ttl, PollInterval: poll}
	r.mu.Lock()
	r.live[rec.ID] = &running{cancel: cancel}
	r.mu.Unlock()
	if err := r.Store.Create(ctx, rec); err != nil {
		r.mu.Lock()
		delete(r.live, rec.ID)
		r.mu.Unlock()
		return nil, err
	}
	r.notify(rec)
	return rec.clone(), nil
}

// Get returns owner's task with this id; ErrNotFound also for another
// owner's. A task with no owner ("") is anyone's who holds its id.
func (r *Runner) Get(ctx context.Context, id, owner string) (*Record, error) {
	r.init()
	rec, err := r.Store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if rec.Owner != "" && rec.Owner != owner {
		return nil, ErrNotFound
	}
	return rec, nil
}

// List returns owner's tasks, a page at a time; see [Store.List].
func (r *Runner) List(ctx context.Context, owner, cursor string, limit int) ([]*Record, string, error) {
	r.init()
	return r.Store.List(ctx, owner, cursor, limit)
}

// Wait blocks until owner's task with this id is terminal, or ctx ends,
// and returns its record: a legacy client's blocking tasks/result.
func (r *Runner) Wait(ctx context.Context, id, owner string) (*Record, error) {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		rec, err := r.Get(ctx, id, owner)
		if err != nil || rec.Terminal() {
			return rec, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// ErrTerminal is what Cancel answers for a task that already ended,
// for the revisions that must refuse it (2025-11-25); the tasks extension
// acknowledges such a cancel instead.
var ErrTerminal = errors.New("the task has already ended")

// Cancel moves owner's task to cancelled, unless it has ended, and
// cancels the call behind it. It returns the record as it is now, with
// ErrTerminal when the task had already ended (the record is then
// returned too).
func (r *Runner) Cancel(ctx context.Context, id, owner string) (*Record, error) {
	if _, err := r.Get(ctx, id, owner); err != nil {
		return nil, err
	}
	ended := false
	rec, err := r.Store.Update(ctx, id, func(rec *Record) error {
		if rec.Terminal() {
			ended = true
			return nil
		}
		rec.Status, rec.StatusMessage = mcp.TaskStatusCancelled, "cancelled by the client"
		rec.InputRequests = nil
		rec.LastUpdatedAt = r.now().UTC()
		return nil
	})
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	live := r.live[id]
	delete(r.live, id)
	r.mu.Unlock()
	if live != nil && live.cancel != nil {
		live.cancel()
	}
	if ended {
		return rec, ErrTerminal
	}
	r.notify(rec)
	return rec, nil
}

// Finish records the call's end: its result (completed) or JSON-RPC error
// object (failed). A task cancelled or expired meanwhile stays as it is.
func (r *Runner) Finish(ctx context.Context, id string, result, rpcError json.RawMessage) {
	r.mu.Lock()
	delete(r.live, id)
	r.mu.Unlock()
	rec, err := r.Store.Update(ctx, id, func(rec *Record) error {
		if rec.Terminal() {
			return ErrTerminal
		}
		if rpcError != nil {
			rec.Status, rec.Error = mcp.TaskStatusFailed, rpcError
		} else {
			rec.Status, rec.Result = mcp.TaskStatusCompleted, result
		}
		rec.InputRequests = nil
		rec.LastUpdatedAt = r.now().UTC()
		return nil
	})
	if err == nil {
		r.notify(rec)
	}
}

// Ask parks the task in input_required with reqs (hub InputRequests by
// key, keys new to the task) added to its outstanding questions, and
// waits until every one of them is answered ([Runner.Answer]) or ctx
// ends; the task is then working again, and Ask returns the answers by
// the same keys. One Ask at a time per task.
func (r *Runner) Ask(ctx context.Context, id string, reqs map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	r.mu.Lock()
	live := r.live[id]
	if live == nil {
		r.mu.Unlock()
		return nil, ErrNotFound
	}
	if live.asked != nil {
		r.mu.Unlock()
		return nil, errors.New("tasks: the task is already waiting for answers")
	}
	live.asked, live.answers, live.ready = map[string]bool{}, map[string]json.RawMessage{}, make(chan struct{})
	for k := range reqs {
		live.asked[k] = true
	}
	ready := live.ready
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		live.asked, live.answers, live.ready = nil, nil, nil
		r.mu.Unlock()
	}()
	rec, err := r.Store.Update(ctx, id, func(rec *Record) error {
		if rec.Terminal() {
			return ErrTerminal
		}
		if rec.InputRequests == nil {
			rec.InputRequests = map[string]json.RawMessage{}
		}
		for k, v := range reqs {
			rec.InputRequests[k] = v
		}
		rec.Status, rec.LastUpdatedAt = mcp.TaskStatusInputRequired, r.now().UTC()
		return nil
	})
	if err != nil {
		return nil, err
	}
	r.notify(rec)
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-ready:
	}
	r.mu.Lock()
	answers := live.answers
	r.mu.Unlock()
	rec, err = r.Store.Update(ctx, id, func(rec *Record) error {
		if rec.Terminal() {
			return ErrTerminal
		}
		if len(rec.InputRequests) == 0 {
			rec.Status = mcp.TaskStatusWorking
		}
		rec.LastUpdatedAt = r.now().UTC()
		return nil
	})
	if err != nil {
		return nil, err
	}
	r.notify(rec)
	return answers, nil
}

// Answer hands owner's answers to the task's outstanding questions:
// answered keys leave the record's inputRequests at once, keys not
// outstanding are ignored (SEP-2663: SHOULD), and the waiting Ask
// returns once none of its keys is left.
func (r *Runner) Answer(ctx context.Context, id, owner string, responses map[string]json.RawMessage) error {
	if _, err := r.Get(ctx, id, owner); err != nil {
		return err
	}
	// Posed keys' answers are handed on after r.mu is released (deferred
	// before the unlock, so run after it).
	var heard []func()
	defer func() {
		for _, f := range heard {
			f()
		}
	}()
	r.mu.Lock()
	defer r.mu.Unlock()
	live := r.live[id]
	if live == nil || live.asked == nil && len(live.posed) == 0 {
		return nil // nothing outstanding (ended, or between questions): ignored
	}
	took := map[string]bool{}
	tookAsked := false
	for k, v := range responses {
		if live.asked[k] {
			live.answers[k] = v
			delete(live.asked, k)
			took[k], tookAsked = true, true
		} else if f := live.posed[k]; f != nil {
			delete(live.posed, k)
			took[k] = true
			heard = append(heard, func() { f(v) })
		}
	}
	if len(took) == 0 {
		return nil
	}
	rec, err := r.Store.Update(ctx, id, func(rec *Record) error {
		for k := range took {
			delete(rec.InputRequests, k)
		}
		// Nothing left to answer: working again (a waiting Ask would
		// say so too, once it returns).
		if len(rec.InputRequests) == 0 && rec.Status == mcp.TaskStatusInputRequired {
			rec.Status = mcp.TaskStatusWorking
		}
		rec.LastUpdatedAt = r.now().UTC()
		return nil
	})
	if err != nil {
		return err
	}
	if tookAsked && len(live.asked) == 0 {
		close(live.ready)
	}
	f := r.changed
	if f != nil {
		go f(rec)
	}
	return nil
}

// Running reports how many tasks have a call running in this process.
func (r *Runner) Running() int {
	r.init()
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.live)
}

// Expire removes the tasks whose time to live has passed and cancels the
// calls of those still running.
func (r *Runner) Expire(ctx context.Context) error {
	r.init()
	gone, err := r.Store.Expire(ctx, r.now())
	for _, id := range gone {
		r.mu.Lock()
		live := r.live[id]
		delete(r.live, id)
		r.mu.Unlock()
		if live != nil && live.cancel != nil {
			live.cancel()
		}
	}
	return err
}

// Waiting marks a task whose call waits for an answer it asked for
// outside the runner (a 2025-11-25 client's question, sent as a request):
// input_required while waiting, working again after; a task that ended
// stays as it is.
func (r *Runner) Waiting(ctx context.Context, id string, waiting bool) {
	status := mcp.TaskStatusWorking
	if waiting {
		status = mcp.TaskStatusInputRequired
	}
	rec, err := r.Store.Update(ctx, id, func(rec *Record) error {
		if rec.Terminal() || rec.Status == status {
			return ErrTerminal // nothing to change
		}
		rec.Status, rec.LastUpdatedAt = status, r.now().UTC()
		return nil
	})
	if err == nil {
		r.notify(rec)
	}
}
