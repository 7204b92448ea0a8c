package gatewaytest

// "session": "per-client" (issue 12): each legacy client session gets an
// upstream of its own, for a stdio server its own process. The upstream
// is the asking one of questions_test.go (mode pidasker:REV), with one
// more tool, pid, answering its process id; each process records what
// mcpx sent it in a file of its own (REC.<pid>), all closed-world checked.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
	"github.com/mcpx-dev/mcpx/testkit/wiretest"
)

// servePIDAsker is serveAsker with a pid tool and a record file per process.
func servePIDAsker(rev string) int {
	if rec := os.Getenv(envRecord); rec != "" {
		os.Setenv(envRecord, fmt.Sprintf("%s.%d", rec, os.Getpid()))
	}
	s := newAskerState(rev)
	out := bufio.NewWriter(os.Stdout)
	sc := bufio.NewScanner(recordedStdin(nil))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		json.Unmarshal(sc.Bytes(), &m)
		var msgs []askerMsg
		if m.Method == "tools/call" && m.Params.Name == "pid" {
			msgs = []askerMsg{textResult(m.ID, strconv.Itoa(os.Getpid()))}
		} else {
			msgs = s.handle(sc.Bytes())
		}
		if m.Method == "tools/list" && len(msgs) == 1 {
			res := msgs[0]["result"].(map[string]any)
			res["tools"] = append(res["tools"].([]any), map[string]any{"name": "pid", "inputSchema": map[string]any{"type": "object"}})
		}
		for _, msg := range msgs {
			b, _ := json.Marshal(msg)
			out.Write(append(b, '\n'))
		}
		if out.Flush() != nil {
			return 1
		}
	}
	return 0
}

const pidRev = "2025-06-18"

// pidGateway fronts one stdio upstream "p" (pidasker) whose "mcpx" block
// is mcpx; every process's record is checked when the test ends.
func pidGateway(t *testing.T, mcpx map[string]any) (*gateway.Gateway, *wiretest.LockedBuffer) {
	t.Helper()
	rec := filepath.Join(t.TempDir(), "p.in")
	if mcpx == nil {
		mcpx = map[string]any{}
	}
	mcpx["timeout"] = "30s"
	servers := map[string]any{"p": map[string]any{"command": os.Args[0], "mcpx": mcpx,
		"env": map[string]string{envUpstream: "pidasker:" + pidRev, envRecord: rec, "GORACE": strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")}}}
	data, _ := json.Marshal(map[string]any{"mcpServers": servers})
	return readyGateway(t, "perclient.json", string(data), "", func() {
		files, _ := filepath.Glob(rec + ".*")
		for _, f := range files {
			checkUpstreamWire(t, upstream{ns: "p", rev: pidRev, record: f})
			checkAnswersToUpstream(t, askUpstream{ns: "p", rev: pidRev}, readRecords(t, f))
		}
	})
}

// pidOf calls p__pid for c: the upstream process serving it.
func pidOf(t *testing.T, c *askingClient) int {
	t.Helper()
	got := c.call("p__pid")
	pid, err := strconv.Atoi(got)
	if err != nil {
		t.Fatalf("p__pid: %q", got)
	}
	return pid
}

// child reports whether pid is a live child process of this one.
func child(pid int) bool { return slices.Contains(leakcheck.Children(), pid) }

// gone waits up to 5s for pid to end.
func gone(pid int) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if !child(pid) {
			return true
		}
	}
	return false
}

// endSession DELETEs c's session.
func endSession(t *testing.T, c *askingClient) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodDelete, c.endpoint, nil)
	req.Header.Set("Mcp-Session-Id", c.sid)
	req.Header.Set("MCP-Protocol-Version", c.rev)
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %d, want 204", resp.StatusCode)
	}
}

// TestPerClientOwnProcess: two legacy client sessions over Streamable
// HTTP each get an upstream process of their own, started at their first
// call, neither the one the lists come from; each session keeps its own
// for its later calls. A 2026-07-28 client, which has no session, is
// served by the shared one.
func TestPerClientOwnProcess(t *testing.T) {
	leakcheck.Check(t)
	gw, _ := pidGateway(t, map[string]any{"session": "per-client"})
	shared := leakcheck.Children()
	if len(shared) != 1 {
		t.Fatalf("after Ready, child processes %v, want the one shared upstream", shared)
	}
	a := newHTTPAskingClient(t, gw, "2025-11-25", declaresAll)
	b := newHTTPAskingClient(t, gw, "2025-06-18", declaresAll)
	pa, pb := pidOf(t, a), pidOf(t, b)
	switch {
	case pa == pb:
		t.Errorf("both client sessions were served by process %d", pa)
	case pa == shared[0] || pb == shared[0]:
		t.Errorf("a client session was served by the shared process %d (a %d, b %d)", shared[0], pa, pb)
	}
	if again := pidOf(t, a); again != pa {
		t.Errorf("a's second call went to process %d, its first to %d", again, pa)
	}
	if n := len(leakcheck.Children()); n != 3 {
		t.Errorf("%d child processes, want 3 (shared, a's, b's)", n)
	}
	m := newModernClient(t, gw, "http")
	if got := text(m.call("p__pid", "", "")); got != strconv.Itoa(shared[0]) {
		t.Errorf("the 2026-07-28 client was served by %q, want the shared process %d", got, shared[0])
	}
}

// TestPerClientQuestionsPlacedWhileBothRun: with a call of each of two
// client sessions in flight at once, each call's question reaches its own
// client; on a shared stdio upstream the second would be refused as
// ambiguous (TestQuestionThatCannotBePlaced).
func TestPerClientQuestionsPlacedWhileBothRun(t *testing.T) {
	gw, _ := pidGateway(t, map[string]any{"session": "per-client"})
	a := newHTTPAskingClient(t, gw, "2025-11-25", declaresAll)
	b := newHTTPAskingClient(t, gw, "2025-11-25", declaresAll)
	// Neither answers until both were asked: both calls are in flight.
	var both sync.WaitGroup
	both.Add(2)
	barrier := func(wiretest.Frame) {
		both.Done()
		done := make(chan struct{})
		go func() { both.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("the other client was never asked while this one's question waited")
		}
	}
	a.before, b.before = barrier, barrier
	results := make(chan string, 2)
	go func() { results <- "a " + a.call("p__elicit") }()
	go func() { results <- "b " + b.call("p__elicit") }()
	for range 2 {
		if got := <-results; !strings.Contains(got, `"name":"Ada"`) {
			t.Errorf("client %s", got)
		}
	}
	if len(a.asked()) != 1 || len(b.asked()) != 1 {
		t.Errorf("a was asked %d questions, b %d; want one each", len(a.asked()), len(b.asked()))
	}
}

// TestPerClientSessionEndStopsItsProcess: DELETE of a session stops its
// upstream process, and only its own; closing the gateway stops the rest
// (leakcheck: no process left).
func TestPerClientSessionEndStopsItsProcess(t *testing.T) {
	leakcheck.Check(t)
	gw, logs := pidGateway(t, map[string]any{"session": "per-client"})
	a := newHTTPAskingClient(t, gw, "2025-11-25", declaresAll)
	b := newHTTPAskingClient(t, gw, "2025-11-25", declaresAll)
	pa, pb := pidOf(t, a), pidOf(t, b)
	endSession(t, a)
	if !gone(pa) {
		t.Errorf("a's process %d still runs after its session was deleted", pa)
	}
	if !child(pb) || pidOf(t, b) != pb {
		t.Errorf("b's process %d did not outlive a's session", pb)
	}
	if !strings.Contains(logs.String(), `why="the client session ended"`) {
		t.Errorf("mcpx did not log why it closed a's upstream:\n%s", logs.String())
	}
}

// TestPerClientLimit: past perClientMax client sessions with their own
// upstream, a new session's call is -32603 naming the limit; once one
// ends, the new session gets its own.
func TestPerClientLimit(t *testing.T) {
	gw, _ := pidGateway(t, map[string]any{"session": "per-client", "perClientMax": 1})
	a := newHTTPAskingClient(t, gw, "2025-11-25", declaresAll)
	b := newHTTPAskingClient(t, gw, "2025-11-25", declaresAll)
	pa := pidOf(t, a)
	got := b.call("p__pid")
	if !strings.HasPrefix(got, "error -32603: ") || !strings.Contains(got, `upstream "p": its per-client limit of 1 client sessions`) {
		t.Errorf("b past the limit: %q, want -32603 naming the per-client limit", got)
	}
	endSession(t, a)
	gone(pa)
	if pb := pidOf(t, b); pb == pa {
		t.Errorf("b was served by a's ended process %d", pa)
	}
}

// TestPerClientIdleClose: a session's upstream unused for perClientIdle
// is stopped; the session's next call gets a new one.
func TestPerClientIdleClose(t *testing.T) {
	gw, logs := pidGateway(t, map[string]any{"session": "per-client", "perClientIdle": "300ms"})
	a := newHTTPAskingClient(t, gw, "2025-11-25", declaresAll)
	p1 := pidOf(t, a)
	if !gone(p1) {
		t.Fatalf("a's process %d still runs after being idle for the idle timeout", p1)
	}
	if p2 := pidOf(t, a); p2 == p1 {
		t.Errorf("a's call after the idle close went to the stopped process %d", p1)
	}
	if !strings.Contains(logs.String(), `why="idle for 300ms"`) {
		t.Errorf("mcpx did not log the idle close:\n%s", logs.String())
	}
}

// TestSharedSessionUnchanged: without "session" (shared), every client
// session is served by the one upstream process the lists come from.
func TestSharedSessionUnchanged(t *testing.T) {
	gw, _ := pidGateway(t, nil)
	shared := leakcheck.Children()
	a := newHTTPAskingClient(t, gw, "2025-11-25", declaresAll)
	b := newHTTPAskingClient(t, gw, "2025-06-18", declaresAll)
	pa, pb := pidOf(t, a), pidOf(t, b)
	if len(shared) != 1 || pa != shared[0] || pb != shared[0] {
		t.Errorf("shared: a served by %d, b by %d; want both by the one process %v", pa, pb, shared)
	}
	endSession(t, a)
	if pidOf(t, b) != pb || !child(pb) {
		t.Errorf("the shared process did not outlive a session's end")
	}
}

// TestPerClientHTTPUpstream: for a url server, per-client is an upstream
// session per client session: each initializes the server on its own (the
// shared one for the lists, then one per client session), and every
// message mcpx sent it is closed-world valid.
func TestPerClientHTTPUpstream(t *testing.T) {
	leakcheck.Check(t)
	url, bodies := askerHTTP(t, "2025-11-25")
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"h": map[string]any{"url": url, "mcpx": map[string]any{"session": "per-client"}}}})
	gw, _ := readyGateway(t, "perclient.json", string(data), "", func() {
		var recs []string
		for _, b := range bodies() {
			recs = append(recs, string(b))
		}
		checkAnswersToUpstream(t, askUpstream{ns: "h", rev: "2025-11-25", http: true}, recs)
	})
	initializes := func() int {
		n := 0
		for _, b := range bodies() {
			if strings.Contains(string(b), `"method":"initialize"`) {
				n++
			}
		}
		return n
	}
	if n := initializes(); n != 1 {
		t.Fatalf("after Ready, %d initializes, want the shared one", n)
	}
	a := newHTTPAskingClient(t, gw, "2025-11-25", declaresAll)
	b := newHTTPAskingClient(t, gw, "2025-06-18", declaresAll)
	for _, c := range []*askingClient{a, b, a} {
		if got := c.call("h__elicit"); !strings.Contains(got, `"name":"Ada"`) {
			t.Errorf("h__elicit: %q", got)
		}
	}
	if n := initializes(); n != 3 {
		t.Errorf("%d initializes, want 3 (shared, a's, b's)", n)
	}
}

// TestPerClientStdioClient: over stdio the one client session ends with
// the connection, and its upstream process with it.
func TestPerClientStdioClient(t *testing.T) {
	gw, _ := pidGateway(t, map[string]any{"session": "per-client"})
	c := newStdioAskingClient(t, gw, "2025-11-25", declaresAll)
	pid := pidOf(t, c)
	if !child(pid) {
		t.Fatalf("process %d is not a child", pid)
	}
	c.w.(io.Closer).Close()
	if !gone(pid) {
		t.Errorf("the stdio client's process %d still runs after its connection closed", pid)
	}
}
