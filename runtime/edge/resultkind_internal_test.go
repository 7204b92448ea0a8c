package edge

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
)

// TestResultKinds: Dialect.Result decodes a complete result and refuses,
// as an *UnrelayedResultError saying what came back, every result its hub
// type does not describe, for each method that may carry one and in the
// revisions that send them; a member of the wrong shape is still the
// decoder's to report.
func TestResultKinds(t *testing.T) {
	const elicit = `{"method":"elicitation/create","params":{"mode":"form","message":"?","requestedSchema":{"type":"object","properties":{}}}}`
	for _, tc := range []struct {
		rev           mcp.Revision
		method, raw   string
		kind, message string // kind "": decoded
	}{
		{mcp.Rev20260728, "tools/call", `{"resultType":"complete","content":[]}`, "", ""},
		{mcp.Rev20260728, "tools/call", `{"content":[]}`, "", ""}, // absent: complete
		{mcp.Rev20251125, "tools/call", `{"content":[]}`, "", ""},
		{mcp.Rev20260728, "tools/call", `{"resultType":"input_required","inputRequests":{"b":` + elicit + `,"a":` + elicit + `}}`, "input_required",
			`the upstream answered with an input_required result (asking "a", "b"), which mcpx cannot relay yet`},
		{mcp.Rev20260728, "tools/call", `{"resultType":"input_required","requestState":"x"}`, "input_required",
			`the upstream answered with an input_required result, which mcpx cannot relay yet`},
		{mcp.Rev20260728, "tools/call", `{"resultType":"input_required","inputRequests":{"1":{},"2":{},"3":{},"4":{},"5":{},"6":{},"7":{}}}`, "input_required",
			`the upstream answered with an input_required result (asking "1", "2", "3", "4", "5", and 2 more) that mcpx cannot read: the upstream's InputRequiredResult does not decode: * within "/inputRequests/1": v20260728.InputRequest: no "method" member`}, // *: the JSON decoder's own words
		{mcp.Rev20260728, "prompts/get", `{"resultType":"input_required","inputRequests":{"k":` + elicit + `}}`, "input_required",
			`the upstream answered with an input_required result (asking "k"), which mcpx cannot relay yet`},
		{mcp.Rev20260728, "resources/read", `{"resultType":"input_required","requestState":"s"}`, "input_required", ""},
		{mcp.Rev20260728, "tools/call", `{"resultType":"task","taskId":"t1","status":"working","createdAt":"x","lastUpdatedAt":"x","ttlMs":null}`, "task",
			`the upstream answered with a task handle (task "t1"), which mcpx cannot relay yet`},
		{mcp.Rev20251125, "tools/call", `{"task":{"taskId":"t2","status":"working","createdAt":"x","lastUpdatedAt":"x","ttl":null}}`, "task",
			`the upstream answered with a task handle (task "t2"), which mcpx cannot relay yet`},
		{mcp.Rev20251125, "tools/call", `{"task":{}}`, "task", `the upstream answered with a task handle, which mcpx cannot relay yet`},
		{mcp.Rev20260728, "tools/call", `{"resultType":"later","content":[]}`, "later",
			`the upstream answered with a result of resultType "later", which mcpx does not know`},
		{mcp.Rev20260728, "tools/list", `{"resultType":"input_required"}`, "input_required", ""},
		// An explicit complete with a stray task member is complete.
		{mcp.Rev20260728, "tools/call", `{"resultType":"complete","content":[],"task":{"taskId":"t"}}`, "", ""},
	} {
		d := &Dialect{}
		d.setRevision(tc.rev)
		res, err := d.Result(tc.method, json.RawMessage(tc.raw))
		var u *UnrelayedResultError
		switch {
		case tc.kind == "" && (err != nil || res == nil):
			t.Errorf("%s %s %s: %v, want it decoded", tc.rev, tc.method, tc.raw, err)
		case tc.kind != "" && !errors.As(err, &u):
			t.Errorf("%s %s %s: got %#v, %v; want an UnrelayedResultError", tc.rev, tc.method, tc.raw, res, err)
		case tc.kind != "" && (u.Kind != tc.kind || u.Method != tc.method || string(u.Raw) != tc.raw):
			t.Errorf("%s %s: got %+v, want kind %q", tc.rev, tc.method, u, tc.kind)
		case tc.message != "" && !matches(err.Error(), tc.message):
			t.Errorf("%s %s: message %q\nwant %q", tc.rev, tc.method, err, tc.message)
		}
	}
	// Wrong shapes: the decoder says so, as before.
	for _, raw := range []string{`{"resultType":7,"content":[]}`, `{"content":"no"}`, `[1]`} {
		d := &Dialect{}
		d.setRevision(mcp.Rev20260728)
		_, err := d.Result("tools/call", json.RawMessage(raw))
		if err == nil || errors.As(err, new(*UnrelayedResultError)) || !strings.Contains(err.Error(), "does not decode") {
			t.Errorf("%s: %v, want the decoder's error", raw, err)
		}
	}
}

// matches reports whether msg is want, where a "*" in want stands for any
// text (the JSON decoder's wording, which mcpx does not choose).
func matches(msg, want string) bool {
	before, after, wild := strings.Cut(want, "*")
	if !wild {
		return msg == want
	}
	return len(msg) >= len(before)+len(after) && strings.HasPrefix(msg, before) && strings.HasSuffix(msg, after)
}

// TestInputRequiredNoError: a handler's answer without an error is not
// looked into for an InputRequired, whose errors.As target escapes (one
// allocation a call before).
func TestInputRequiredNoError(t *testing.T) {
	e, c := &Edge{}, &call{rev: mcp.Rev20260728}
	if n := testing.AllocsPerRun(100, func() {
		if _, _, ok := e.inputRequired(c, mcp.MethodToolsCall, nil); ok {
			t.Fatal("input required without an error")
		}
	}); n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
}

// TestProtocolVersionNoCopy: a request's _meta protocol version, read on
// every 2026-07-28 request, costs nothing when it names a revision (its
// string was allocated before); any other is
// still read, as a string or as its raw JSON.
func TestProtocolVersionNoCopy(t *testing.T) {
	m := requestMeta{protocolVersionKey: json.RawMessage(`"2026-07-28"`)}
	if v, ok := m.protocolVersion(); v != "2026-07-28" || !ok {
		t.Fatalf("protocolVersion = %q, %v", v, ok)
	}
	if n := testing.AllocsPerRun(100, func() { m.protocolVersion() }); n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
	for raw, want := range map[string]string{`"1999-01-01"`: "1999-01-01", `"2026\u002d07-28"`: "2026-07-28", `7`: "7"} {
		if v, ok := (requestMeta{protocolVersionKey: json.RawMessage(raw)}).protocolVersion(); v != want || !ok {
			t.Errorf("%s: protocolVersion = %q, %v; want %q", raw, v, ok, want)
		}
	}
}

// TestHandlerContextAllocations: a handler's context costs its one frame
// and its notifier and asker, allocated together (3 allocations before:
// the notifier and the asker each its own).
func TestHandlerContextAllocations(t *testing.T) {
	e := &Edge{}
	c := &call{ctx: context.Background(), sess: new(Session), rev: mcp.Rev20260728}
	if n := testing.AllocsPerRun(100, func() { e.handlerContext(c, mcp.MethodToolsCall) }); n > 2 {
		t.Errorf("%v allocations, want at most 2", n)
	}
}

// TestCompleteLooksAsReadKindDecodes: a result that complete takes for
// complete without decoding is one that readKind, decoding its members,
// takes for complete too; what complete is not sure of is left to it.
func TestCompleteLooksAsReadKindDecodes(t *testing.T) {
	rev := revision.Lookup(mcp.Rev20251125)
	for _, tc := range []struct {
		raw  string
		sure bool
	}{
		{`{"resultType":"complete","content":[{"text":"\"resultType\":\"task\"","type":"text"}]}`, true},
		{` {"content":[{"type":"text","text":"{\"task\":{}}"}],"structuredContent":{"task":{"taskId":"t"}}}`, true},
		{`{"content":[],"resultType":"complete","task":{"taskId":"t"}}`, true},
		{`{"resultType":"complete","resultType":"task"}`, false},
		{`{"resultType":"task","taskId":"t"}`, false},
		{`{"resultType":null,"content":[]}`, false},
		{`{"resultTyp\u0065":"task"}`, false},
		{`{"task":{"taskId":"t"}}`, false},
		{`{"task":null}`, false},
		{`{"content":[`, false},
		{`[1]`, false},
		{``, false},
	} {
		if got := complete(json.RawMessage(tc.raw)); got != tc.sure {
			t.Errorf("complete(%s) = %v, want %v", tc.raw, got, tc.sure)
		}
		if tc.sure && readKind(rev, "tools/call", "CallToolResult", json.RawMessage(tc.raw)) != nil {
			t.Errorf("%s: complete, but readKind says %v", tc.raw, readKind(rev, "tools/call", "CallToolResult", json.RawMessage(tc.raw)))
		}
	}
}
