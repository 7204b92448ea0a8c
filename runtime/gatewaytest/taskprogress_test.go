package gatewaytest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/testkit/wiretest"
)

// Progress of a task an upstream makes of a call reaches the client on
// the token of its call, in its own era (upstream/taskprogress.go,
// edge/tasks_legacy.go, edge/taskprogress.go). The tasker's steps tool
// works in three steps: a 2025-11-25 upstream reports progress N of 3 on
// the call's token (its progress page: the token stays valid for the
// task); a 2026-07-28 one, which has no progress for a task, says
// "step N of 3" in the statusMessage mcpx polls.

// progressOn is the progress notifications in wire (a client's received
// lines or SSE events) on token, in order: their values and messages, and
// the related-task each carries ("" none).
func progressOn(t *testing.T, wire, token string) (values []float64, messages, related []string) {
	t.Helper()
	for _, line := range strings.Split(wire, "\n") {
		line = strings.TrimPrefix(line, "data: ")
		var f wiretest.Frame
		if json.Unmarshal([]byte(line), &f) != nil || f.Method != "notifications/progress" {
			continue
		}
		var p struct {
			ProgressToken json.RawMessage `json:"progressToken"`
			Progress      float64         `json:"progress"`
			Message       string          `json:"message"`
			Meta          map[string]struct {
				TaskID string `json:"taskId"`
			} `json:"_meta"`
		}
		if err := json.Unmarshal(f.Params, &p); err != nil {
			t.Errorf("progress params: %v in %s", err, line)
			continue
		}
		if string(p.ProgressToken) != `"`+token+`"` {
			t.Errorf("progress on token %s, want the client's %q: %s", p.ProgressToken, token, line)
		}
		values, messages = append(values, p.Progress), append(messages, p.Message)
		related = append(related, p.Meta["io.modelcontextprotocol/related-task"].TaskID)
	}
	return values, messages, related
}

// wantSteps checks progress values increase and at least two of the
// three steps were told.
func wantSteps(t *testing.T, who string, values []float64, messages []string) {
	t.Helper()
	for i := 1; i < len(values); i++ {
		if values[i] <= values[i-1] {
			t.Errorf("%s: progress %v does not increase", who, values)
		}
	}
	steps := 0
	for _, m := range messages {
		if strings.HasPrefix(m, "step ") {
			steps++
		}
	}
	if steps < 2 {
		t.Errorf("%s: progress %v %q, want at least two of the three steps", who, values, messages)
	}
}

// TestUpstreamTaskProgressRelayed: for an upstream of each task flavour
// over stdio and HTTP, progress of the task it makes of a call reaches
// the client's token: a call that blocks (2025-06-18) gets it on its own
// stream; a 2025-11-25 client holding mcpx's task gets it on its
// tasks/result stream, tagged with mcpx's task; a 2026-07-28 client
// holding mcpx's task (no stream is left for it, the extension has no
// task progress) reads it as the task's statusMessage on tasks/get. A
// client that gave no token gets no progress. Every message is validated
// closed-world (serveHTTP, serveStdio, checkTaskWire).
func TestUpstreamTaskProgressRelayed(t *testing.T) {
	for _, rev := range []string{"2025-11-25", "2026-07-28"} {
		for _, tr := range []string{"stdio", "http"} {
			t.Run(rev+" upstream over "+tr, func(t *testing.T) {
				gw, _ := taskerGateway(t, tr, rev)

				blocking := b3Client(t, gw, tr, "2025-06-18", `{}`)
				a := b3Request(blocking, "tools/call", `{"name":"up__steps","arguments":{},"_meta":{"progressToken":"ct"}}`)
				if got := oneLine(a.final); got != "steps done" {
					t.Fatalf("blocking call answered %q", got)
				}
				values, messages, _ := progressOn(t, a.wire, "ct")
				wantSteps(t, "2025-06-18 blocking call", values, messages)

				a = b3Request(blocking, "tools/call", `{"name":"up__steps","arguments":{}}`)
				if got := oneLine(a.final); got != "steps done" || strings.Contains(a.wire, "notifications/progress") {
					t.Errorf("a call without a token answered %q and got:\n%s", got, a.wire)
				}

				legacy := b3Client(t, gw, tr, "2025-11-25", `{}`)
				h := b3Request(legacy, "tools/call", `{"name":"up__steps","arguments":{},"task":{},"_meta":{"progressToken":"lt"}}`)
				var created struct {
					Task struct{ TaskID string } `json:"task"`
				}
				if json.Unmarshal(h.final.Result, &created) != nil || created.Task.TaskID == "" {
					t.Fatalf("tools/call with task: %s", h.wire)
				}
				r := b3Request(legacy, "tasks/result", `{"taskId":"`+created.Task.TaskID+`"}`)
				if got := oneLine(r.final); got != "steps done" {
					t.Fatalf("tasks/result answered %q", got)
				}
				values, messages, related := progressOn(t, h.wire+"\n"+r.wire, "lt")
				wantSteps(t, "2025-11-25 task's tasks/result", values, messages)
				for _, id := range related {
					if id != created.Task.TaskID {
						t.Errorf("progress tagged with task %q, want mcpx's %q", id, created.Task.TaskID)
					}
				}

				modern := newModernClient(t, gw, tr)
				seen := modernTaskMessages(t, modern, "up__steps")
				steps := 0
				for _, m := range seen {
					if strings.HasPrefix(m, "step ") {
						steps++
					}
				}
				if steps < 2 {
					t.Errorf("2026-07-28 task: statusMessages %q on tasks/get, want at least two of the steps", seen)
				}
			})
		}
	}
}

const modernTaskMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"progress-test","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}},"progressToken":"mt"}`

// modernTaskMessages calls tool as a 2026-07-28 client that declared the
// extension and gave a progress token, polls the task it is handed until
// it ends, and returns the statusMessages it saw while it worked.
func modernTaskMessages(t *testing.T, c *modernClient, tool string) []string {
	t.Helper()
	c.id++
	raw := c.send(c.id, "tools/call", tool, `{`+modernTaskMeta+`,"name":"`+tool+`","arguments":{}}`)
	var h struct {
		Result struct {
			ResultType string `json:"resultType"`
			TaskID     string `json:"taskId"`
		} `json:"result"`
	}
	if json.Unmarshal(raw, &h) != nil || h.Result.ResultType != "task" {
		t.Fatalf("tools/call: want a task handle, got %s", raw)
	}
	var seen []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(40 * time.Millisecond) {
		c.id++
		raw := c.send(c.id, "tasks/get", h.Result.TaskID, fmt.Sprintf(`{%s,"taskId":%q}`, modernTaskMeta, h.Result.TaskID))
		var g struct {
			Result struct {
				Status        string `json:"status"`
				StatusMessage string `json:"statusMessage"`
			} `json:"result"`
		}
		if json.Unmarshal(raw, &g) != nil {
			t.Fatalf("tasks/get: %s", raw)
		}
		if g.Result.Status != "working" {
			if g.Result.Status != "completed" {
				t.Errorf("the task ended %s: %s", g.Result.Status, raw)
			}
			return seen
		}
		if m := g.Result.StatusMessage; m != "" && (len(seen) == 0 || seen[len(seen)-1] != m) {
			seen = append(seen, m)
		}
	}
	t.Fatal("the task did not end in 10 s")
	return nil
}
