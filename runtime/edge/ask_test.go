package edge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/testkit/closedworld"
)

// askNS is a namespace whose tools put one question each to the client
// (server.Ask) and answer with the client's result, encoded.
type askNS struct{ fakeNS }

var askSchema = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)

func question(tool string) (string, any) {
	switch tool {
	case "elicit":
		return mcp.MethodElicitationCreate, &mcp.ElicitRequestParams{Value: &mcp.ElicitRequestFormParams{Message: "Your name?", RequestedSchema: askSchema}}
	case "elicit_url":
		return mcp.MethodElicitationCreate, &mcp.ElicitRequestParams{Value: &mcp.ElicitRequestURLParams{Message: "Sign in", URL: "https://example.com/login"}}
	case "sample":
		return mcp.MethodSamplingCreateMessage, &mcp.CreateMessageRequestParams{MaxTokens: 10, Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.SamplingMessageContent{Value: &mcp.TextContent{Text: "hi"}}}}}
	case "sample_audio":
		return mcp.MethodSamplingCreateMessage, &mcp.CreateMessageRequestParams{MaxTokens: 10, Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.SamplingMessageContent{Value: &mcp.AudioContent{Data: "AAAA", MIMEType: "audio/wav"}}}}}
	case "sample_tools":
		return mcp.MethodSamplingCreateMessage, &mcp.CreateMessageRequestParams{MaxTokens: 10, Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.SamplingMessageContent{Value: &mcp.TextContent{Text: "hi"}}}},
			Tools: []mcp.Tool{{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}}}
	case "roots":
		return mcp.MethodRootsList, &mcp.RequestParams{}
	}
	return "", nil
}

func (askNS) CallTool(ctx context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	method, params := question(p.Name)
	if method == "" {
		return nil, server.ErrUnknownTool
	}
	res, err := server.Ask(ctx, method, params)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.ContentBlock{{Value: &mcp.TextContent{Text: string(b)}}}}, nil
}

// asking is one legacy client connection of an edge serving askNS: what
// mcpx sends on the call's stream arrives on out.
type asking struct {
	t    *testing.T
	e    *edge.Edge
	sess *edge.Session
	rev  mcp.Revision
	out  chan *jsonrpc.Message
}

func newAsking(t *testing.T, rev, caps string, timeout time.Duration) *asking {
	a := &asking{t: t, e: &edge.Edge{Server: &server.Server{NS: askNS{}, Info: mcp.Implementation{Name: "mcpx-test", Version: "1"}}, AskTimeout: timeout},
		sess: new(edge.Session), out: make(chan *jsonrpc.Message, 64)}
	init := &jsonrpc.Message{JSONRPC: "2.0", ID: json.RawMessage(`1`), Method: "initialize",
		Params: json.RawMessage(`{"protocolVersion":"` + rev + `","capabilities":` + caps + `,"clientInfo":{"name":"asked-client","version":"9"}}`)}
	r := a.e.Handle(context.Background(), a.sess, edge.In{Msg: init, Default: edge.Headerless}, nil)
	if r.Msg == nil || r.Msg.Error != nil {
		t.Fatalf("initialize: %+v", r.Msg)
	}
	a.rev = mcp.Revision(rev)
	return a
}

// call starts tools/call name; its reply arrives on the channel returned.
func (a *asking) call(ctx context.Context, id int, name string, sink bool) <-chan edge.Reply {
	done := make(chan edge.Reply, 1)
	m := &jsonrpc.Message{JSONRPC: "2.0", ID: json.RawMessage(fmt.Sprint(id)), Method: "tools/call", Params: json.RawMessage(`{"name":"` + name + `"}`)}
	var s edge.Sink
	if sink {
		s = func(m *jsonrpc.Message) { a.out <- m }
	}
	go func() { done <- a.e.Handle(ctx, a.sess, edge.In{Msg: m, Default: edge.Headerless}, s) }()
	return done
}

// question waits for the next request mcpx sends and validates it
// closed-world as a ServerRequest of the client's revision.
func (a *asking) question() *jsonrpc.Message {
	a.t.Helper()
	select {
	case m := <-a.out:
		if !m.IsRequest() {
			a.t.Fatalf("want a request, got %+v", m)
		}
		v, err := closedworld.Default()
		if err != nil {
			a.t.Fatal(err)
		}
		raw, _ := jsonrpc.Encode(m)
		def := "ServerRequest"
		if !v.Has(string(a.rev), "JSONRPCRequest") || a.rev < mcp.Rev20251125 {
			// Before 2025-11-25 a ServerRequest is {method, params}.
			raw, _ = json.Marshal(map[string]any{"method": m.Method, "params": m.Params})
		}
		if err := v.Validate(string(a.rev), def, raw); err != nil {
			a.t.Errorf("%s request %s:\n%v", a.rev, raw, err)
		}
		return m
	case <-time.After(5 * time.Second):
		a.t.Fatal("no question reached the client")
	}
	return nil
}

func (a *asking) answer(id json.RawMessage, result string) edge.Reply {
	return a.e.Handle(context.Background(), a.sess, edge.In{Msg: &jsonrpc.Message{JSONRPC: "2.0", ID: id, Result: json.RawMessage(result)}}, nil)
}

func wait(t *testing.T, done <-chan edge.Reply) edge.Reply {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("the call did not end")
	}
	return edge.Reply{}
}

const allCaps = `{"sampling":{},"elicitation":{"form":{},"url":{}},"roots":{"listChanged":true}}`

// TestAskRelaysQuestionAndAnswer: each kind of question reaches a legacy
// client as a request with a fresh string id in its revision, and the
// response the client sends back with that id (a 202) is the result the
// asker gets, upgraded to the hub.
func TestAskRelaysQuestionAndAnswer(t *testing.T) {
	for _, tc := range []struct{ rev, tool, answer, want string }{
		{"2025-06-18", "elicit", `{"action":"accept","content":{"name":"Ada"}}`, `"name":"Ada"`},
		{"2025-11-25", "elicit", `{"action":"accept","content":{"name":"Ada"}}`, `"name":"Ada"`},
		{"2025-11-25", "elicit_url", `{"action":"accept"}`, `"action":"accept"`},
		{"2024-11-05", "sample", `{"role":"assistant","content":{"type":"text","text":"hello"},"model":"m"}`, `"text":"hello"`},
		{"2025-11-25", "sample", `{"role":"assistant","content":{"type":"text","text":"hello"},"model":"m"}`, `"text":"hello"`},
		{"2024-11-05", "roots", `{"roots":[{"uri":"file:///w","name":"w"}]}`, `"uri":"file:///w"`},
	} {
		t.Run(tc.rev+"/"+tc.tool, func(t *testing.T) {
			caps := allCaps
			if tc.rev == "2025-06-18" {
				caps = `{"sampling":{},"elicitation":{},"roots":{}}`
			}
			a := newAsking(t, tc.rev, caps, 0)
			done := a.call(context.Background(), 5, tc.tool, true)
			q := a.question()
			if !strings.HasPrefix(string(q.ID), `"mcpx-q-`) {
				t.Errorf("question id %s, want a string of mcpx's own", q.ID)
			}
			if tc.tool == "elicit_url" && !strings.Contains(string(q.Params), `"elicitationId":"mcpx-`) {
				t.Errorf("a 2025-11-25 URL-mode request without an elicitationId from the asker gets one of mcpx's: %s", q.Params)
			}
			if r := a.answer(q.ID, tc.answer); r.Status != 202 || r.Msg != nil {
				t.Errorf("the client's response: %+v, want 202 and nothing", r)
			}
			r := wait(t, done)
			if r.Msg == nil || r.Msg.Error != nil || !strings.Contains(string(r.Msg.Result), strings.ReplaceAll(tc.want, `"`, `\"`)) {
				t.Errorf("call result %+v, want it to carry %s", r.Msg, tc.want)
			}
		})
	}
}

// TestAskOnlyWhatTheClientDeclared: a question the client did not declare
// a capability for never reaches it; the asker gets the specification's
// code: roots -32601 (roots page), sampling and elicitation without the
// capability -32601, an undeclared elicitation mode -32602 (2025-11-25
// elicitation page), tools without sampling.tools -32602; and a method
// the client's revision lacks (elicitation before 2025-06-18) -32601.
func TestAskOnlyWhatTheClientDeclared(t *testing.T) {
	for _, tc := range []struct {
		rev, caps, tool string
		code            int64
		says            string
	}{
		{"2025-11-25", `{}`, "roots", -32601, "did not declare the roots capability"},
		{"2025-11-25", `{}`, "sample", -32601, "did not declare the sampling capability"},
		{"2025-11-25", `{}`, "elicit", -32601, "did not declare the elicitation capability"},
		{"2025-11-25", `{"elicitation":{}}`, "elicit_url", -32602, "did not declare elicitation.url"},
		{"2025-11-25", `{"elicitation":{"url":{}}}`, "elicit", -32602, "did not declare elicitation.form"},
		{"2025-11-25", `{"sampling":{}}`, "sample_tools", -32602, "did not declare sampling.tools"},
		{"2025-03-26", `{"sampling":{}}`, "elicit", -32601, "which has no elicitation/create"},
		{"2025-06-18", `{"elicitation":{}}`, "elicit_url", -32602, "did not declare elicitation.url"},
	} {
		t.Run(tc.rev+"/"+tc.caps+"/"+tc.tool, func(t *testing.T) {
			a := newAsking(t, tc.rev, tc.caps, 0)
			r := wait(t, a.call(context.Background(), 5, tc.tool, true))
			if r.Msg == nil || r.Msg.Error == nil || r.Msg.Error.Code != tc.code || !strings.Contains(r.Msg.Error.Message, tc.says) || !strings.Contains(r.Msg.Error.Message, "asked-client 9") {
				t.Errorf("got %+v, want %d saying %q and naming the client", r.Msg, tc.code, tc.says)
			}
			select {
			case m := <-a.out:
				t.Errorf("the client was sent %+v", m)
			default:
			}
		})
	}
}

// TestAskRefusesContentTheRevisionCannotCarry: audio in a sampling
// message cannot be written in 2024-11-05: -32602 saying so, nothing sent.
func TestAskRefusesContentTheRevisionCannotCarry(t *testing.T) {
	a := newAsking(t, "2024-11-05", `{"sampling":{}}`, 0)
	r := wait(t, a.call(context.Background(), 5, "sample_audio", true))
	if r.Msg == nil || r.Msg.Error == nil || r.Msg.Error.Code != -32602 || !strings.Contains(r.Msg.Error.Message, "AudioContent has no 2024-11-05 form") {
		t.Errorf("got %+v, want -32602 naming the audio content", r.Msg)
	}
	if len(a.out) > 0 {
		t.Errorf("the client was sent %+v", <-a.out)
	}
}

// TestAskWithoutAStream: a request with no stream (a JSON-only HTTP
// client) cannot carry a question: -32603 saying why, at once.
func TestAskWithoutAStream(t *testing.T) {
	a := newAsking(t, "2025-11-25", allCaps, 0)
	r := wait(t, a.call(context.Background(), 5, "roots", false))
	if r.Msg == nil || r.Msg.Error == nil || r.Msg.Error.Code != -32603 || !strings.Contains(r.Msg.Error.Message, "no stream") {
		t.Errorf("got %+v, want -32603 saying there is no stream", r.Msg)
	}
}

// TestAskUnknownAndDuplicateAnswers: a response whose id no question
// waits for, and a second answer to one already answered, are 202 and
// ignored: nothing hangs, the call gets the first answer.
func TestAskUnknownAndDuplicateAnswers(t *testing.T) {
	a := newAsking(t, "2025-11-25", allCaps, 0)
	if r := a.answer(json.RawMessage(`"nobody"`), `{}`); r.Status != 202 {
		t.Errorf("unknown id: %+v", r)
	}
	done := a.call(context.Background(), 5, "roots", true)
	q := a.question()
	a.answer(json.RawMessage(`"mcpx-q-999"`), `{"roots":[]}`) // not its id
	a.answer(q.ID, `{"roots":[{"uri":"file:///first"}]}`)
	if r := a.answer(q.ID, `{"roots":[{"uri":"file:///second"}]}`); r.Status != 202 {
		t.Errorf("duplicate: %+v", r)
	}
	r := wait(t, done)
	if r.Msg == nil || !strings.Contains(string(r.Msg.Result), "first") {
		t.Errorf("got %+v, want the first answer", r.Msg)
	}
}

// TestAskTimeoutAndCancel: a question nobody answers fails after
// AskTimeout with -32603 and the client is told (notifications/cancelled
// naming it); one whose call is cancelled ends with it; either way a late
// answer finds nobody and is ignored.
func TestAskTimeoutAndCancel(t *testing.T) {
	a := newAsking(t, "2025-11-25", allCaps, 100*time.Millisecond)
	done := a.call(context.Background(), 5, "roots", true)
	q := a.question()
	r := wait(t, done)
	if r.Msg == nil || r.Msg.Error == nil || r.Msg.Error.Code != -32603 || !strings.Contains(r.Msg.Error.Message, "did not answer roots/list within 100ms") {
		t.Errorf("got %+v, want -32603 for the timeout", r.Msg)
	}
	if n := <-a.out; n.Method != "notifications/cancelled" || !strings.Contains(string(n.Params), string(q.ID)) {
		t.Errorf("after the timeout the client got %+v, want notifications/cancelled for %s", n, q.ID)
	}
	a.answer(q.ID, `{"roots":[]}`) // late: ignored

	ctx, cancel := context.WithCancel(context.Background())
	done = a.call(ctx, 6, "roots", true)
	a.question()
	cancel()
	wait(t, done)
}

// TestAskPendingLimit: no more than edge.MaxPendingAsks questions wait in
// one session; the next fails at once with -32603 and is not sent.
func TestAskPendingLimit(t *testing.T) {
	a := newAsking(t, "2025-11-25", allCaps, 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var dones []<-chan edge.Reply
	for i := range edge.MaxPendingAsks {
		dones = append(dones, a.call(ctx, 10+i, "roots", true))
		a.question()
	}
	r := wait(t, a.call(ctx, 99, "roots", true))
	if r.Msg == nil || r.Msg.Error == nil || r.Msg.Error.Code != -32603 || !strings.Contains(r.Msg.Error.Message, "too many questions") {
		t.Errorf("got %+v, want -32603 for the limit", r.Msg)
	}
	cancel()
	var wg sync.WaitGroup
	for _, d := range dones {
		wg.Add(1)
		go func() { defer wg.Done(); <-d }()
	}
	wg.Wait()
	// Cleaned up: a new question can wait again.
	done := a.call(context.Background(), 200, "roots", true)
	for m := range a.out {
		if m.IsRequest() {
			a.answer(m.ID, `{"roots":[]}`)
			break
		}
	}
	if r := wait(t, done); r.Msg == nil || r.Msg.Error != nil {
		t.Errorf("after the others ended: %+v", r.Msg)
	}
}

// TestAskModernClient: a 2026-07-28 client gets no server-to-client
// request; the asker gets an error saying so.
func TestAskModernClient(t *testing.T) {
	e := &edge.Edge{Server: &server.Server{NS: askNS{}, Info: mcp.Implementation{Name: "mcpx-test", Version: "1"}}}
	m := &jsonrpc.Message{JSONRPC: "2.0", ID: json.RawMessage(`3`), Method: "tools/call", Params: json.RawMessage(`{"name":"roots",` + modernMeta + `}`)}
	sent := 0
	r := e.Handle(context.Background(), new(edge.Session), edge.In{Msg: m, Default: edge.Headerless}, func(*jsonrpc.Message) { sent++ })
	if r.Msg == nil || r.Msg.Error == nil || sent != 0 {
		t.Fatalf("got %+v (sent %d), want an error and nothing sent", r.Msg, sent)
	}
	if !errors.Is(server.ErrNoAsker, server.ErrNoAsker) || !strings.Contains(r.Msg.Error.Message, "cannot be sent to a 2026-07-28 client") {
		t.Errorf("got %+v", r.Msg.Error)
	}
}
