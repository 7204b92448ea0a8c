package edge_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// declaresSubscribeNS is fakeNS declaring resources.subscribe without
// being a server.Subscriber (the conformance fixture's case).
type declaresSubscribeNS struct{ fakeNS }

func (declaresSubscribeNS) Capabilities() mcp.ServerCapabilities {
	c := fakeNS{}.Capabilities()
	c.Resources = &mcp.ServerCapabilitiesResources{Subscribe: mcp.Ptr(true)}
	return c
}

// subscriberNS is a server.Subscriber counting its clients per URI.
type subscriberNS struct {
	declaresSubscribeNS
	updates chan string
	mu      sync.Mutex
	refs    map[string]int
}

func (n *subscriberNS) Subscribe(_ context.Context, uri string) error {
	if uri == "test://refused" {
		return server.InvalidParams("cannot follow %s", uri)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.refs[uri]++
	return nil
}

func (n *subscriberNS) Unsubscribe(uri string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.refs[uri]--
}

func (n *subscriberNS) Updates(context.Context) <-chan string { return n.updates }

func (n *subscriberNS) ref(uri string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.refs[uri]
}

// TestSubscribeNeedsADeclaration: without resources.subscribe declared,
// resources/subscribe and resources/unsubscribe are -32601; a namespace
// that declares it without being a Subscriber has them accepted.
func TestSubscribeNeedsADeclaration(t *testing.T) {
	c := newClient(t)
	c.initialize("2025-06-18")
	for _, m := range []string{"resources/subscribe", "resources/unsubscribe"} {
		if e := rpcError(t, c.do(m, `{"uri":"test://a"}`)); e.Code != jsonrpc.MethodNotFound || !strings.Contains(e.Message, "resources.subscribe") {
			t.Errorf("%s undeclared: %d %s, want -32601 saying why", m, e.Code, e.Message)
		}
	}
	d := newClient(t)
	d.e.Server.NS = declaresSubscribeNS{}
	d.initialize("2025-06-18")
	result(t, d.do("resources/subscribe", `{"uri":"test://a"}`))
	result(t, d.do("resources/unsubscribe", `{"uri":"test://a"}`))
}

// TestSubscribeNeedsASession: a legacy resources/subscribe outside any
// session (the headerless default, never initialized) is -32600: no
// stream could carry its updates, and nothing would end it.
func TestSubscribeNeedsASession(t *testing.T) {
	ns := &subscriberNS{updates: make(chan string), refs: map[string]int{}}
	c := newClient(t)
	c.e.Server.NS = ns
	if e := rpcError(t, c.do("resources/subscribe", `{"uri":"test://a"}`)); e.Code != jsonrpc.InvalidRequest || !strings.Contains(e.Message, "initialize first") {
		t.Errorf("sessionless subscribe: %d %s, want -32600 saying to initialize", e.Code, e.Message)
	}
	if n := ns.ref("test://a"); n != 0 {
		t.Errorf("the namespace was asked to follow test://a %d times, want 0", n)
	}
}

// TestSubscribeOncePerSession: a session subscribing twice is one client;
// its end lets go of what it still follows.
func TestSubscribeOncePerSession(t *testing.T) {
	ns := &subscriberNS{updates: make(chan string), refs: map[string]int{}}
	c := newClient(t)
	c.e.Server.NS = ns
	c.initialize("2025-11-25")
	for range 2 {
		result(t, c.do("resources/subscribe", `{"uri":"test://a"}`))
	}
	if e := rpcError(t, c.do("resources/subscribe", `{"uri":"test://refused"}`)); e.Code != jsonrpc.InvalidParams {
		t.Errorf("a refused subscribe: %d %s, want the namespace's -32602", e.Code, e.Message)
	}
	if n := ns.ref("test://a"); n != 1 {
		t.Fatalf("followed %d times, want once", n)
	}
	c.sess.End()
	deadline := time.Now().Add(5 * time.Second)
	for ns.ref("test://a") != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := ns.ref("test://a"); n != 0 {
		t.Errorf("after the session ended: followed %d times, want 0", n)
	}
}

// TestListenResourceSubscriptions: a listen's acknowledgement names the
// URIs the namespace agreed to follow, each once, and not one it refused;
// an update of one it follows comes tagged with the listen id, one it does
// not follow never; its end lets go of them. A namespace that declares
// subscriptions without being a Subscriber has them all agreed.
func TestListenResourceSubscriptions(t *testing.T) {
	ns := &subscriberNS{updates: make(chan string, 4), refs: map[string]int{}}
	e := &edge.Edge{Server: &server.Server{NS: ns, Info: mcp.Implementation{Name: "t", Version: "1"}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go e.WatchChanges(ctx)

	listened := make(chan *jsonrpc.Message, 8)
	listen := &jsonrpc.Message{JSONRPC: "2.0", ID: json.RawMessage(`"L"`), Method: "subscriptions/listen",
		Params: json.RawMessage(`{` + modernMeta + `,"notifications":{"resourceSubscriptions":["test://a","test://refused","test://a"]}}`)}
	lctx, lcancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		e.Handle(lctx, new(edge.Session), edge.In{Msg: listen}, func(m *jsonrpc.Message) { listened <- m })
		close(done)
	}()
	ack := <-listened
	if ack.Method != "notifications/subscriptions/acknowledged" || !strings.Contains(string(ack.Params), `"notifications":{"resourceSubscriptions":["test://a"]}`) {
		t.Fatalf("acknowledgement: %s %s", ack.Method, ack.Params)
	}
	if n := ns.ref("test://a"); n != 1 {
		t.Errorf("followed %d times, want once", n)
	}
	ns.updates <- "test://b"
	ns.updates <- "test://a"
	m := <-listened
	if m.Method != mcp.MethodNotificationsResourcesUpdated || !strings.Contains(string(m.Params), `"uri":"test://a"`) || !strings.Contains(string(m.Params), `"io.modelcontextprotocol/subscriptionId":"L"`) {
		t.Errorf("listen stream: %s %s, want test://a's update tagged L", m.Method, m.Params)
	}
	lcancel()
	<-done
	if n := ns.ref("test://a"); n != 0 {
		t.Errorf("after the listen ended: followed %d times, want 0", n)
	}

	plain := &edge.Edge{Server: &server.Server{NS: declaresSubscribeNS{}, Info: mcp.Implementation{Name: "t", Version: "1"}}}
	pctx, pcancel := context.WithCancel(ctx)
	acks := make(chan *jsonrpc.Message, 1)
	pdone := make(chan struct{})
	go func() {
		plain.Handle(pctx, new(edge.Session), edge.In{Msg: listen}, func(m *jsonrpc.Message) { acks <- m })
		close(pdone)
	}()
	if a := <-acks; !strings.Contains(string(a.Params), `"resourceSubscriptions":["test://a","test://refused"]`) {
		t.Errorf("acknowledgement of a namespace that declares subscriptions: %s", a.Params)
	}
	pcancel()
	<-pdone
}
