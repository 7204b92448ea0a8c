package tasks

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

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
