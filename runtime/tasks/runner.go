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
	// Lease, when set, is how long a task's call may go without this
	// runner renewing its lease before readers deem it lost with its
	// replica (lease.go); renewed every Lease/3. 0: no lease, for a store
	// of this process only. A store shared by replicas needs one.
	Lease time.Duration

	once sync.Once
	mu   sync.Mutex
	live map[string]*running
	// changed, when set, hears every change of a task (for status
	// notifications); called without locks held.
	changed func(*Record)
	swept   time.Time // when Start last removed the expired tasks
	// renewing is set while the renewal loop runs (while calls run).
	renewing bool
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
	// its answer; polling: the record is being read for their answers
	// given on another replica (pollPosed).
	posed   map[string]func(json.RawMessage)
	polling bool
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
	if r.Lease > 0 {
		rec.LeaseUntil = now.Add(r.Lease)
	}
	r.mu.Lock()
	r.live[rec.ID] = &running{cancel: cancel}
	if r.Lease > 0 && !r.renewing {
		r.renewing = true
		go r.renew()
	}
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
		rec.InputRequests, rec.Answers = nil, nil
		rec.LastUpdatedAt = r.now().UTC()
		return nil
	})
	if err != nil {
		return nil, err
	}
	r.stop(id)
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
	update := func() (*Record, error) {
		return r.Store.Update(ctx, id, func(rec *Record) error {
			if rec.Terminal() {
				return ErrTerminal
			}
			if rpcError != nil {
				rec.Status, rec.Error = mcp.TaskStatusFailed, rpcError
			} else {
				rec.Status, rec.Result = mcp.TaskStatusCompleted, result
			}
			rec.InputRequests, rec.Answers = nil, nil
			rec.LastUpdatedAt = r.now().UTC()
			return nil
		})
	}
	rec, err := update()
	// A shared store that is down for a moment does not lose the
	// outcome: tried again for a while (past the lease, readers have
	// failed the task meanwhile, and the write is refused).
	for wait, waited := 100*time.Millisecond, time.Duration(0); errors.Is(err, ErrUnavailable) && waited < finishRetry; wait = min(2*wait, 2*time.Second) {
		time.Sleep(wait)
		waited += wait
		rec, err = update()
	}
	if err == nil {
		r.notify(rec)
	}
}

// finishRetry is how long Finish tries again to record an outcome while
// the store is unavailable.
const finishRetry = 30 * time.Second

// renew renews the leases of the tasks whose calls run here, every
// Lease/3, until none runs. A task found ended meanwhile (cancelled on
// another replica, or failed by a reader past its lease, or expired) has
// its call cancelled here: nobody waits for it any more.
func (r *Runner) renew() {
	t := time.NewTicker(r.Lease / 3)
	defer t.Stop()
	ctx := context.Background()
	for range t.C {
		r.mu.Lock()
		ids := make([]string, 0, len(r.live))
		for id := range r.live {
			ids = append(ids, id)
		}
		if len(ids) == 0 {
			r.renewing = false
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		for _, id := range ids {
			_, err := r.Store.Update(ctx, id, func(rec *Record) error {
				if rec.Terminal() {
					return ErrTerminal
				}
				rec.LeaseUntil = r.now().UTC().Add(r.Lease)
				return nil
			})
			if !errors.Is(err, ErrTerminal) && !errors.Is(err, ErrNotFound) {
				continue // renewed, or the store is down: tried again next time
			}
			live := r.stop(id)
			if live != nil && errors.Is(err, ErrTerminal) {
				// Ended where this runner did not see it (failed past its
				// lease by a reader, cancelled on another replica): those
				// who hear changes here hear its end (once each: OnChange).
				if rec, gerr := r.Store.Get(ctx, id); gerr == nil {
					r.notify(rec)
				}
			}
		}
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
	rec, err := r.askInRecord(ctx, id, reqs)
	if err != nil {
		return nil, err
	}
	r.notify(rec)
	// Answers given on another replica wait in the record: with a shared
	// store (a lease), it is read for them every answerPoll.
	var poll <-chan time.Time
	if r.Lease > 0 {
		t := time.NewTicker(answerPoll)
		defer t.Stop()
		poll = t.C
	}
wait:
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ready:
			break wait
		case <-poll:
			r.takeAnswers(ctx, id, live)
		}
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
	// Posed keys' answers are handed on after r.mu is released.
	var heard []func()
	defer func() {
		for _, f := range heard {
			f()
		}
	}()
	r.mu.Lock()
	live := r.live[id]
	if live == nil {
		r.mu.Unlock()
		return r.answerElsewhere(ctx, id, responses)
	}
	if live.asked == nil && len(live.posed) == 0 {
		r.mu.Unlock()
		return nil // nothing outstanding (between questions): ignored
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
	// The round's last answer wakes the waiting Ask, once: decided here,
	// done after the record says so. The store is written without r.mu,
	// which every task of this runner takes: a shared store's round trip
	// would hold them all up. Its update is relative (these keys out,
	// working once none is left), so it holds whatever ran between.
	var wake chan struct{}
	if tookAsked && len(live.asked) == 0 {
		wake = live.ready
	}
	r.mu.Unlock()
	if len(took) == 0 {
		return nil
	}
	rec, err := r.Store.Update(ctx, id, func(rec *Record) error {
		for k := range took {
			delete(rec.InputRequests, k)
		}
		if len(rec.InputRequests) == 0 && rec.Status == mcp.TaskStatusInputRequired {
			// Every question answered: working again at once, never an
			// input_required task without inputRequests (a DetailedTask
			// the schema refuses), as tasks/get or a listen would see.
			rec.Status = mcp.TaskStatusWorking
		}
		rec.LastUpdatedAt = r.now().UTC()
		return nil
	})
	if wake != nil {
		// Taken even when the record could not say so (the store down):
		// the waiting call has its answers and goes on.
		close(wake)
	}
	if err != nil {
		return err
	}
	f := r.changed
	if f != nil {
		go f(rec)
	}
	return nil
}

// answerElsewhere leaves the answers to the questions outstanding in the
// record, for the replica whose call waits on them (or for nobody, when
// the call ended: they go with the record).
func (r *Runner) answerElsewhere(ctx context.Context, id string, responses map[string]json.RawMessage) error {
	rec, err := r.Store.Update(ctx, id, func(rec *Record) error {
		took := false
		for k, v := range responses {
			if _, out := rec.InputRequests[k]; out {
				if rec.Answers == nil {
					rec.Answers = map[string]json.RawMessage{}
				}
				rec.Answers[k] = v
				delete(rec.InputRequests, k)
				took = true
			}
		}
		if !took {
			return errNothing
		}
		if len(rec.InputRequests) == 0 && rec.Status == mcp.TaskStatusInputRequired {
			rec.Status = mcp.TaskStatusWorking // as Answer does
		}
		rec.LastUpdatedAt = r.now().UTC()
		return nil
	})
	if errors.Is(err, errNothing) {
		return nil // keys not outstanding are ignored
	}
	if err == nil {
		go r.notify(rec)
	}
	return err
}

// errNothing: an update with nothing to change.
var errNothing = errors.New("tasks: nothing to change")

// answerPoll is how often a call waiting for answers with a shared store
// reads its record for answers given on other replicas.
const answerPoll = 100 * time.Millisecond

// takeAnswers moves the answers another replica left in the record for
// the keys live still waits on into live, and closes live.ready once none
// is left.
func (r *Runner) takeAnswers(ctx context.Context, id string, live *running) {
	r.mu.Lock()
	want := map[string]bool{}
	for k := range live.asked {
		want[k] = true
	}
	for k := range live.posed {
		want[k] = true
	}
	r.mu.Unlock()
	// A read first: most polls find nothing, and an update costs a
	// shared store several round trips.
	if rec, err := r.Store.Get(ctx, id); err != nil || len(rec.Answers) == 0 {
		return
	}
	var took map[string]json.RawMessage
	_, err := r.Store.Update(ctx, id, func(rec *Record) error {
		took = nil
		for k, v := range rec.Answers {
			if want[k] {
				if took == nil {
					took = map[string]json.RawMessage{}
				}
				took[k] = v
				delete(rec.Answers, k)
			}
		}
		if took == nil {
			return errNothing
		}
		return nil
	})
	if err != nil {
		return // none, or the store is down: read again next time
	}
	var heard []func()
	r.mu.Lock()
	moved := false
	for k, v := range took {
		if live.asked[k] {
			live.answers[k] = v
			delete(live.asked, k)
			moved = true
		} else if f := live.posed[k]; f != nil {
			delete(live.posed, k)
			heard = append(heard, func() { f(v) })
		}
	}
	if moved && len(live.asked) == 0 {
		close(live.ready) // the last key, taken here: closed once
	}
	r.mu.Unlock()
	for _, f := range heard {
		f()
	}
}

// pollPosed reads the record, every answerPoll, for answers to live's
// posed keys given on another replica (they wait in the record: see
// answerElsewhere), while any is outstanding and the call runs here.
func (r *Runner) pollPosed(id string, live *running) {
	r.mu.Lock()
	if live.polling {
		r.mu.Unlock()
		return
	}
	live.polling = true
	r.mu.Unlock()
	go func() {
		t := time.NewTicker(answerPoll)
		defer t.Stop()
		for range t.C {
			r.mu.Lock()
			done := len(live.posed) == 0 || r.live[id] != live
			if done {
				live.polling = false
			}
			r.mu.Unlock()
			if done {
				return
			}
			r.takeAnswers(context.Background(), id, live)
		}
	}()
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
		r.stop(id)
	}
	return err
}

// stop forgets the call running task id here, cancelling it, and returns
// what it was (nil when it ran elsewhere, or has ended).
func (r *Runner) stop(id string) *running {
	r.mu.Lock()
	live := r.live[id]
	delete(r.live, id)
	r.mu.Unlock()
	if live != nil && live.cancel != nil {
		live.cancel()
	}
	return live
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

// askInRecord adds reqs to the task's inputRequests and puts it in
// input_required; a task already ended is ErrTerminal.
func (r *Runner) askInRecord(ctx context.Context, id string, reqs map[string]json.RawMessage) (*Record, error) {
	return r.Store.Update(ctx, id, func(rec *Record) error {
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
}
