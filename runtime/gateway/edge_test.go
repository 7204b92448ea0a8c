package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
)

// The gateway behind the real edge: what clients of each era get.

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// ask sends one request through e, as a 2026-07-28 client when rev is "",
// else on a session initialized at rev.
func ask(t *testing.T, e *edge.Edge, rev, method, params string) *jsonrpc.Message {
	t.Helper()
	sess := new(edge.Session)
	handle := func(method, params string) *jsonrpc.Message {
		m := &jsonrpc.Message{JSONRPC: "2.0", ID: json.RawMessage(`1`), Method: method, Params: json.RawMessage(params)}
		return e.Handle(context.Background(), sess, edge.In{Msg: m, Default: edge.Headerless}, nil).Msg
	}
	if rev == "" {
		params = strings.Replace(params, "{", "{"+modernMeta+",", 1)
	} else if r := handle("initialize", `{"protocolVersion":"`+rev+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`); r.Error != nil {
		t.Fatalf("initialize: %+v", r.Error)
	}
	return handle(method, params)
}

func TestEdgeErrors(t *testing.T) {
	leakcheck.Check(t)
	fs := newFake("fs")
	fs.caps = mcp.ServerCapabilities{Resources: &mcp.ServerCapabilitiesResources{}}
	fs.read = func(p *mcp.ReadResourceRequestParams) (*mcp.ReadResourceResult, error) {
		switch p.URI {
		case "gone":
			return nil, rpcErr(-32002, "not here")
		case "bad":
			return nil, rpcErr(-32602, "no such")
		case "fire":
			return nil, rpcErr(-32000, "disk on fire")
		}
		return nil, errBoom
	}
	g, _ := gateway(t, fs)
	e := &edge.Edge{Server: &server.Server{NS: g, Info: mcp.Implementation{Name: "mcpx", Version: "0"}}, Log: slog.New(slog.DiscardHandler)}
	for _, tc := range []struct {
		about, rev, uri string
		code            int64
		msg             string
	}{
		{"not mcpx, modern", "", "file:///x", -32602, ""},
		{"not mcpx, legacy", "2025-06-18", "file:///x", -32002, ""},
		{"no namespace, legacy", "2025-11-25", "mcpx:///x", -32002, ""},
		{"unknown namespace, modern", "", "mcpx://nope/x", -32602, ""},
		{"upstream -32002, modern", "", "mcpx://fs/gone", -32602, ""},
		{"upstream -32602, legacy", "2024-11-05", "mcpx://fs/bad", -32002, ""},
		{"another upstream code, modern", "", "mcpx://fs/fire", -32603, "disk on fire"},
		{"another upstream code, legacy", "2025-03-26", "mcpx://fs/fire", -32603, "disk on fire"},
		{"an unreachable upstream", "", "mcpx://fs/x", -32603, "boom"},
	} {
		t.Run(tc.about, func(t *testing.T) {
			r := ask(t, e, tc.rev, "resources/read", `{"uri":"`+tc.uri+`"}`)
			if r.Error == nil || r.Error.Code != tc.code || !strings.Contains(r.Error.Message, tc.msg) {
				t.Fatalf("got %+v, want code %d with %q", r.Error, tc.code, tc.msg)
			}
			if tc.msg == "" {
				var data struct{ URI string }
				if json.Unmarshal(r.Error.Data, &data); data.URI != tc.uri {
					t.Errorf("data = %s, want uri %q", r.Error.Data, tc.uri)
				}
			}
		})
	}
}

func TestEdgeListsFollowChanges(t *testing.T) {
	leakcheck.Check(t)
	f := newFake("gh")
	up := tool("t")
	up.Execution = &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}
	f.tools = []mcp.Tool{up}
	g, _ := gateway(t, f)
	e := &edge.Edge{Server: &server.Server{NS: g, Info: mcp.Implementation{Name: "mcpx", Version: "0"}}, Log: slog.New(slog.DiscardHandler)}
	for _, tc := range []struct {
		about, rev string
		change     func()
		want, not  []string
	}{
		{"2025-11-25 sees taskSupport", "2025-11-25", nil, []string{`"gh__t"`, `"taskSupport":"optional"`}, nil},
		{"2025-06-18 does not", "2025-06-18", nil, []string{`"gh__t"`}, []string{"taskSupport"}},
		{"a list_changed upstream is seen through the edge's cache", "2025-11-25", func() {
			v := g.Version()
			f.set(func(f *fake) { f.tools = append(f.tools, tool("u")) })
			f.changes <- mcp.MethodNotificationsToolsListChanged
			eventually(t, "a new version", func() bool { return g.Version() != v })
		}, []string{`"gh__t"`, `"gh__u"`}, nil},
	} {
		t.Run(tc.about, func(t *testing.T) {
			if tc.change != nil {
				tc.change()
			}
			r := ask(t, e, tc.rev, "tools/list", `{}`)
			if r.Error != nil {
				t.Fatal(r.Error)
			}
			for _, s := range tc.want {
				if !strings.Contains(string(r.Result), s) {
					t.Errorf("%s lacks %s", r.Result, s)
				}
			}
			for _, s := range tc.not {
				if strings.Contains(string(r.Result), s) {
					t.Errorf("%s has %s", r.Result, s)
				}
			}
		})
	}
}

// TestSlowUpstreamDoesNotHoldClients: one upstream never answers its
// initialize (until the test lets it), one does. A client's initialize and
// tools/list answer within the first-load bound, list the ready one, and
// declare every list with listChanged; when the slow one arrives, tools
// list_changed is signalled and it is listed.
func TestSlowUpstreamDoesNotHoldClients(t *testing.T) {
	leakcheck.Check(t)
	slow := newFake("slow", "s")
	slow.hold = make(chan struct{})
	fast := newFake("fast", "f")
	g := New(slog.New(slog.DiscardHandler))
	g.LoadTimeout = 10 * time.Second
	t.Cleanup(func() { g.Close() })
	for _, f := range []*fake{slow, fast} {
		if err := g.Add(f, Options{}); err != nil {
			t.Fatal(err)
		}
	}
	e := &edge.Edge{Server: &server.Server{NS: g, Info: mcp.Implementation{Name: "mcpx", Version: "0"}}, Log: slog.New(slog.DiscardHandler)}
	start := time.Now()
	sess := new(edge.Session)
	handle := func(method, params string) *jsonrpc.Message {
		m := &jsonrpc.Message{JSONRPC: "2.0", ID: json.RawMessage(`1`), Method: method, Params: json.RawMessage(params)}
		r := e.Handle(context.Background(), sess, edge.In{Msg: m, Default: edge.Headerless}, nil).Msg
		if r.Error != nil {
			t.Fatalf("%s: %+v", method, r.Error)
		}
		return r
	}
	init := handle("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	list := handle("tools/list", `{}`)
	if d := time.Since(start); d > DefaultFirstWait+time.Second {
		t.Errorf("initialize and tools/list took %s with an upstream that does not answer; want at most %s and a little", d, DefaultFirstWait)
	}
	var res struct {
		Capabilities map[string]struct {
			ListChanged bool `json:"listChanged"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(init.Result, &res); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"tools", "prompts", "resources"} {
		if !res.Capabilities[l].ListChanged {
			t.Errorf("initialize does not declare %s.listChanged while an upstream is loading: %s", l, init.Result)
		}
	}
	if s := string(list.Result); !strings.Contains(s, `"fast__f"`) || strings.Contains(s, `"slow__s"`) {
		t.Errorf("tools/list while slow loads: %s; want fast__f alone", s)
	}
	for len(g.Changes()) > 0 {
		<-g.Changes()
	}
	close(slow.hold)
	select {
	case ev := <-g.Changes():
		if ev != mcp.MethodNotificationsToolsListChanged {
			t.Errorf("signalled %q, want tools list_changed", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no list change was signalled when the slow upstream arrived")
	}
	if s := string(handle("tools/list", `{}`).Result); !strings.Contains(s, `"fast__f"`) || !strings.Contains(s, `"slow__s"`) {
		t.Errorf("tools/list once slow arrived: %s", s)
	}
}
