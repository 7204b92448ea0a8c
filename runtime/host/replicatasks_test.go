package host_test

// Task status across replicas (issue 19): a task's call runs on one
// replica; the status changes reach a 2026-07-28 listen, or a 2025-11-25
// session's stream, held on another, and a task failed because its
// replica died (its lease lapsed) is told too.

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	hub "github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/cluster"
	"github.com/mcpx-dev/mcpx/runtime/demo"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/host"
	"github.com/mcpx-dev/mcpx/runtime/internal/redistest"
	"github.com/mcpx-dev/mcpx/runtime/requeststate"
	"github.com/mcpx-dev/mcpx/runtime/tasks"
)

// taskBackend makes each replica's cluster and the task store they share.
type taskBackend struct {
	name  string
	join  func() *cluster.Cluster
	store func() tasks.Store
}

func taskBackends(t *testing.T) []taskBackend {
	redisAt := func(addr string) taskBackend {
		return taskBackend{join: redisBackend(addr), store: func() tasks.Store {
			s, closeStore, err := host.TaskStore("redis://"+addr, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { closeStore() })
			return s
		}}
	}
	mem := &tasks.Memory{}
	bs := []taskBackend{{name: "memory", join: memoryBackend(t), store: func() tasks.Store { return mem }}}
	mr := redisAt(miniredis.RunT(t).Addr())
	mr.name = "miniredis"
	bs = append(bs, mr)
	return bs
}

// eachTaskBackend runs f on the memory hub, miniredis and a redis-server.
func eachTaskBackend(t *testing.T, f func(t *testing.T, b taskBackend)) {
	for _, b := range taskBackends(t) {
		t.Run(b.name, func(t *testing.T) { f(t, b) })
	}
	t.Run("redis-server", func(t *testing.T) {
		addr := redistest.Server(t)
		f(t, taskBackend{name: "redis-server", join: redisBackend(addr), store: func() tasks.Store {
			s, closeStore, err := host.TaskStore("redis://"+addr, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { closeStore() })
			return s
		}})
	})
}

// taskReplica serves the demo namespace on b with task leases of lease;
// stop ends it (as a replica that dies: its calls are cut off).
func taskReplica(t *testing.T, b taskBackend, states *requeststate.Sealer, lease time.Duration) (url string, stop func()) {
	t.Helper()
	c := b.join()
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	cfg := host.Config{NS: demo.NewWith(states), Info: hub.Implementation{Name: "mcpx", Version: "test"}, Log: slog.New(slog.DiscardHandler), Cluster: c,
		Tasks: edge.TaskOptions{Runner: &tasks.Runner{Store: b.store(), Lease: lease}, After: 20 * time.Millisecond}}
	go func() { done <- host.HTTP(ctx, cfg, "127.0.0.1:0", func(u string) { urls <- u }) }()
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
			c.Close()
		}
	}
	t.Cleanup(stop)
	select {
	case u := <-urls:
		return u, stop
	case err := <-done:
		t.Fatal(err)
	case <-time.After(10 * time.Second):
		t.Fatal("not serving")
	}
	return "", nil
}

const taskMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// modernTask starts a countdown of seconds as a 2026-07-28 task on url.
func modernTask(t *testing.T, url string, seconds int) string {
	t.Helper()
	_, _, msg := rpc(t, url, "", modernHeaders("tools/call", "countdown"), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+taskMeta+`,"name":"countdown","arguments":{"seconds":`+string(rune('0'+seconds))+`}}}`)
	res, _ := msg["result"].(map[string]any)
	id, _ := res["taskId"].(string)
	if id == "" {
		t.Fatalf("no task: %v", msg)
	}
	return id
}

// stream sends method (GET or POST) to url and reads the SSE data lines
// of the answer into a channel, closed when the stream ends.
func stream(t *testing.T, method, url string, hdr map[string]string, body string) <-chan string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	req.Header.Set("Accept", "application/json, text/event-stream")
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("%s: %d %s %s", method, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				lines <- d
			}
		}
	}()
	return lines
}

// listenTask holds a 2026-07-28 listen following task id on url.
func listenTask(t *testing.T, url, id string) <-chan string {
	t.Helper()
	return stream(t, http.MethodPost, url, modernHeaders("subscriptions/listen", ""),
		`{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{`+taskMeta+`,"notifications":{"taskIds":["`+id+`"]}}}`)
}

// statusOf is the task status a notifications/tasks/status line tells
// for id, or "".
func statusOf(line, id string) (status string, params map[string]any) {
	var m struct {
		Method string         `json:"method"`
		Params map[string]any `json:"params"`
	}
	if json.Unmarshal([]byte(line), &m) != nil || m.Method != "notifications/tasks/status" || m.Params["taskId"] != id {
		return "", nil
	}
	s, _ := m.Params["status"].(string)
	return s, m.Params
}

// awaitStatus reads lines until one tells id's status want; it fails on
// another terminal status, or after wait.
func awaitStatus(t *testing.T, lines <-chan string, id, want string, wait time.Duration) map[string]any {
	t.Helper()
	deadline := time.After(wait)
	var seen []string
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the stream ended; statuses heard: %v", seen)
			}
			s, p := statusOf(l, id)
			if s == "" {
				continue
			}
			seen = append(seen, s)
			if s == want {
				return p
			}
			if tasks.Terminal(hub.TaskStatus(s)) {
				t.Fatalf("heard %s, want %s (%v)", s, want, p)
			}
		case <-deadline:
			t.Fatalf("no %s status for the task in %s; heard %v", want, wait, seen)
		}
	}
}

// TestListenHearsTaskOnAnotherReplica: a task's call runs on B; a
// listen on A following it hears it working, then completed with its
// result, as it changes on B; a listen on C hears it cancelled by a
// tasks/cancel on A.
func TestListenHearsTaskOnAnotherReplica(t *testing.T) {
	eachTaskBackend(t, func(t *testing.T, b taskBackend) {
		states := requeststate.Random()
		a, _ := taskReplica(t, b, states, 30*time.Second)
		bURL, _ := taskReplica(t, b, states, 30*time.Second)
		c, _ := taskReplica(t, b, states, 30*time.Second)

		done := modernTask(t, bURL, 1)
		onA := listenTask(t, a, done)
		awaitStatus(t, onA, done, "working", 5*time.Second) // its state when the listen began
		p := awaitStatus(t, onA, done, "completed", 10*time.Second)
		if !strings.Contains(toJSON(p["result"]), "content") {
			t.Errorf("the completed task without its result inline: %v", p)
		}

		cancelled := modernTask(t, bURL, 9)
		onC := listenTask(t, c, cancelled)
		awaitStatus(t, onC, cancelled, "working", 5*time.Second)
		_, _, msg := rpc(t, a, "", modernHeaders("tasks/cancel", cancelled), `{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{`+taskMeta+`,"taskId":"`+cancelled+`"}}`)
		if msg["error"] != nil {
			t.Fatalf("tasks/cancel on A: %v", msg)
		}
		awaitStatus(t, onC, cancelled, "cancelled", 5*time.Second)
	})
}

// TestLegacyTaskStatusOnAnotherReplica: a 2025-11-25 session's task runs
// on B and its GET stream is held on A: the stream hears the task's
// progress and its notifications/tasks/status (cancelled), which B's copy
// of the session forwards over the bus. (The tasks/cancel goes to B: a
// 2025-11-25 task belongs to the edge session's number on the replica
// that made it, which a copy elsewhere does not have.) This held before
// the runner's changes were published; it is here so that it keeps
// holding.
func TestLegacyTaskStatusOnAnotherReplica(t *testing.T) {
	eachTaskBackend(t, func(t *testing.T, b taskBackend) {
		states := requeststate.Random()
		a, _ := taskReplica(t, b, states, 30*time.Second)
		bURL, _ := taskReplica(t, b, states, 30*time.Second)
		const rev = "2025-11-25"
		sid := legacySessionAt(t, a, "", rev)
		hdr := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": rev}
		get := stream(t, http.MethodGet, a, hdr, "")
		_, _, msg := rpc(t, bURL, "", hdr, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"progressToken":"p1"},"name":"countdown","arguments":{"seconds":9},"task":{"ttl":60000}}}`)
		res, _ := msg["result"].(map[string]any)
		task, _ := res["task"].(map[string]any)
		id, _ := task["taskId"].(string)
		if id == "" {
			t.Fatalf("no task: %v", msg)
		}
		// A's stream's bus subscription may be on its way (Redis
		// subscribes asynchronously): B's progress reaching it says it is.
		deadline := time.After(10 * time.Second)
	wait:
		for {
			select {
			case l := <-get:
				if strings.Contains(l, "notifications/progress") {
					break wait
				}
			case <-deadline:
				t.Fatal("A's GET stream heard nothing of the task running on B")
			}
		}
		if _, _, msg := rpc(t, bURL, "", hdr, `{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"taskId":"`+id+`"}}`); msg["error"] != nil {
			t.Fatalf("tasks/cancel on B: %v", msg)
		}
		awaitStatus(t, get, id, "cancelled", 5*time.Second)
	})
}

// TestListenHearsLapsedTask: the replica running a task is gone (the
// task's record is as it left it: working, its lease running out, no
// runner anywhere renewing it); a listen on A following the task hears
// it failed once the lease lapsed, saying why, though no runner changed
// it, and hears that once.
func TestListenHearsLapsedTask(t *testing.T) {
	eachTaskBackend(t, func(t *testing.T, b taskBackend) {
		if b.name == "miniredis" {
			t.Skip("miniredis serves the same commands as redis-server, which runs this")
		}
		states := requeststate.Random()
		const lease = 600 * time.Millisecond
		a, _ := taskReplica(t, b, states, lease)
		now := time.Now().UTC()
		rec := &tasks.Record{ID: tasks.NewID(), Status: hub.TaskStatusWorking, CreatedAt: now, LastUpdatedAt: now,
			TTL: time.Hour, PollInterval: time.Second, LeaseUntil: now.Add(lease)}
		if err := b.store().Create(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
		onA := listenTask(t, a, rec.ID)
		awaitStatus(t, onA, rec.ID, "working", 5*time.Second)
		p := awaitStatus(t, onA, rec.ID, "failed", 10*time.Second)
		if !strings.Contains(toJSON(p), "stopped before it ended") {
			t.Errorf("the failed task does not say its replica stopped: %v", p)
		}
		quiet := time.After(time.Second) // three more checks of the lease
		for {
			select {
			case l := <-onA:
				if s, _ := statusOf(l, rec.ID); s != "" {
					t.Fatalf("heard the task again after its end: %s", l)
				}
				continue
			case <-quiet:
			}
			break
		}
	})
}

// TestLegacyTaskOnAnotherReplica: a 2025-11-25 session's task belongs to
// the session on every replica (its owner key travels in the session's
// record): started on B, it is listed, read, awaited and cancelled on A
// and C; another session gets not-found for it on every replica.
func TestLegacyTaskOnAnotherReplica(t *testing.T) {
	eachTaskBackend(t, func(t *testing.T, b taskBackend) {
		states := requeststate.Random()
		a, _ := taskReplica(t, b, states, 30*time.Second)
		bURL, _ := taskReplica(t, b, states, 30*time.Second)
		c, _ := taskReplica(t, b, states, 30*time.Second)
		const rev = "2025-11-25"
		hdr := map[string]string{"Mcp-Session-Id": legacySessionAt(t, a, "", rev), "MCP-Protocol-Version": rev}
		start := func(url string, seconds int) string {
			t.Helper()
			_, _, msg := rpc(t, url, "", hdr, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"countdown","arguments":{"seconds":`+string(rune('0'+seconds))+`},"task":{"ttl":60000}}}`)
			res, _ := msg["result"].(map[string]any)
			task, _ := res["task"].(map[string]any)
			id, _ := task["taskId"].(string)
			if id == "" {
				t.Fatalf("no task: %v", msg)
			}
			return id
		}
		call := func(url string, h map[string]string, method, id string) map[string]any {
			t.Helper()
			_, _, msg := rpc(t, url, "", h, `{"jsonrpc":"2.0","id":3,"method":"`+method+`","params":{"taskId":"`+id+`"}}`)
			return msg
		}

		id := start(bURL, 1)
		if msg := call(a, hdr, "tasks/get", id); msg["error"] != nil {
			t.Fatalf("tasks/get on A of B's task: %v", msg)
		}
		_, _, list := rpc(t, c, "", hdr, `{"jsonrpc":"2.0","id":4,"method":"tasks/list","params":{}}`)
		if !strings.Contains(mustJSON(t, list), id) {
			t.Fatalf("tasks/list on C leaves out B's task: %v", list)
		}
		res := call(a, hdr, "tasks/result", id)
		if r, _ := res["result"].(map[string]any); r == nil || r["content"] == nil {
			t.Fatalf("tasks/result on A of B's task: %v", res)
		}

		other := map[string]string{"Mcp-Session-Id": legacySessionAt(t, c, "", rev), "MCP-Protocol-Version": rev}
		for _, url := range []string{a, bURL, c} {
			if msg := call(url, other, "tasks/get", id); msg["error"] == nil {
				t.Fatalf("another session read the task: %v", msg)
			}
		}

		long := start(a, 9)
		if msg := call(c, hdr, "tasks/cancel", long); msg["error"] != nil {
			t.Fatalf("tasks/cancel on C of A's task: %v", msg)
		}
		if msg := call(bURL, hdr, "tasks/get", long); !strings.Contains(mustJSON(t, msg), `"cancelled"`) {
			t.Fatalf("tasks/get on B after the cancel: %v", msg)
		}
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
