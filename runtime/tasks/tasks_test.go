package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// clock is a settable time for the store's TTL checks.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func rec(id, owner string, created time.Time, ttl time.Duration) *Record {
	return &Record{ID: id, Owner: owner, Status: mcp.TaskStatusWorking, CreatedAt: created, LastUpdatedAt: created, TTL: ttl}
}

// TestMemoryFullRefusesNeverEvicts: a full store refuses a new task with
// ErrFull, saying why, and keeps every live one; once one expires there is
// room again, and the expired one is gone.
func TestMemoryFullRefusesNeverEvicts(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Unix(1000, 0)}
	m := &Memory{Max: 2, Now: c.now}
	if err := m.Create(ctx, rec("a", "", c.now(), time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := m.Create(ctx, rec("b", "", c.now(), time.Hour)); err != nil {
		t.Fatal(err)
	}
	err := m.Create(ctx, rec("c", "", c.now(), time.Hour))
	if !errors.Is(err, ErrFull) || !strings.Contains(err.Error(), "maxTasks") {
		t.Fatalf("third task in a store of two: %v", err)
	}
	for _, id := range []string{"a", "b"} {
		if _, err := m.Get(ctx, id); err != nil {
			t.Fatalf("live task %s after a refused create: %v", id, err)
		}
	}
	c.add(2 * time.Minute) // a expires
	if _, err := m.Get(ctx, "a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("expired task: %v", err)
	}
	if err := m.Create(ctx, rec("c", "", c.now(), time.Hour)); err != nil {
		t.Fatalf("create once a task expired: %v", err)
	}
	if m.Len() != 2 {
		t.Fatalf("store holds %d, want 2 (b, c)", m.Len())
	}
	if err := m.Create(ctx, rec("c", "", c.now(), time.Hour)); !errors.Is(err, ErrExists) && !errors.Is(err, ErrFull) {
		t.Fatalf("duplicate id: %v", err)
	}
}

// TestMemoryListByOwnerAndExpire: List gives one owner's tasks only,
// oldest first, in pages; Expire removes and names the expired ones.
func TestMemoryListByOwnerAndExpire(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Unix(1000, 0)}
	m := &Memory{Now: c.now}
	for i, id := range []string{"1", "2", "3", "4"} {
		owner := "alice"
		if i%2 == 1 {
			owner = "bob"
		}
		if err := m.Create(ctx, rec(id, owner, c.now(), time.Duration(i+1)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	page, next, err := m.List(ctx, "alice", "", 1)
	if err != nil || len(page) != 1 || page[0].ID != "1" || next == "" {
		t.Fatalf("first page: %v %q %v", page, next, err)
	}
	page, next, err = m.List(ctx, "alice", next, 1)
	if err != nil || len(page) != 1 || page[0].ID != "3" || next != "" {
		t.Fatalf("second page: %v %q %v", page, next, err)
	}
	if _, _, err := m.List(ctx, "alice", "bogus", 1); err == nil {
		t.Fatal("a cursor never handed out was accepted")
	}
	c.add(150 * time.Second) // 1 (1m) and 2 (2m) expire
	gone, _ := m.Expire(ctx, c.now())
	if len(gone) != 2 || m.Len() != 2 {
		t.Fatalf("expired %v, %d left", gone, m.Len())
	}
	if page, _, _ := m.List(ctx, "bob", "", 0); len(page) != 1 || page[0].ID != "4" {
		t.Fatalf("bob after expiry: %v", page)
	}
}

// TestMemoryCopies: what Get and Update return is the caller's; changing
// it changes nothing stored. A failing Update stores nothing.
func TestMemoryCopies(t *testing.T) {
	ctx := context.Background()
	m := &Memory{}
	r := rec("x", "", time.Now(), time.Hour)
	r.InputRequests = map[string]json.RawMessage{"k": json.RawMessage(`{}`)}
	_ = m.Create(ctx, r)
	r.InputRequests["other"] = nil
	got, _ := m.Get(ctx, "x")
	got.InputRequests["more"] = nil
	got.Status = mcp.TaskStatusFailed
	again, _ := m.Get(ctx, "x")
	if len(again.InputRequests) != 1 || again.Status != mcp.TaskStatusWorking {
		t.Fatalf("stored record changed through a copy: %+v", again)
	}
	boom := errors.New("boom")
	if _, err := m.Update(ctx, "x", func(r *Record) error { r.Status = mcp.TaskStatusCompleted; return boom }); err != boom {
		t.Fatal(err)
	}
	if again, _ := m.Get(ctx, "x"); again.Status != mcp.TaskStatusWorking {
		t.Fatalf("failed update stored: %v", again.Status)
	}
}

// TestRunnerOwnership: another owner's task is not found, for get,
// cancel and answers alike; an unowned task is anyone's.
func TestRunnerOwnership(t *testing.T) {
	ctx := context.Background()
	r := &Runner{}
	mine, err := r.Start(ctx, "alice", 0, func() {})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Get(ctx, mine.ID, "bob"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("bob's get: %v", err)
	}
	if _, err := r.Cancel(ctx, mine.ID, "bob"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("bob's cancel: %v", err)
	}
	if err := r.Answer(ctx, mine.ID, "bob", nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("bob's answer: %v", err)
	}
	if page, _, _ := r.List(ctx, "bob", "", 0); len(page) != 0 {
		t.Fatalf("bob lists %v", page)
	}
	open, _ := r.Start(ctx, "", 0, func() {})
	if _, err := r.Get(ctx, open.ID, "bob"); err != nil {
		t.Fatalf("an unowned task: %v", err)
	}
	if len(mine.ID) < 20 || mine.ID == open.ID {
		t.Fatalf("ids %q %q are not unguessable", mine.ID, open.ID)
	}
}

// TestRunnerAskAnswer: Ask parks the task in input_required with its
// questions; answers leave key by key, keys not asked are ignored, and
// Ask returns once every key is answered, the task working again.
func TestRunnerAskAnswer(t *testing.T) {
	ctx := context.Background()
	r := &Runner{}
	task, _ := r.Start(ctx, "", 0, func() {})
	got := make(chan map[string]json.RawMessage, 1)
	go func() {
		a, err := r.Ask(ctx, task.ID, map[string]json.RawMessage{"a": json.RawMessage(`{"q":1}`), "b": json.RawMessage(`{"q":2}`)})
		if err != nil {
			t.Error(err)
		}
		got <- a
	}()
	waitFor := func(f func(*Record) bool) *Record {
		t.Helper()
		for i := 0; i < 500; i++ {
			rec, _ := r.Get(ctx, task.ID, "")
			if f(rec) {
				return rec
			}
			time.Sleep(2 * time.Millisecond)
		}
		t.Fatal("timed out")
		return nil
	}
	waitFor(func(rec *Record) bool {
		return rec.Status == mcp.TaskStatusInputRequired && len(rec.InputRequests) == 2
	})
	if err := r.Answer(ctx, task.ID, "", map[string]json.RawMessage{"a": json.RawMessage(`1`), "zzz": json.RawMessage(`9`)}); err != nil {
		t.Fatal(err)
	}
	rec, _ := r.Get(ctx, task.ID, "")
	if _, left := rec.InputRequests["b"]; len(rec.InputRequests) != 1 || !left || rec.Status != mcp.TaskStatusInputRequired {
		t.Fatalf("after a partial answer: %+v", rec)
	}
	select {
	case <-got:
		t.Fatal("Ask returned with a key unanswered")
	case <-time.After(20 * time.Millisecond):
	}
	_ = r.Answer(ctx, task.ID, "", map[string]json.RawMessage{"b": json.RawMessage(`2`)})
	a := <-got
	if len(a) != 2 || string(a["a"]) != "1" || string(a["b"]) != "2" {
		t.Fatalf("answers %v", a)
	}
	waitFor(func(rec *Record) bool { return rec.Status == mcp.TaskStatusWorking && len(rec.InputRequests) == 0 })
}

// TestRunnerCancelFinish: Cancel cancels the call and the task stays
// cancelled when the call ends after all; a second Cancel reports
// ErrTerminal; Finish records a result or an error.
func TestRunnerCancelFinish(t *testing.T) {
	ctx := context.Background()
	r := &Runner{}
	called := 0
	task, _ := r.Start(ctx, "", 0, func() { called++ })
	if _, err := r.Cancel(ctx, task.ID, ""); err != nil || called != 1 {
		t.Fatalf("cancel: %v, cancel func called %d", err, called)
	}
	r.Finish(ctx, task.ID, json.RawMessage(`{"content":[]}`), nil)
	if rec, _ := r.Get(ctx, task.ID, ""); rec.Status != mcp.TaskStatusCancelled || rec.Result != nil {
		t.Fatalf("finished after cancel: %+v", rec)
	}
	if _, err := r.Cancel(ctx, task.ID, ""); !errors.Is(err, ErrTerminal) {
		t.Fatalf("second cancel: %v", err)
	}
	ok, _ := r.Start(ctx, "", 0, func() {})
	r.Finish(ctx, ok.ID, json.RawMessage(`{"content":[]}`), nil)
	bad, _ := r.Start(ctx, "", 0, func() {})
	r.Finish(ctx, bad.ID, nil, json.RawMessage(`{"code":-32603,"message":"x"}`))
	if rec, _ := r.Get(ctx, ok.ID, ""); rec.Status != mcp.TaskStatusCompleted || rec.Result == nil {
		t.Fatalf("completed: %+v", rec)
	}
	if rec, _ := r.Get(ctx, bad.ID, ""); rec.Status != mcp.TaskStatusFailed || rec.Error == nil {
		t.Fatalf("failed: %+v", rec)
	}
	if r.Running() != 0 {
		t.Fatalf("%d still running", r.Running())
	}
}

// TestRunnerExpireCancels: a task whose TTL passes is removed and the
// call behind it is cancelled.
func TestRunnerExpireCancels(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Unix(1000, 0)}
	r := &Runner{Now: c.now}
	cancelled := false
	task, _ := r.Start(ctx, "", time.Minute, func() { cancelled = true })
	c.add(2 * time.Minute)
	if err := r.Expire(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Get(ctx, task.ID, ""); !errors.Is(err, ErrNotFound) || !cancelled {
		t.Fatalf("expired task: %v, cancelled %v", err, cancelled)
	}
}

// slowUpdates is a store whose Updates wait while hold is set: a shared
// store's round trip, as long as a test likes.
type slowUpdates struct {
	Memory
	hold    atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (s *slowUpdates) Update(ctx context.Context, id string, fn func(*Record) error) (*Record, error) {
	if s.hold.Load() {
		s.entered <- struct{}{}
		<-s.release
	}
	return s.Memory.Update(ctx, id, fn)
}

// TestRunnerAnswerStoreOutsideLock: while an answer's record update is
// on its way to the store, the runner's other tasks go on (Answer held
// the runner's lock across the store's round trip: every task of the
// replica waited on one Redis call).
func TestRunnerAnswerStoreOutsideLock(t *testing.T) {
	ctx := context.Background()
	s := &slowUpdates{entered: make(chan struct{}), release: make(chan struct{})}
	r := &Runner{Store: s}
	task, _ := r.Start(ctx, "", 0, func() {})
	got := make(chan map[string]json.RawMessage, 1)
	go func() {
		a, _ := r.Ask(ctx, task.ID, map[string]json.RawMessage{"a": json.RawMessage(`{"q":1}`)})
		got <- a
	}()
	for i := 0; ; i++ {
		rec, _ := r.Get(ctx, task.ID, "")
		if rec.Status == mcp.TaskStatusInputRequired {
			break
		}
		if i == 500 {
			t.Fatal("the task never asked")
		}
		time.Sleep(2 * time.Millisecond)
	}
	s.hold.Store(true)
	answered := make(chan error, 1)
	go func() { answered <- r.Answer(ctx, task.ID, "", map[string]json.RawMessage{"a": json.RawMessage(`1`)}) }()
	<-s.entered // the answer's update is in the store
	s.hold.Store(false)
	running := make(chan int, 1)
	go func() { running <- r.Running() }()
	select {
	case n := <-running:
		if n != 1 {
			t.Errorf("Running() = %d, want 1", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the runner's lock is held while an answer's update waits for the store")
	}
	close(s.release)
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	if a := <-got; string(a["a"]) != "1" {
		t.Fatalf("answers %v", a)
	}
	if rec, _ := r.Get(ctx, task.ID, ""); rec.Status != mcp.TaskStatusWorking {
		t.Fatalf("after the answer: %+v", rec)
	}
}
