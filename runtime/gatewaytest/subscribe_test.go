package gatewaytest

// Resource subscriptions through mcpx (issue 14): clients of both eras,
// over both transports, follow resources of upstreams of both eras, and
// hear their updates, each in its own era's shape.
//
// The upstreams are hand-written: a legacy one on stdio (a re-executed
// test binary, mode subber:REV, or nosubber:REV without
// resources.subscribe) that answers resources/subscribe and
// resources/unsubscribe, and a 2026-07-28 one over Streamable HTTP
// (modernSubber) that holds each subscriptions/listen as an SSE stream.
// Each has two resources, note://a and note://b, and a tool touch {uri}
// that sends notifications/resources/updated for uri to whoever follows
// it (nothing to an upstream that was never asked to follow it). What
// mcpx sends clients and upstreams is closed-world validated.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/transport/stdio"
	"github.com/mcpx-dev/mcpx/testkit/closedworld"
	"github.com/mcpx-dev/mcpx/testkit/wiretest"
)

// subberNotes are the resources every subscription upstream has.
var subberNotes = []string{"note://a", "note://b"}

// serveSubber is the legacy subscription upstream on stdio (modes
// subber:REV, nosubber:REV). A touch of a URI it follows sends the update
// before the tool's answer; crash exits at once (the test of restarts).
func serveSubber(rev string, offers bool) int {
	out := bufio.NewWriter(os.Stdout)
	send := func(m map[string]any) {
		b, _ := json.Marshal(m)
		out.Write(append(b, '\n'))
	}
	following := map[string]bool{}
	if rec := os.Getenv(envRecord); rec != "" {
		// A record of each process: request ids start again with it.
		os.Setenv(envRecord, fmt.Sprintf("%s.%d", rec, os.Getpid()))
	}
	sc := bufio.NewScanner(recordedStdin(nil))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string `json:"name"`
				URI       string `json:"uri"`
				Arguments struct {
					URI string `json:"uri"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil {
			continue
		}
		result := func(r any) { send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": r}) }
		switch {
		case m.Method == "initialize":
			res := map[string]any{}
			if offers {
				res["subscribe"] = true
			}
			result(map[string]any{"protocolVersion": rev, "capabilities": map[string]any{"tools": map[string]any{}, "resources": res}, "serverInfo": map[string]any{"name": "subber", "version": "1"}})
		case m.Method == "tools/list":
			result(map[string]any{"tools": []any{
				map[string]any{"name": "touch", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{"uri": map[string]any{"type": "string"}}}},
				map[string]any{"name": "crash", "inputSchema": map[string]any{"type": "object"}},
			}})
		case m.Method == "resources/list":
			var rs []any
			for _, u := range subberNotes {
				rs = append(rs, map[string]any{"uri": u, "name": strings.TrimPrefix(u, "note://")})
			}
			result(map[string]any{"resources": rs})
		case m.Method == "resources/templates/list":
			result(map[string]any{"resourceTemplates": []any{}})
		case m.Method == "resources/read":
			result(map[string]any{"contents": []any{map[string]any{"uri": m.Params.URI, "text": "note"}}})
		case m.Method == "resources/subscribe" && offers:
			following[m.Params.URI] = true
			result(map[string]any{})
		case m.Method == "resources/unsubscribe" && offers:
			delete(following, m.Params.URI)
			result(map[string]any{})
		case m.Method == "tools/call" && m.Params.Name == "crash":
			out.Flush()
			os.Exit(3)
		case m.Method == "tools/call" && m.Params.Name == "touch":
			u := m.Params.Arguments.URI
			if following[u] {
				send(map[string]any{"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": map[string]any{"uri": u}})
			}
			result(map[string]any{"content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("touched %s (followed: %v)", u, following[u])}}})
		default:
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "no " + m.Method + " here"}})
		}
		if out.Flush() != nil {
			return 1
		}
	}
	return 0
}

// modernSubber is the 2026-07-28 subscription upstream over Streamable
// HTTP: each subscriptions/listen is an SSE stream, its acknowledgement
// agreeing to every resourceSubscriptions URI it has, held until mcpx
// closes it.
type modernSubber struct {
	url string

	mu      sync.Mutex
	listens map[*subberListen]bool
	opened  map[string]int // listens opened, by URI named
	closed  map[string]int // listens mcpx closed, by URI named
	bodies  []string       // every message mcpx sent it
}

type subberListen struct {
	id    json.RawMessage
	asked []string      // what the listen named
	uris  []string      // what it agreed to
	out   chan string   // notifications to write on the stream
	drop  chan struct{} // closed: the upstream ends the stream
}

func newModernSubber(t *testing.T) *modernSubber {
	t.Helper()
	v, err := closedworld.Default()
	if err != nil {
		t.Fatalf("closed-world validator: %v (run `make schemas`)", err)
	}
	u := &modernSubber{listens: map[*subberListen]bool{}, opened: map[string]int{}, closed: map[string]int{}}
	var bad []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.bodies = append(u.bodies, string(body))
		if rev, err := checkToUpstream(v, "2026-07-28", body); err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v in %s", rev, err, body))
		}
		u.mu.Unlock()
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string `json:"name"`
				URI       string `json:"uri"`
				Arguments struct {
					URI string `json:"uri"`
				} `json:"arguments"`
				Notifications struct {
					ResourceSubscriptions []string `json:"resourceSubscriptions"`
				} `json:"notifications"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &m) != nil || m.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		reply := rawReply{w: w, id: m.ID}
		if m.Method == "subscriptions/listen" {
			u.listen(w, r, m.ID, m.Params.Notifications.ResourceSubscriptions)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch {
		case m.Method == "server/discover":
			reply.result(discoverResult("modern-subber", `{"tools":{},"resources":{"subscribe":true}}`))
		case m.Method == "tools/list":
			reply.result(`{"resultType":"complete","ttlMs":0,"cacheScope":"private","tools":[{"name":"touch","inputSchema":{"type":"object","properties":{"uri":{"type":"string"}}}}]}`)
		case m.Method == "resources/list":
			reply.result(`{"resultType":"complete","ttlMs":0,"cacheScope":"private","resources":[{"uri":"note://a","name":"a"},{"uri":"note://b","name":"b"}]}`)
		case m.Method == "resources/templates/list":
			reply.result(`{"resultType":"complete","ttlMs":0,"cacheScope":"private","resourceTemplates":[]}`)
		case m.Method == "tools/call" && m.Params.Name == "touch":
			n := u.touch(m.Params.Arguments.URI)
			reply.result(completeText(fmt.Sprintf("touched %s (listens: %d)", m.Params.Arguments.URI, n)))
		default:
			reply.error(-32601, "no "+m.Method+" here")
		}
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		u.mu.Lock()
		defer u.mu.Unlock()
		for _, b := range bad {
			t.Errorf("mcpx sent the 2026-07-28 upstream: %s", b)
		}
	})
	u.url = srv.URL
	return u
}

func (u *modernSubber) listen(w http.ResponseWriter, r *http.Request, id json.RawMessage, asked []string) {
	uris := []string{} // the agreed: those of its notes
	for _, x := range asked {
		if slices.Contains(subberNotes, x) {
			uris = append(uris, x)
		}
	}
	l := &subberListen{id: id, asked: asked, uris: uris, out: make(chan string, 16), drop: make(chan struct{})}
	ack, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": map[string]any{
		"_meta": map[string]any{"io.modelcontextprotocol/subscriptionId": id}, "notifications": map[string]any{"resourceSubscriptions": uris}}})
	u.mu.Lock() // open before it is acknowledged: a touch or drop after the ack finds it
	u.listens[l] = true
	for _, x := range asked {
		u.opened[x]++
	}
	u.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "data: %s\n\n", ack)
	w.(http.Flusher).Flush()
	for {
		select {
		case n := <-l.out:
			fmt.Fprintf(w, "data: %s\n\n", n)
			w.(http.Flusher).Flush()
		case <-l.drop:
			u.mu.Lock()
			delete(u.listens, l)
			u.mu.Unlock()
			return
		case <-r.Context().Done():
			u.mu.Lock()
			delete(u.listens, l)
			for _, x := range asked {
				u.closed[x]++
			}
			u.mu.Unlock()
			return
		}
	}
}

// touch sends uri's update on every listen that names it; it returns how many.
func (u *modernSubber) touch(uri string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	n := 0
	for l := range u.listens {
		if slices.Contains(l.uris, uri) {
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": map[string]any{
				"_meta": map[string]any{"io.modelcontextprotocol/subscriptionId": l.id}, "uri": uri}})
			l.out <- string(b)
			n++
		}
	}
	return n
}

// dropAll ends every listen stream, as an upstream restarting behind its
// URL does.
func (u *modernSubber) dropAll() {
	u.mu.Lock()
	defer u.mu.Unlock()
	for l := range u.listens {
		close(l.drop)
		delete(u.listens, l)
	}
}

// counts are the listens naming uri open now, opened and closed in all.
func (u *modernSubber) counts(uri string) (open, opened, closed int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for l := range u.listens {
		if slices.Contains(l.asked, uri) {
			open++
		}
	}
	return open, u.opened[uri], u.closed[uri]
}

// subsGateway fronts a legacy stdio subber (namespace "l", rev), a
// 2026-07-28 HTTP one ("m") and a legacy stdio one that does not offer
// subscriptions ("n"). It returns what mcpx sent l so far, one message a
// record, across its restarts.
func subsGateway(t *testing.T, rev string) (*gateway.Gateway, *modernSubber, func() []string, *wiretest.LockedBuffer) {
	return subsGatewayOf(t, rev, "l", "m", "n")
}

// subsGatewayOf is subsGateway with only the upstreams named.
func subsGatewayOf(t *testing.T, rev string, names ...string) (*gateway.Gateway, *modernSubber, func() []string, *wiretest.LockedBuffer) {
	t.Helper()
	dir := t.TempDir()
	m := newModernSubber(t)
	env := func(mode, rec string) map[string]string {
		return map[string]string{envUpstream: mode + ":" + rev, envRecord: rec, "GORACE": strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")}
	}
	lrec, nrec := filepath.Join(dir, "l.in"), filepath.Join(dir, "n.in")
	all := map[string]any{
		"l": map[string]any{"command": os.Args[0], "env": env("subber", lrec)},
		"m": map[string]any{"url": m.url},
		"n": map[string]any{"command": os.Args[0], "env": env("nosubber", nrec)},
	}
	servers := map[string]any{}
	for _, n := range names {
		servers[n] = all[n]
	}
	data, _ := json.Marshal(map[string]any{"mcpServers": servers})
	gw, logs := readyGateway(t, "subs.json", string(data), "", func() {
		for _, ns := range []string{"l", "n"} {
			if servers[ns] == nil {
				continue
			}
			files, _ := filepath.Glob(filepath.Join(dir, ns+".in.*"))
			if len(files) == 0 {
				t.Errorf("upstream %s: mcpx sent it nothing", ns)
			}
			for _, f := range files {
				checkUpstreamWire(t, upstream{ns: ns, rev: rev, record: f})
			}
		}
	})
	return gw, m, func() []string { return processRecords(t, lrec) }, logs
}

// processRecords is the records of every process that recorded to rec.
func processRecords(t *testing.T, rec string) []string {
	files, _ := filepath.Glob(rec + ".*")
	var out []string
	for _, f := range files {
		out = append(out, readRecords(t, f)...)
	}
	return out
}

// sentCount counts the requests of method in recs.
func sentCount(recs []string, method, uri string) int {
	n := 0
	for _, r := range recs {
		var f struct {
			Method string `json:"method"`
			Params struct {
				URI string `json:"uri"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(r), &f) == nil && f.Method == method && f.Params.URI == uri {
			n++
		}
	}
	return n
}

// watchedEdge is the edge `mcpx serve` runs for ns, with its changes and
// updates fanned out (host.go's WatchChanges) until the test ends.
func watchedEdge(t *testing.T, ns server.Namespace) (*edge.Edge, *wiretest.LockedBuffer) {
	logs, log := logBuffer()
	e := &edge.Edge{Server: &server.Server{NS: ns, Info: serverInfo, TTLMs: 60_000}, Log: log}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go e.WatchChanges(ctx)
	return e, logs
}

// subClient is a hand-written client of either era over either
// transport that follows resources and keeps every notification mcpx
// sent it, on any stream. What mcpx sends it is validated closed-world.
type subClient struct {
	t      *testing.T
	rev    string
	modern bool

	// HTTP
	endpoint string
	hc       *http.Client
	sid      string
	// stdio
	w io.WriteCloser

	mu      sync.Mutex
	notes   []wiretest.Frame
	waiting map[string]chan wiretest.Frame // stdio: answers by id
	nextID  int
}

func newSubClient(t *testing.T, gw *gateway.Gateway, tr, rev string) *subClient {
	t.Helper()
	c := &subClient{t: t, rev: rev, modern: rev == "2026-07-28", waiting: map[string]chan wiretest.Frame{}, nextID: 10}
	e, logs := watchedEdge(t, gw)
	if tr == "http" {
		c.endpoint, c.hc = watchedHTTP(t, e, logs, rev)
	} else {
		c.serveStdio(e, logs)
	}
	if c.modern {
		return c
	}
	init := c.request("initialize", fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"sub-client","version":"1"}}`, rev))
	if init.Error != nil {
		t.Fatalf("initialize: %s", init.Error)
	}
	c.notify(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if c.hc != nil {
		c.getStream()
	}
	return c
}

// serveStdio serves e on the stdio transport for c.
func (c *subClient) serveStdio(e *edge.Edge, logs *wiretest.LockedBuffer) {
	toClient, w := watchedStdio(c.t, e, logs, c.rev)
	c.w = w
	go func() {
		sc := bufio.NewScanner(toClient)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var f wiretest.Frame
			if json.Unmarshal(sc.Bytes(), &f) == nil {
				c.take(f)
			}
		}
	}()
}

// watchedStdio serves e in-process on the stdio transport for a client
// pinned to rev, as serveStdio does (both ways recorded, what mcpx sent
// validated when the test ends, after the input closed and Serve
// returned).
func watchedStdio(t *testing.T, e *edge.Edge, logs *wiretest.LockedBuffer, rev string) (io.ReadCloser, io.WriteCloser) {
	w := new(wiretest.StdioWire)
	inR, inW := io.Pipe()
	toClient := wiretest.NewPipe()
	done := make(chan error, 1)
	go func() {
		err := stdio.Serve(context.Background(), e, inR, io.MultiWriter(&w.FromServer, toClient), stdio.Options{})
		toClient.CloseWrite()
		done <- err
	}()
	in := wiretest.TeeWriter{W: inW, Rec: &w.FromClient}
	t.Cleanup(func() {
		in.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("stdio.Serve: %v", err)
			}
		case <-time.After(wiretest.ExitTimeout):
			t.Errorf("stdio.Serve was still running %s after its input closed", wiretest.ExitTimeout)
		}
		msgs, err := w.Sent()
		if err != nil {
			t.Errorf("reading the recorded stdio wire: %v", err)
		}
		wiretest.Validate(t, rev, msgs)
		if t.Failed() || showWire {
			t.Logf("client to mcpx:\n%s\nmcpx to client:\n%s", w.FromClient.String(), w.FromServer.String())
		}
		wiretest.CheckLog(t, "mcpx (stdio)", logs)
	})
	return toClient, in
}

// watchedHTTP serves e over Streamable HTTP for a client pinned to rev,
// as serveHTTP does.
func watchedHTTP(t *testing.T, e *edge.Edge, logs *wiretest.LockedBuffer, rev string) (string, *http.Client) {
	u := wiretest.ServeHTTP(t, e, recordHTTP(t, rev), logs)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return u, &http.Client{Transport: tr}
}

// end ends a stdio client's connection (its session); idempotent.
func (c *subClient) end() {
	if c.w != nil {
		c.w.Close()
	}
}

// take files one message mcpx sent: an answer to its waiter, a
// notification among the notes.
func (c *subClient) take(f wiretest.Frame) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case f.IsNotification():
		c.notes = append(c.notes, f)
	case f.Method == "" && f.ID != nil:
		if ch := c.waiting[wiretest.IDKey(f.ID)]; ch != nil {
			ch <- f
		}
	}
}

func (c *subClient) headers(method, name string) map[string]string {
	h := map[string]string{"MCP-Protocol-Version": c.rev}
	if c.modern {
		h["Mcp-Method"] = method
		if name != "" {
			h["Mcp-Name"] = name
		}
	} else {
		h["Mcp-Session-Id"] = c.sid
	}
	return h
}

// withMeta puts a 2026-07-28 request's _meta into params (an object).
func (c *subClient) withMeta(params string) string {
	if !c.modern {
		return params
	}
	if strings.TrimSpace(params) == "{}" {
		return "{" + modernMeta + "}"
	}
	return "{" + modernMeta + "," + strings.TrimPrefix(strings.TrimSpace(params), "{")
}

// request sends a request and returns its answer; the notifications that
// come before it are noted.
func (c *subClient) request(method, params string) wiretest.Frame {
	c.t.Helper()
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	c.mu.Unlock()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, c.withMeta(params))
	if c.hc == nil {
		ch := make(chan wiretest.Frame, 1)
		c.mu.Lock()
		c.waiting[fmt.Sprint(id)] = ch
		c.mu.Unlock()
		fmt.Fprintln(c.w, body)
		select {
		case f := <-ch:
			return f
		case <-time.After(20 * time.Second):
			c.t.Fatalf("no answer to %s", body)
		}
	}
	var name struct {
		Params struct {
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"params"`
	}
	json.Unmarshal([]byte(body), &name)
	resp, err := postJSON(c.t.Context(), c.hc, c.endpoint, c.headers(method, name.Params.Name+name.Params.URI), body)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		c.sid = sid
	}
	raw, _ := io.ReadAll(resp.Body)
	var answer wiretest.Frame
	for _, m := range sseOrJSON(raw) {
		var f wiretest.Frame
		if json.Unmarshal(m, &f) != nil {
			continue
		}
		if f.IsNotification() {
			c.take(f)
		} else if f.Method == "" {
			answer = f
		}
	}
	if answer.ID == nil {
		c.t.Fatalf("%s: no answer in %d %s", method, resp.StatusCode, raw)
	}
	return answer
}

// sseOrJSON is the messages of a response body.
func sseOrJSON(body []byte) [][]byte {
	s := strings.TrimSpace(string(body))
	if strings.HasPrefix(s, "{") {
		return [][]byte{[]byte(s)}
	}
	var out [][]byte
	for _, line := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		if d, ok := strings.CutPrefix(line, "data:"); ok {
			out = append(out, []byte(strings.TrimSpace(d)))
		}
	}
	return out
}

// notify sends a notification.
func (c *subClient) notify(body string) {
	c.t.Helper()
	if c.hc == nil {
		fmt.Fprintln(c.w, body)
		return
	}
	resp, err := postJSON(c.t.Context(), c.hc, c.endpoint, c.headers("", ""), body)
	if err != nil {
		c.t.Fatal(err)
	}
	resp.Body.Close()
}

// stream reads an SSE body, noting every notification on it.
func (c *subClient) stream(body io.ReadCloser) {
	defer body.Close()
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
			var f wiretest.Frame
			if json.Unmarshal([]byte(strings.TrimSpace(d)), &f) == nil {
				c.take(f)
			}
		}
	}
}

// getStream opens a legacy HTTP session's GET stream.
func (c *subClient) getStream() {
	c.t.Helper()
	req, _ := http.NewRequestWithContext(c.t.Context(), http.MethodGet, c.endpoint, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.sid)
	req.Header.Set("MCP-Protocol-Version", c.rev)
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		c.t.Fatalf("GET stream: %d", resp.StatusCode)
	}
	go c.stream(resp.Body)
}

// endSession ends a legacy session: DELETE over HTTP, the connection's
// end on stdio.
func (c *subClient) endSession() {
	c.t.Helper()
	if c.hc == nil {
		c.end()
		return
	}
	req, _ := http.NewRequestWithContext(c.t.Context(), http.MethodDelete, c.endpoint, nil)
	req.Header.Set("Mcp-Session-Id", c.sid)
	req.Header.Set("MCP-Protocol-Version", c.rev)
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	resp.Body.Close()
}

// listen opens a 2026-07-28 subscriptions/listen following uris, and
// returns its id (its acknowledgement's, checked) and what ends it: the
// stream closed (HTTP), notifications/cancelled (stdio).
func (c *subClient) listen(uris ...string) (id string, stop func(), agreed []string) {
	c.t.Helper()
	c.mu.Lock()
	c.nextID++
	n := c.nextID
	c.mu.Unlock()
	id = fmt.Sprint(n)
	list, _ := json.Marshal(uris)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":%s}`, n, c.withMeta(`{"notifications":{"resourceSubscriptions":`+string(list)+`}}`))
	if c.hc == nil {
		fmt.Fprintln(c.w, body)
		stop = func() {
			fmt.Fprintf(c.w, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`+"\n", n)
		}
	} else {
		ctx, cancel := context.WithCancel(c.t.Context())
		resp, err := postJSON(ctx, c.hc, c.endpoint, c.headers("subscriptions/listen", ""), body)
		if err != nil {
			c.t.Fatal(err)
		}
		go c.stream(resp.Body)
		stop = cancel
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, f := range c.notifications("notifications/subscriptions/acknowledged") {
			var p struct {
				Meta struct {
					ID json.RawMessage `json:"io.modelcontextprotocol/subscriptionId"`
				} `json:"_meta"`
				Notifications struct {
					ResourceSubscriptions []string `json:"resourceSubscriptions"`
				} `json:"notifications"`
			}
			if json.Unmarshal(f.Params, &p) == nil && wiretest.IDKey(p.Meta.ID) == id {
				return id, stop, p.Notifications.ResourceSubscriptions
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.t.Fatalf("no acknowledgement of listen %s", id)
	return "", nil, nil
}

func (c *subClient) notifications(method string) []wiretest.Frame {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []wiretest.Frame
	for _, f := range c.notes {
		if f.Method == method {
			out = append(out, f)
		}
	}
	return out
}

// update is one notifications/resources/updated as a client got it: its
// URI and its tag ("" for none).
type update struct{ uri, tag string }

func (c *subClient) updates() []update {
	var out []update
	for _, f := range c.notifications("notifications/resources/updated") {
		var p struct {
			URI  string `json:"uri"`
			Meta struct {
				ID json.RawMessage `json:"io.modelcontextprotocol/subscriptionId"`
			} `json:"_meta"`
		}
		json.Unmarshal(f.Params, &p)
		u := update{uri: p.URI}
		if p.Meta.ID != nil {
			u.tag = wiretest.IDKey(p.Meta.ID)
		}
		out = append(out, u)
	}
	return out
}

// subscribe follows uri the client's way: a legacy resources/subscribe
// (the answer returned), a 2026-07-28 listen naming uri alone.
func (c *subClient) subscribe(uri string) wiretest.Frame {
	return c.request("resources/subscribe", fmt.Sprintf(`{"uri":%q}`, uri))
}

// touch calls an upstream's touch tool through mcpx.
func (c *subClient) touch(tool, uri string) string {
	c.t.Helper()
	text, a, ok := c.tryTouch(tool, uri)
	if !ok {
		c.t.Fatalf("%s: %s %s", tool, a.Result, a.Error)
	}
	return text
}

// tryTouch is touch for a caller that expects it may fail: the tool's
// text, the answer, and whether the call succeeded with one text block.
func (c *subClient) tryTouch(tool, uri string) (string, wiretest.Frame, bool) {
	c.t.Helper()
	a := c.request("tools/call", fmt.Sprintf(`{"name":%q,"arguments":{"uri":%q}}`, tool, uri))
	var r struct {
		Content []struct{ Text string } `json:"content"`
	}
	if a.Error != nil || json.Unmarshal(a.Result, &r) != nil || len(r.Content) != 1 {
		return "", a, false
	}
	return r.Content[0].Text, a, true
}

// errorOf is an answer's error code and message (0 when it succeeded).
func errorOf(f wiretest.Frame) (int64, string) {
	var e struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	if f.Error == nil || json.Unmarshal(f.Error, &e) != nil {
		return 0, ""
	}
	return e.Code, e.Message
}

// awaitUpdates waits until every client has at least its wanted updates,
// then a little more for any that should not come, and checks that each
// has exactly them (in any order).
func awaitUpdates(t *testing.T, want map[*subClient][]update) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		done := true
		for c, w := range want {
			if len(c.updates()) < len(w) {
				done = false
			}
		}
		if done {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // anything more would have come by now
	for c, w := range want {
		got := c.updates()
		key := func(u update) string { return u.uri + " " + u.tag }
		gs, ws := make([]string, 0, len(got)), make([]string, 0, len(w))
		for _, u := range got {
			gs = append(gs, key(u))
		}
		for _, u := range w {
			ws = append(ws, key(u))
		}
		slices.Sort(gs)
		slices.Sort(ws)
		if !slices.Equal(gs, ws) {
			t.Errorf("%s client got the updates %q, want %q", c.rev, gs, ws)
		}
	}
}

// clearNotes forgets the notifications received so far.
func (c *subClient) clearNotes() {
	c.mu.Lock()
	c.notes = nil
	c.mu.Unlock()
}
