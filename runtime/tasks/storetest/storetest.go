// Package storetest is the contract every tasks.Store keeps, as a test
// any implementation runs: the in-memory store and the Redis one pass the
// same checks.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/tasks"
)

// Clock is a settable clock for a store under test.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock starts at a fixed time.
func NewClock() *Clock { return &Clock{t: time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)} }

// Now is the clock's time.
func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// Advance moves the clock on.
func (c *Clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// New makes an empty store holding at most max tasks, on clock.
type New func(t *testing.T, max int, clock *Clock) tasks.Store

func record(c *Clock, id, owner string, ttl time.Duration) *tasks.Record {
	return &tasks.Record{ID: id, Owner: owner, Status: mcp.TaskStatusWorking, CreatedAt: c.Now(), LastUpdatedAt: c.Now(), TTL: ttl, PollInterval: time.Second}
}

// Run checks the contract.
func Run(t *testing.T, newStore New) {
	ctx := context.Background()
	t.Run("CreateGetUpdate", func(t *testing.T) {
		c := NewClock()
		s := newStore(t, 10, c)
		if err := s.Create(ctx, record(c, "a", "o1", time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := s.Create(ctx, record(c, "a", "o1", time.Hour)); !errors.Is(err, tasks.ErrExists) {
			t.Errorf("a second create of one id: %v", err)
		}
		r, err := s.Get(ctx, "a")
		if err != nil || r.Owner != "o1" || r.Status != mcp.TaskStatusWorking || r.TTL != time.Hour || !r.CreatedAt.Equal(c.Now()) {
			t.Fatalf("get: %+v %v", r, err)
		}
		r.Status = mcp.TaskStatusCancelled // a copy: the store does not change
		if again, _ := s.Get(ctx, "a"); again.Status != mcp.TaskStatusWorking {
			t.Error("a returned record shares the store's")
		}
		up, err := s.Update(ctx, "a", func(r *tasks.Record) error {
			r.Status = mcp.TaskStatusInputRequired
			r.InputRequests = map[string]json.RawMessage{"q": json.RawMessage(`{"method":"elicitation/create"}`)}
			return nil
		})
		if err != nil || up.Status != mcp.TaskStatusInputRequired {
			t.Fatalf("update: %+v %v", up, err)
		}
		if r, _ := s.Get(ctx, "a"); len(r.InputRequests) != 1 {
			t.Errorf("after update: %+v", r)
		}
		refuse := errors.New("no")
		if _, err := s.Update(ctx, "a", func(r *tasks.Record) error { r.Status = mcp.TaskStatusFailed; return refuse }); !errors.Is(err, refuse) {
			t.Errorf("fn's error: %v", err)
		}
		if r, _ := s.Get(ctx, "a"); r.Status != mcp.TaskStatusInputRequired {
			t.Error("a refused update was stored")
		}
		if _, err := s.Get(ctx, "nope"); !errors.Is(err, tasks.ErrNotFound) {
			t.Errorf("get of no task: %v", err)
		}
		if _, err := s.Update(ctx, "nope", func(*tasks.Record) error { return nil }); !errors.Is(err, tasks.ErrNotFound) {
			t.Errorf("update of no task: %v", err)
		}
	})
	t.Run("ConcurrentUpdates", func(t *testing.T) {
		c := NewClock()
		s := newStore(t, 10, c)
		s.Create(ctx, record(c, "n", "o", time.Hour))
		var wg sync.WaitGroup
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.Update(ctx, "n", func(r *tasks.Record) error { r.StatusMessage += "x"; return nil })
			}()
		}
		wg.Wait()
		if r, _ := s.Get(ctx, "n"); len(r.StatusMessage) != 20 {
			t.Errorf("%d of 20 concurrent updates kept", len(r.StatusMessage))
		}
	})
	t.Run("FullRefusesNeverEvicts", func(t *testing.T) {
		c := NewClock()
		s := newStore(t, 3, c)
		for i := range 3 {
			if err := s.Create(ctx, record(c, fmt.Sprint("t", i), "o", time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Create(ctx, record(c, "t3", "o", time.Minute)); !errors.Is(err, tasks.ErrFull) {
			t.Fatalf("a fourth task: %v", err)
		}
		for i := range 3 {
			if _, err := s.Get(ctx, fmt.Sprint("t", i)); err != nil {
				t.Errorf("t%d was evicted: %v", i, err)
			}
		}
		c.Advance(2 * time.Minute) // all expired: room again
		if err := s.Create(ctx, record(c, "t4", "o", time.Minute)); err != nil {
			t.Errorf("after expiry: %v", err)
		}
	})
	t.Run("ListByOwner", func(t *testing.T) {
		c := NewClock()
		s := newStore(t, 100, c)
		for i := range 5 {
			s.Create(ctx, record(c, fmt.Sprint("mine", i), "me", time.Hour))
			c.Advance(time.Millisecond)
			s.Create(ctx, record(c, fmt.Sprint("theirs", i), "them", time.Hour))
			c.Advance(time.Millisecond)
		}
		var ids []string
		cursor := ""
		for page := 0; ; page++ {
			recs, next, err := s.List(ctx, "me", cursor, 2)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				ids = append(ids, r.ID)
			}
			if next == "" {
				break
			}
			if page > 5 {
				t.Fatal("pages do not end")
			}
			cursor = next
		}
		if fmt.Sprint(ids) != "[mine0 mine1 mine2 mine3 mine4]" {
			t.Errorf("listed %v", ids)
		}
		if _, _, err := s.List(ctx, "me", "garbage", 2); err == nil {
			t.Error("an invalid cursor was accepted")
		}
	})
	t.Run("Expire", func(t *testing.T) {
		c := NewClock()
		s := newStore(t, 100, c)
		s.Create(ctx, record(c, "short", "o", time.Minute))
		s.Create(ctx, record(c, "long", "o", time.Hour))
		s.Create(ctx, record(c, "forever", "o", 0))
		c.Advance(2 * time.Minute)
		if _, err := s.Get(ctx, "short"); !errors.Is(err, tasks.ErrNotFound) {
			t.Errorf("an expired task: %v", err)
		}
		gone, err := s.Expire(ctx, c.Now())
		if err != nil || fmt.Sprint(gone) != "[short]" {
			t.Errorf("expired %v %v", gone, err)
		}
		if gone, _ := s.Expire(ctx, c.Now()); len(gone) != 0 {
			t.Errorf("expired twice: %v", gone)
		}
		recs, _, _ := s.List(ctx, "o", "", 0)
		if len(recs) != 2 {
			t.Errorf("listed %d after expiry", len(recs))
		}
	})
	t.Run("LeaseLapses", func(t *testing.T) {
		c := NewClock()
		s := newStore(t, 100, c)
		const lease = 10 * time.Second
		leased := func(id string) *tasks.Record {
			r := record(c, id, "o", time.Hour)
			r.LeaseUntil = c.Now().Add(lease)
			return r
		}
		renew := func(id string) error {
			_, err := s.Update(ctx, id, func(r *tasks.Record) error {
				if r.Terminal() {
					return tasks.ErrTerminal
				}
				r.LeaseUntil = c.Now().Add(lease)
				return nil
			})
			return err
		}
		for _, id := range []string{"renewed", "dead", "dead2", "dead3"} {
			if err := s.Create(ctx, leased(id)); err != nil {
				t.Fatal(err)
			}
		}
		done := leased("done")
		done.Status, done.Result = mcp.TaskStatusCompleted, json.RawMessage(`{"content":[]}`)
		s.Create(ctx, done)
		s.Create(ctx, record(c, "unleased", "o", time.Hour))
		c.Advance(lease / 2)
		if err := renew("renewed"); err != nil {
			t.Fatal(err)
		}
		if r, _ := s.Get(ctx, "dead"); r == nil || r.Status != mcp.TaskStatusWorking {
			t.Fatalf("within its lease: %+v", r)
		}
		c.Advance(lease/2 + time.Millisecond) // dead's lease has run out; renewed's has not
		r, err := s.Get(ctx, "dead")
		if err != nil || r.Status != mcp.TaskStatusFailed || !strings.Contains(r.StatusMessage, "replica") {
			t.Fatalf("past its lease: %+v %v", r, err)
		}
		var je struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		}
		if json.Unmarshal(r.Error, &je) != nil || je.Code != -32603 || !strings.Contains(je.Message, "lease") {
			t.Errorf("a lapsed task's error: %s", r.Error)
		}
		if err := renew("dead2"); !errors.Is(err, tasks.ErrTerminal) {
			t.Errorf("a renewal past the lease: %v (want the task failed, not renewed)", err)
		}
		recs, _, _ := s.List(ctx, "o", "", 0)
		status := map[string]mcp.TaskStatus{}
		for _, r := range recs {
			status[r.ID] = r.Status
		}
		if status["dead3"] != mcp.TaskStatusFailed || status["renewed"] != mcp.TaskStatusWorking ||
			status["done"] != mcp.TaskStatusCompleted || status["unleased"] != mcp.TaskStatusWorking {
			t.Errorf("listed: %v", status)
		}
		c.Advance(-time.Minute) // a reader whose clock lags still sees it failed once stored so
		if r, _ := s.Get(ctx, "dead"); r == nil || r.Status != mcp.TaskStatusFailed {
			t.Errorf("a failed lapsed task came back: %+v", r)
		}
		c.Advance(time.Minute)
		for _, id := range []string{"renewed", "done", "unleased"} {
			if r, _ := s.Get(ctx, id); r == nil || r.Status == mcp.TaskStatusFailed {
				t.Errorf("%s: %+v", id, r)
			}
		}
	})
}
