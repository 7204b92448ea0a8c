package host_test

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	hub "github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/config"
	"github.com/mcpx-dev/mcpx/runtime/demo"
	"github.com/mcpx-dev/mcpx/runtime/host"
	"github.com/mcpx-dev/mcpx/runtime/requeststate"
)

// serveReplica serves the demo namespace with its tasks in the store at
// url; states are sealed under states (shared by replicas).
func serveReplica(t *testing.T, url string, states *requeststate.Sealer) string {
	t.Helper()
	store, closeStore, err := host.TaskStore(url, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeStore() })
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	c := host.Config{NS: demo.NewWith(states), Info: hub.Implementation{Name: "mcpx", Version: "test"},
		Tasks: host.TaskOptionsIn(config.TaskSettings{After: 20 * time.Millisecond}, store)}
	go func() { done <- host.HTTP(ctx, c, "127.0.0.1:0", func(u string) { urls <- u }) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case u := <-urls:
		return u
	case err := <-done:
		t.Fatal(err)
	case <-time.After(10 * time.Second):
		t.Fatal("not serving")
	}
	return ""
}

// TestTaskOnAnotherReplica: two replicas on one Redis store: a task one
// of them started is read, to its end, on the other.
func TestTaskOnAnotherReplica(t *testing.T) {
	m := miniredis.RunT(t)
	states := requeststate.Random()
	a := serveReplica(t, "redis://"+m.Addr(), states)
	b := serveReplica(t, "redis://"+m.Addr(), states)
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	_, _, msg := rpc(t, a, "", modernHeaders("tools/call", "countdown"), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+meta+`,"name":"countdown","arguments":{"seconds":1}}}`)
	res, _ := msg["result"].(map[string]any)
	id, _ := res["taskId"].(string)
	if id == "" {
		t.Fatalf("no task: %v", msg)
	}
	get := `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{` + meta + `,"taskId":"` + id + `"}}`
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, _, msg := rpc(t, b, "", modernHeaders("tasks/get", id), get)
		res, _ := msg["result"].(map[string]any)
		if res == nil {
			t.Fatalf("tasks/get on the other replica: %v", msg)
		}
		if res["status"] == "completed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the task did not complete: %v", res)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
