package tasks

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// TestPoseAnswersKeyByKey: questions posed without waiting are all
// outstanding at once; each answer is handed on as it comes, its key
// leaving inputRequests while the others stay (input_required); once none
// is left the task is working again. A withdrawn key leaves too and its
// late answer is ignored; a key already outstanding cannot be posed again.
func TestPoseAnswersKeyByKey(t *testing.T) {
	ctx := context.Background()
	r := &Runner{}
	rec, err := r.Start(ctx, "o", 0, func() {})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	heard := map[string]string{}
	answered := func(k string, v json.RawMessage) {
		mu.Lock()
		heard[k] = string(v)
		mu.Unlock()
	}
	q := json.RawMessage(`{"method":"roots/list"}`)
	if err := r.Pose(ctx, rec.ID, map[string]json.RawMessage{"a": q, "b": q, "c": q}, answered); err != nil {
		t.Fatal(err)
	}
	if err := r.Pose(ctx, rec.ID, map[string]json.RawMessage{"a": q}, answered); err == nil {
		t.Error("posing a key already outstanding was accepted")
	}
	state := func() (mcp.TaskStatus, int) {
		g, err := r.Get(ctx, rec.ID, "o")
		if err != nil {
			t.Fatal(err)
		}
		return g.Status, len(g.InputRequests)
	}
	if s, n := state(); s != mcp.TaskStatusInputRequired || n != 3 {
		t.Fatalf("after Pose: %s with %d questions, want input_required with 3", s, n)
	}
	if err := r.Answer(ctx, rec.ID, "o", map[string]json.RawMessage{"a": json.RawMessage(`1`), "zz": json.RawMessage(`9`)}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(heard) != 1 || heard["a"] != "1" {
		t.Errorf("after answering a: heard %v, want a's answer alone", heard)
	}
	mu.Unlock()
	if s, n := state(); s != mcp.TaskStatusInputRequired || n != 2 {
		t.Errorf("after answering a: %s with %d questions, want input_required with 2", s, n)
	}
	r.Withdraw(ctx, rec.ID, []string{"b"})
	if err := r.Answer(ctx, rec.ID, "o", map[string]json.RawMessage{"b": json.RawMessage(`2`)}); err != nil {
		t.Fatal(err)
	}
	if s, n := state(); s != mcp.TaskStatusInputRequired || n != 1 {
		t.Errorf("after withdrawing b: %s with %d questions, want input_required with 1", s, n)
	}
	if err := r.Answer(ctx, rec.ID, "o", map[string]json.RawMessage{"c": json.RawMessage(`3`)}); err != nil {
		t.Fatal(err)
	}
	if s, n := state(); s != mcp.TaskStatusWorking || n != 0 {
		t.Errorf("after answering c: %s with %d questions, want working with none", s, n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(heard) != 2 || heard["c"] != "3" || heard["b"] != "" {
		t.Errorf("heard %v, want a and c, not the withdrawn b", heard)
	}
}

// TestPosedAnsweredOnAnotherReplica: a key posed on the runner holding
// the call, answered through another runner on the shared store, reaches
// the holder's answered (the answer waits in the record and the holder
// reads it), the other key staying outstanding; with every key answered
// the task is working again on both.
func TestPosedAnsweredOnAnotherReplica(t *testing.T) {
	ctx := context.Background()
	store := &Memory{}
	holder := &Runner{Store: store, Lease: time.Second}
	other := &Runner{Store: store, Lease: time.Second}
	rec, err := holder.Start(ctx, "o", 0, func() {})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Finish(ctx, rec.ID, json.RawMessage(`{}`), nil)
	heard := make(chan string, 2)
	q := json.RawMessage(`{"method":"roots/list"}`)
	if err := holder.Pose(ctx, rec.ID, map[string]json.RawMessage{"a": q, "b": q}, func(k string, v json.RawMessage) { heard <- k + "=" + string(v) }); err != nil {
		t.Fatal(err)
	}
	if err := other.Answer(ctx, rec.ID, "o", map[string]json.RawMessage{"a": json.RawMessage(`1`)}); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-heard:
		if got != "a=1" {
			t.Errorf("heard %s, want a=1", got)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the answer given on the other runner did not reach the holder")
	}
	if g, _ := other.Get(ctx, rec.ID, "o"); g.Status != mcp.TaskStatusInputRequired || len(g.InputRequests) != 1 {
		t.Errorf("after one answer: %s with %v", g.Status, g.InputRequests)
	}
	other.Answer(ctx, rec.ID, "o", map[string]json.RawMessage{"b": json.RawMessage(`2`)})
	select {
	case got := <-heard:
		if got != "b=2" {
			t.Errorf("heard %s, want b=2", got)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the second answer did not reach the holder")
	}
	if g, _ := other.Get(ctx, rec.ID, "o"); g.Status != mcp.TaskStatusWorking {
		t.Errorf("every key answered: %s, want working", g.Status)
	}
}
