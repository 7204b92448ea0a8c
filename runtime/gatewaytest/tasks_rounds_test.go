package gatewaytest

// An upstream task's questions asked at once travel as one round (issue
// 13): the tasker's "pair" tool (a 2026-07-28 upstream task, over stdio
// and Streamable HTTP) shows two inputRequests at once on its tasks/get.
// A 2026-07-28 client that declared the tasks extension sees both at once
// on its own task's tasks/get; a tasks/update answering one of them is
// passed on to the upstream at once (partial fulfillment) while the other
// stays outstanding; answering that one too completes the task. A legacy
// client (2025-06-18, 2025-11-25) gets both as concurrent requests, each
// answer passed on as it comes.

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/tasks"
	"github.com/mcpx-dev/mcpx/testkit/wiretest"
)

// pairQuestions are the "pair" tool's two questions, by key.
func pairQuestions() map[string]any {
	q := func(text string) map[string]any {
		return map[string]any{"method": "elicitation/create", "params": map[string]any{"message": text,
			"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}}
	}
	return map[string]any{"first_q": q(pairFirst), "second_q": q(pairSecond)}
}

const (
	pairFirst  = "First name?"
	pairSecond = "Second name?"
)

// extClientMeta is the _meta of a 2026-07-28 client that declared the
// tasks extension and form elicitation.
const extClientMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"rounds-test","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// extTask is a tasks/get answer as the test reads it.
type extTask struct {
	TaskID        string                     `json:"taskId"`
	ResultType    string                     `json:"resultType"`
	Status        string                     `json:"status"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	Result        *struct {
		Content []struct{ Text string } `json:"content"`
	} `json:"result"`
}

// extRequest sends a 2026-07-28 request carrying extClientMeta and
// returns its result, failing on an error.
func extRequest(t *testing.T, c *modernClient, method, name, params string) extTask {
	t.Helper()
	c.id++
	raw := c.send(c.id, method, name, "{"+extClientMeta+","+params+"}")
	var f wiretest.Frame
	if err := json.Unmarshal(raw, &f); err != nil || f.Error != nil {
		t.Fatalf("%s answered %s", method, raw)
	}
	var r extTask
	if err := json.Unmarshal(f.Result, &r); err != nil {
		t.Fatalf("%s: %v in %s", method, err, raw)
	}
	return r
}

// keyAsking is the key of the inputRequests entry whose message is text.
func keyAsking(reqs map[string]json.RawMessage, text string) string {
	for k, raw := range reqs {
		if strings.Contains(string(raw), text) {
			return k
		}
	}
	return ""
}

// pollTask polls tasks/get for id until ok holds (at most 5 s), and
// returns the last answer.
func pollTask(t *testing.T, c *modernClient, id string, ok func(extTask) bool) extTask {
	t.Helper()
	var g extTask
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(25 * time.Millisecond) {
		g = extRequest(t, c, "tasks/get", id, fmt.Sprintf(`"taskId":%q`, id))
		if ok(g) {
			break
		}
	}
	return g
}

// updates is every tasks/update the tasker saw, in order ("update ID KEYS").
func updates(t *testing.T, u *taskerUp) []string {
	var out []string
	for _, l := range u.seen(t) {
		if strings.HasPrefix(l, "update ") {
			out = append(out, l)
		}
	}
	return out
}

// waitUpdates waits up to 5 s for the tasker to have seen n tasks/update.
func waitUpdates(t *testing.T, u *taskerUp, n int) []string {
	var got []string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got = updates(t, u); len(got) >= n {
			break
		}
	}
	return got
}

// TestUpstreamTaskQuestionsOneRoundExtension: the 2026-07-28 client with
// the extension sees both questions at once, answers one (passed on at
// once, the other still outstanding), then the other, and the task
// completes with both answers.
func TestUpstreamTaskQuestionsOneRoundExtension(t *testing.T) {
	for _, tr := range []string{"stdio", "http"} {
		t.Run("2026-07-28 upstream over "+tr, func(t *testing.T) {
			gw, u := taskerGateway(t, tr, "2026-07-28")
			c := newModernClient(t, gw, tr)
			h := extRequest(t, c, "tools/call", "up__pair", `"name":"up__pair","arguments":{}`)
			if h.ResultType != "task" || h.TaskID == "" {
				t.Fatalf("up__pair answered %+v, want a task handle", h)
			}
			id := h.TaskID
			g := pollTask(t, c, id, func(g extTask) bool { return g.Status == "input_required" && len(g.InputRequests) >= 2 })
			first, second := keyAsking(g.InputRequests, pairFirst), keyAsking(g.InputRequests, pairSecond)
			if g.Status != "input_required" || len(g.InputRequests) != 2 || first == "" || second == "" {
				t.Fatalf("tasks/get showed %+v, want input_required with both questions at once", g)
			}

			// Partial: the first answer goes to the upstream at once.
			extRequest(t, c, "tasks/update", id, fmt.Sprintf(`"taskId":%q,"inputResponses":{%q:{"action":"accept","content":{"name":"Ada"}}}`, id, first))
			if got := waitUpdates(t, u, 1); len(got) != 1 || !strings.HasSuffix(got[0], " first_q") {
				t.Errorf("after the partial tasks/update the upstream saw %q, want one tasks/update answering first_q", got)
			}
			g = extRequest(t, c, "tasks/get", id, fmt.Sprintf(`"taskId":%q`, id))
			if g.Status != "input_required" || len(g.InputRequests) != 1 || g.InputRequests[second] == nil {
				t.Errorf("after the partial tasks/update tasks/get showed %+v, want input_required with only %q", g, second)
			}

			extRequest(t, c, "tasks/update", id, fmt.Sprintf(`"taskId":%q,"inputResponses":{%q:{"action":"accept","content":{"name":"Bob"}}}`, id, second))
			g = pollTask(t, c, id, func(g extTask) bool { return g.Status == "completed" })
			if g.Status != "completed" || g.Result == nil || len(g.Result.Content) != 1 || g.Result.Content[0].Text != "Hello, Ada and Bob!" {
				t.Errorf("the task ended %+v, want completed greeting Ada and Bob", g)
			}
			if got := updates(t, u); len(got) != 2 || !strings.HasSuffix(got[1], " second_q") {
				t.Errorf("the upstream saw %q, want the two answers in two tasks/update", got)
			}
		})
	}
}

// TestUpstreamTaskQuestionsConcurrentLegacy: a legacy client gets both
// questions as requests outstanding at once; the first answer reaches the
// upstream before the second is given.
func TestUpstreamTaskQuestionsConcurrentLegacy(t *testing.T) {
	for _, rev := range []string{"2025-06-18", "2025-11-25"} {
		for _, tr := range []string{"stdio", "http"} {
			t.Run(rev+" client, upstream over "+tr, func(t *testing.T) {
				gw, u := taskerGateway(t, tr, "2026-07-28")
				c := b3Client(t, gw, tr, rev, `{"elicitation":{}}`)
				s := b3Start(t, c, "up__pair")
				defer s.done()
				qs := map[string]wiretest.Frame{}
				for len(qs) < 2 {
					f, ok := s.next()
					if !ok {
						t.Fatalf("got %d of the two questions before the call's stream went quiet; want both at once", len(qs))
					}
					switch {
					case f.Method == "elicitation/create" && strings.Contains(string(f.Params), pairFirst):
						qs["first"] = f
					case f.Method == "elicitation/create" && strings.Contains(string(f.Params), pairSecond):
						qs["second"] = f
					case !f.IsRequest() && f.Method == "":
						t.Fatalf("the call was answered before both questions came: %+v", f)
					}
				}
				answer := func(q wiretest.Frame, name string) {
					s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":%q}}}`, q.ID, name))
				}
				answer(qs["first"], "Ada")
				if got := waitUpdates(t, u, 1); len(got) != 1 || !strings.HasSuffix(got[0], " first_q") {
					t.Errorf("after the first answer the upstream saw %q, want it passed on alone", got)
				}
				answer(qs["second"], "Bob")
				for {
					f, ok := s.next()
					if !ok {
						t.Fatal("no answer to the call")
					}
					if f.IsRequest() || f.Method != "" {
						continue
					}
					if got := oneLine(f); got != "Hello, Ada and Bob!" {
						t.Errorf("up__pair answered %q, want the greeting of both", got)
					}
					break
				}
				if got := updates(t, u); len(got) != 2 {
					t.Errorf("the upstream saw %q, want two tasks/update", got)
				}
			})
		}
	}
}

// TestUpstreamTaskQuestionsStoreFull: when mcpx's task store is full, a
// 2026-07-28 call whose upstream made a task goes on inline, and the
// task's questions reach the client as an input_required answer to the
// call (the parked call's round) instead of waiting for a task of mcpx's
// that will not come.
func TestUpstreamTaskQuestionsStoreFull(t *testing.T) {
	gw, _ := taskerGateway(t, "http", "2026-07-28")
	endpoint, hc := serveHTTPTasks(t, gw, "2026-07-28", edge.TaskOptions{Runner: &tasks.Runner{Store: &tasks.Memory{Max: 1}}})
	c := &modernClient{t: t}
	c.send = func(id int, method, name, params string) []byte {
		resp, err := postJSON(t.Context(), hc, endpoint, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": name},
			fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
		if err != nil {
			t.Error(err)
			return nil
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return lastData(body)
	}
	if h := extRequest(t, c, "tools/call", "up__forever", `"name":"up__forever","arguments":{}`); h.ResultType != "task" {
		t.Fatalf("up__forever answered %+v, want the task that fills the store", h)
	}
	got := within(t, 10*time.Second, func() string {
		c.id++
		return string(c.send(c.id, "tools/call", "up__pair", `{`+extClientMeta+`,"name":"up__pair","arguments":{}}`))
	})
	var a mrtrAnswer
	if json.Unmarshal([]byte(got), &a) != nil || a.Result == nil || a.Result.ResultType != "input_required" || len(a.Result.InputRequests) == 0 {
		t.Errorf("up__pair with the store full answered %s, want its questions input_required", got)
	}
}
