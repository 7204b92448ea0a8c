package replicatest

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// A scenario runs on a cluster; the same table runs on three replicas on
// Redis and on one replica with the memory store.
type scenario struct {
	name string
	run  func(t *testing.T, c *cluster)
}

var scenarios = []scenario{
	{name: "modern/stateless", run: stateless},
	{name: "modern/requestState/shared-upstream", run: func(t *testing.T, c *cluster) { multiRound(t, c, "fx__") }},
	{name: "modern/requestState/own-stdio-upstream", run: func(t *testing.T, c *cluster) { multiRound(t, c, "local__") }},
	{name: "modern/requestState/tampered", run: tampered},
	{name: "tasks/modern/poll", run: taskPoll},
	{name: "tasks/modern/update", run: taskUpdate},
	{name: "tasks/modern/cancel", run: taskCancel},
	{name: "tasks/modern/ownership", run: taskOwnership},
	{name: "tasks/legacy/2025-11-25", run: legacyTask},
	{name: "legacy/revisions", run: legacyRevisions},
}

func runScenarios(t *testing.T, c *cluster) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			sc.run(t, c)
		})
	}
}

// TestReplicasOnRedis: three replicas, one Redis, round robin.
func TestReplicasOnRedis(t *testing.T) {
	runScenarios(t, start(t, setup{replicas: 3, redis: true}))
}

// TestOneReplicaInMemory: the same scenarios on one mcpx with the memory
// store.
func TestOneReplicaInMemory(t *testing.T) {
	runScenarios(t, start(t, setup{replicas: 1}))
}

// stateless: 2026-07-28 lists and calls, of the shared upstream and of
// each replica's own, each request on the next replica.
func stateless(t *testing.T, c *cluster) {
	m := &modern{t: t, url: c.url, token: aliceToken}
	mark := c.proxy.mark()
	for i := range 2 * c.replicas {
		a := m.do("tools/list", "", "")
		if !strings.Contains(text(a.result()), "fx__greet") || !strings.Contains(text(a.result()), "local__greet") {
			t.Fatalf("tools/list: %v", a)
		}
		for _, tool := range []string{"fx__greet", "local__greet"} {
			who := fmt.Sprintf("n%d", i)
			a = m.call(tool, `{"name":"`+who+`"}`, "")
			if !strings.Contains(text(a.result()), "Hello, "+who+"!") {
				t.Fatalf("%s: %v", tool, a)
			}
		}
	}
	if got := c.proxy.spread(mark); len(got) != c.replicas {
		t.Errorf("requests went to %v, want every one of %d replicas", got, c.replicas)
	}
}

// multiRound: an MRTR exchange of three requests (two input_required
// rounds, then the result), each on the next replica: the requestState
// one replica sealed opens on the next (mcpx.stateKey shared).
func multiRound(t *testing.T, c *cluster, prefix string) {
	m := &modern{t: t, url: c.url, token: aliceToken}
	tool := prefix + "test_input_required_result_multi_round"
	a := m.call(tool, `{}`, "")
	res := a.result()
	state, _ := res["requestState"].(string)
	if res["resultType"] != "input_required" || state == "" || !strings.Contains(text(res), "step1") {
		t.Fatalf("round 1: %v", a)
	}
	a = m.call(tool, `{}`, `,"inputResponses":{"step1":{"action":"accept","content":{"name":"Ada"}}},"requestState":"`+state+`"`)
	res = a.result()
	state, _ = res["requestState"].(string)
	if res["resultType"] != "input_required" || state == "" || !strings.Contains(text(res), "step2") {
		t.Fatalf("round 2 (another replica): %v", a)
	}
	a = m.call(tool, `{}`, `,"inputResponses":{"step2":{"action":"accept","content":{"color":"green"}}},"requestState":"`+state+`"`)
	if !strings.Contains(text(a.result()), "Ada's favorite color is green") {
		t.Fatalf("round 3 (a third replica): %v", a)
	}
}

// tampered: a requestState altered by the client is refused on whichever
// replica the retry lands.
func tampered(t *testing.T, c *cluster) {
	m := &modern{t: t, url: c.url, token: aliceToken}
	tool := "fx__test_input_required_result_tampered_state"
	for range c.replicas {
		a := m.call(tool, `{}`, "")
		state, _ := a.result()["requestState"].(string)
		if state == "" {
			t.Fatalf("round 1: %v", a)
		}
		bad := state[:len(state)-2] + "xx"
		if bad == state {
			bad = state[:len(state)-2] + "yy"
		}
		a = m.call(tool, `{}`, `,"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},"requestState":"`+bad+`"`)
		if code, _ := a.err(); code == 0 {
			t.Fatalf("a tampered requestState was accepted: %v", a)
		}
	}
}

// newTask starts tool as a task (a 2026-07-28 server-directed one).
func newTask(t *testing.T, m *modern, tool, args string) string {
	t.Helper()
	id, _ := newTaskOn(t, nil, m, tool, args)
	return id
}

// newTaskOn is newTask, and the replica it started on (c may be nil).
func newTaskOn(t *testing.T, c *cluster, m *modern, tool, args string) (string, int) {
	t.Helper()
	holder := 0
	if c != nil {
		holder = c.proxy.nextIs(c.replicas)
	}
	a := m.call(tool, args, "")
	id, _ := a.result()["taskId"].(string)
	if a.result()["resultType"] != "task" || id == "" {
		t.Fatalf("%s did not become a task: %v", tool, a)
	}
	return id, holder
}

// awayFrom makes the next request through the proxy land on a replica
// other than holder (when there are others), by a tasks/get of id.
func awayFrom(c *cluster, m *modern, holder int, id string) {
	for c.replicas > 1 && c.proxy.nextIs(c.replicas) == holder {
		m.task("tasks/get", id, "")
	}
}

// taskPoll: a task started on one replica is followed to its result on
// the others.
func taskPoll(t *testing.T, c *cluster) {
	m := &modern{t: t, url: c.url, token: aliceToken}
	id := newTask(t, m, "fx__slow_compute", `{"seconds":1,"label":"poll"}`)
	res := m.until(id, 20*time.Second, status("completed"))
	if !strings.Contains(text(res), "Computed poll after 1s") {
		t.Errorf("completed: %v", res)
	}
}

// taskUpdate: a task's question is answered (tasks/update) on another
// replica than the one running its call.
func taskUpdate(t *testing.T, c *cluster) {
	m := &modern{t: t, url: c.url, token: aliceToken}
	id, holder := newTaskOn(t, c, m, "fx__confirm_delete", `{"filename":"notes.txt"}`)
	res := m.until(id, 20*time.Second, status("input_required"))
	var key string
	if q, _ := res["inputRequests"].(map[string]any); len(q) == 1 {
		for k := range q {
			key = k
		}
	}
	if key == "" {
		t.Fatalf("input_required without one question: %v", res)
	}
	awayFrom(c, m, holder, id)
	a := m.task("tasks/update", id, `,"inputResponses":{"`+key+`":{"action":"accept","content":{"confirm":true}}}`)
	if a.result() == nil {
		t.Fatalf("tasks/update: %v", a)
	}
	res = m.until(id, 20*time.Second, status("completed"))
	if !strings.Contains(text(res), "notes.txt") {
		t.Errorf("completed: %v", res)
	}
}

// taskCancel: cancelled on another replica, seen cancelled on a third.
func taskCancel(t *testing.T, c *cluster) {
	m := &modern{t: t, url: c.url, token: aliceToken}
	id, holder := newTaskOn(t, c, m, "fx__slow_compute", `{"seconds":60}`)
	awayFrom(c, m, holder, id)
	if a := m.task("tasks/cancel", id, ""); a.result() == nil {
		t.Fatalf("tasks/cancel: %v", a)
	}
	m.until(id, 5*time.Second, status("cancelled"))
}

// taskOwnership: alice's task is nobody else's, on every replica.
func taskOwnership(t *testing.T, c *cluster) {
	alice := &modern{t: t, url: c.url, token: aliceToken}
	bob := &modern{t: t, url: c.url, token: bobToken}
	id := newTask(t, alice, "fx__slow_compute", `{"seconds":2}`)
	for range c.replicas {
		for _, method := range []string{"tasks/get", "tasks/cancel"} {
			if code, _ := bob.task(method, id, "").err(); code != -32602 {
				t.Errorf("bob's %s of alice's task: code %v, want -32602", method, code)
			}
		}
	}
	alice.until(id, 20*time.Second, status("completed"))
}

// legacy is a client of a legacy revision on one session.
type legacy struct {
	t     *testing.T
	url   string
	rev   string
	sid   string
	n     int
	token string
}

func openLegacy(t *testing.T, url, rev string) *legacy {
	l := &legacy{t: t, url: url, rev: rev, token: aliceToken}
	a := post(t, url, l.token, nil, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+rev+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	l.sid = a.header.Get("Mcp-Session-Id")
	if a.result() == nil || l.sid == "" {
		t.Fatalf("initialize %s: %v", rev, a)
	}
	if a := post(t, url, l.token, l.hdr(), `{"jsonrpc":"2.0","method":"notifications/initialized"}`); a.status != 202 {
		t.Fatalf("initialized: %v", a)
	}
	return l
}

func (l *legacy) hdr() map[string]string {
	return map[string]string{"Mcp-Session-Id": l.sid, "MCP-Protocol-Version": l.rev}
}

func (l *legacy) do(method, params string) answer {
	l.t.Helper()
	l.n++
	return post(l.t, l.url, l.token, l.hdr(), fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, l.n, method, params))
}

// legacyTask: a 2025-11-25 client-directed task, polled and its result
// read on its session.
func legacyTask(t *testing.T, c *cluster) {
	l := openLegacy(t, c.url, "2025-11-25")
	a := l.do("tools/call", `{"name":"fx__slow_compute","arguments":{"seconds":1,"label":"old"},"task":{"ttl":60000}}`)
	task, _ := a.result()["task"].(map[string]any)
	id, _ := task["taskId"].(string)
	if id == "" {
		t.Fatalf("no task: %v", a)
	}
	if a := l.do("tasks/get", `{"taskId":"`+id+`"}`); a.result() == nil {
		t.Fatalf("tasks/get: %v", a)
	}
	a = l.do("tasks/result", `{"taskId":"`+id+`"}`)
	if !strings.Contains(text(a.result()), "Computed old after 1s") {
		t.Fatalf("tasks/result: %v", a)
	}
	if a := l.do("tasks/list", `{}`); !strings.Contains(text(a.result()), id) {
		t.Errorf("tasks/list: %v", a)
	}
}

// legacyRevisions: each legacy revision lists and calls on its session,
// its requests spread over every replica (the session shared in Redis).
func legacyRevisions(t *testing.T, c *cluster) {
	mark := c.proxy.mark()
	defer func() {
		if got := c.proxy.spread(mark); len(got) != c.replicas {
			t.Errorf("requests went to %v, want every one of %d replicas", got, c.replicas)
		}
	}()
	for _, rev := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
		l := openLegacy(t, c.url, rev)
		if a := l.do("tools/list", `{}`); !strings.Contains(text(a.result()), "fx__greet") {
			t.Fatalf("%s tools/list: %v", rev, a)
		}
		if a := l.do("tools/call", `{"name":"local__greet","arguments":{"name":"`+rev+`"}}`); !strings.Contains(text(a.result()), "Hello, "+rev) {
			t.Fatalf("%s tools/call: %v", rev, a)
		}
	}
}
