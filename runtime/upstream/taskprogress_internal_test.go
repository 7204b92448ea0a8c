package upstream

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// progressRecorder is the edge's notifier for a client that gave token "t".
type progressRecorder struct {
	got []*mcp.ProgressNotificationParams
}

func (r *progressRecorder) ProgressToken() json.RawMessage { return json.RawMessage(`"t"`) }
func (r *progressRecorder) LogLevel() mcp.LoggingLevel     { return "" }
func (r *progressRecorder) Notify(method string, params any) bool {
	if p, ok := params.(*mcp.ProgressNotificationParams); ok && method == mcp.MethodNotificationsProgress {
		r.got = append(r.got, p)
	}
	return true
}

// TestProgressGuardJoinsSources: a followed task's statusMessages become
// progress 1, 2 (each once, while working); the upstream's own progress
// that would not increase (1 of 3 after 2) is dropped, the next (3 of 3)
// goes, and statusMessages are relayed no more once the upstream reports
// progress itself.
func TestProgressGuardJoinsSources(t *testing.T) {
	rec := &progressRecorder{}
	ctx := guardProgress(server.WithNotifier(context.Background(), rec))
	working := func(msg string) *mcp.GetTaskResult {
		return &mcp.GetTaskResult{Status: mcp.TaskStatusWorking, StatusMessage: msg}
	}
	describeTask(ctx, working("one"))
	describeTask(ctx, working("one")) // the same message: nothing new
	describeTask(ctx, &mcp.GetTaskResult{Status: mcp.TaskStatusInputRequired, StatusMessage: "blocked"})
	describeTask(ctx, working("two"))
	three := 3.0
	server.Progress(ctx, 1, three, "upstream 1") // not past 2: dropped
	server.Progress(ctx, 3, three, "upstream 3")
	describeTask(ctx, working("four")) // the upstream reports its own now
	var values []float64
	var messages []string
	for _, p := range rec.got {
		values, messages = append(values, p.Progress), append(messages, p.Message)
	}
	if !slices.Equal(values, []float64{1, 2, 3}) || !slices.Equal(messages, []string{"one", "two", "upstream 3"}) {
		t.Fatalf("the client got progress %v %q, want [1 2 3] [one two upstream 3]", values, messages)
	}
}
