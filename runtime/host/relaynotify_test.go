package host_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/cluster"
)

// moreCall is a 2026-07-28 tools/call of tool with extra in its _meta (a
// progress token, a log level), a retry when state is set.
func moreCall(tool, extra, state string) string {
	meta := `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}`
	if extra != "" {
		meta += "," + extra
	}
	p := `"_meta":{` + meta + `},"name":"` + tool + `","arguments":{}`
	if state != "" {
		p += fmt.Sprintf(`,"requestState":%q,"inputResponses":%s`, state, adaAnswer)
	}
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + p + `}}`
}

// postMessages posts body and delivers every JSON-RPC message of its answer (one
// JSON body, or each SSE event's), closing the channel at its end;
// cancelling ctx closes the request.
func postMessages(t *testing.T, ctx context.Context, url, tool, body string) <-chan map[string]any {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range modernHeaders("tools/call", tool) {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan map[string]any, 16)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		sse := strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if sse {
				d, ok := strings.CutPrefix(line, "data: ")
				if !ok {
					continue
				}
				line = d
			}
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil {
				out <- m
			}
		}
	}()
	return out
}

// all is every message of a request's answer.
func all(t *testing.T, url, tool, body string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var got []string
	for m := range postMessages(t, ctx, url, tool, body) {
		raw, _ := json.Marshal(m) // keys sorted: one shape, one text
		got = append(got, string(raw))
	}
	return got
}

// TestRelayedRetryHearsItsNotifications: the progress and log messages a
// parked call sends once answered reach the client whose retry landed on
// another replica, on its SSE stream, in order, before the result, and
// exactly the ones (the same messages) the retry would have heard on the
// replica holding the call: progress only with a progress token, logs at
// or above the level the retry asked for.
func TestRelayedRetryHearsItsNotifications(t *testing.T) {
	eachBackend(t, func(t *testing.T, join func() *cluster.Cluster) {
		rs := startReplicas(t, 2, join, nil)
		a, b := rs[0], rs[1]
		park := func() string {
			t.Helper()
			_, _, msg := rpc(t, a.url, "", modernHeaders("tools/call", "askmore"), moreCall("askmore", `"progressToken":"first","io.modelcontextprotocol/logLevel":"debug"`, ""))
			res, _ := msg["result"].(map[string]any)
			state, _ := res["requestState"].(string)
			if res["resultType"] != "input_required" || state == "" {
				t.Fatalf("askmore: want input_required, got %v", msg)
			}
			return state
		}
		for _, tc := range []struct {
			name, meta string
			want       []string // the methods, then the result's text
		}{
			{"progress and info", `"progressToken":"retry","io.modelcontextprotocol/logLevel":"info"`,
				[]string{"notifications/progress", "notifications/message", "hello Ada"}},
			{"debug too", `"progressToken":7,"io.modelcontextprotocol/logLevel":"debug"`,
				[]string{"notifications/progress", "notifications/message", "notifications/message", "hello Ada"}},
			{"no token, warnings only", `"io.modelcontextprotocol/logLevel":"warning"`, []string{"hello Ada"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				direct := all(t, a.url, "askmore", moreCall("askmore", tc.meta, park()))
				relayed := all(t, b.url, "askmore", moreCall("askmore", tc.meta, park()))
				if got := shape(t, relayed); fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Fatalf("the retry on B heard %v, want %v:\n%s", got, tc.want, strings.Join(relayed, "\n"))
				}
				if fmt.Sprint(direct) != fmt.Sprint(relayed) {
					t.Fatalf("the retry on B heard\n%s\nthe retry on A\n%s", strings.Join(relayed, "\n"), strings.Join(direct, "\n"))
				}
			})
		}
	})
}

// shape is each message's method, and the result's text for the last.
func shape(t *testing.T, msgs []string) []string {
	t.Helper()
	var out []string
	for _, raw := range msgs {
		var m map[string]any
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatal(err)
		}
		if method, ok := m["method"].(string); ok {
			out = append(out, method)
			continue
		}
		out = append(out, resultText(m))
	}
	return out
}

// TestRelayedRetryCancelled: a client that closes its retry's stream on B
// cancels the call on A, as closing it on A would: the upstream's call is
// cancelled.
func TestRelayedRetryCancelled(t *testing.T) {
	eachBackend(t, func(t *testing.T, join func() *cluster.Cluster) {
		rs := startReplicas(t, 2, join, nil)
		a, b := rs[0], rs[1]
		_, _, msg := rpc(t, a.url, "", modernHeaders("tools/call", "askhold"), moreCall("askhold", `"progressToken":"first"`, ""))
		res, _ := msg["result"].(map[string]any)
		state, _ := res["requestState"].(string)
		if res["resultType"] != "input_required" || state == "" {
			t.Fatalf("askhold: want input_required, got %v", msg)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		msgs := postMessages(t, ctx, b.url, "askhold", moreCall("askhold", `"progressToken":"retry"`, state))
		// The progress says the call on A runs on, answered.
		select {
		case m := <-msgs:
			if m["method"] != "notifications/progress" {
				t.Fatalf("the retry on B heard %v first", m)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the retry on B heard no progress")
		}
		cancel()
		select {
		case name := <-a.cancelled:
			if name != "Ada" {
				t.Fatalf("cancelled the call answered %q", name)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the call on A was not cancelled when its retry on B was")
		}
	})
}
