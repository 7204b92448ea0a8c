package wiretest

import (
	"testing"

	"github.com/mcpx-dev/mcpx/testkit/closedworld"
)

// TestCheckSentCatchesViolations makes sure the wire checks can fail: a
// message that is fine in one revision and not in another is told apart,
// for results, notifications and envelopes.
func TestCheckSentCatchesViolations(t *testing.T) {
	t.Parallel()
	v, err := closedworld.Default()
	if err != nil {
		t.Fatalf("closed-world validator: %v (run `make schemas`)", err)
	}
	const (
		toolWithTitle = `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","title":"Echo","inputSchema":{"type":"object"}}]}}`
		progress      = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1,"total":2,"message":"half way"}}`
	)
	for _, c := range []struct {
		name   string
		msg    Sent
		wantOK bool
	}{
		{"a tool title at 2025-06-18 is declared", Sent{Raw: []byte(toolWithTitle), Method: "tools/list", Rev: "2025-06-18"}, true},
		{"a tool title at 2025-03-26 is undeclared", Sent{Raw: []byte(toolWithTitle), Method: "tools/list", Rev: "2025-03-26"}, false},
		{"a result is checked against its method's result", Sent{Raw: []byte(toolWithTitle), Method: "prompts/list", Rev: "2025-06-18"}, false},
		{"a result answering no request is reported", Sent{Raw: []byte(toolWithTitle), Rev: "2025-06-18"}, false},
		{"a progress message at 2025-03-26 is declared", Sent{Raw: []byte(progress), Rev: "2025-03-26"}, true},
		{"a progress message at 2024-11-05 is undeclared", Sent{Raw: []byte(progress), Rev: "2024-11-05"}, false},
		{"a framed notification at 2025-11-25 is declared", Sent{Raw: []byte(progress), Rev: "2025-11-25"}, true},
		{"a notification mcpx never sends is rejected", Sent{Raw: []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), Rev: "2025-11-25"}, false},
		{"an envelope member is undeclared", Sent{Raw: []byte(`{"jsonrpc":"2.0","id":1,"result":{},"extra":1}`), Method: "ping", Rev: "2025-06-18"}, false},
		{"an empty result for ping is declared", Sent{Raw: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), Method: "ping", Rev: "2024-11-05"}, true},
		{"a 2026-07-28 result needs resultType", Sent{Raw: []byte(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`), Method: "tools/list", Rev: "2026-07-28"}, false},
		{"a 2026-07-28 result with resultType is declared", Sent{Raw: []byte(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","ttlMs":0,"cacheScope":"public","tools":[]}}`), Method: "tools/list", Rev: "2026-07-28"}, true},
		{"a legacy result must not carry resultType", Sent{Raw: []byte(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":[]}}`), Method: "tools/list", Rev: "2025-11-25"}, false},
		{"a result for a method the revision lacks is reported", Sent{Raw: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), Method: "ping", Rev: "2026-07-28"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkSent(v, c.msg)
			if (err == nil) != c.wantOK {
				t.Errorf("checkSent(%s at %s) = %v, want ok=%v", c.msg.Raw, c.msg.Rev, err, c.wantOK)
			}
		})
	}
}

// TestEvents reads SSE bodies as streamhttp writes them, and as a peer
// may: several data lines, comments, CRLF.
func TestEvents(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"one event", "event: message\ndata: {\"a\":1}\n\n", []string{`{"a":1}`}},
		{"keep-alive comments are skipped", ": keep-alive\n\nevent: message\ndata: 1\n\n: keep-alive\n\n", []string{"1"}},
		{"data lines are joined", "data: [1,\ndata: 2]\n\n", []string{"[1,\n2]"}},
		{"CRLF and no trailing blank line", "data: 1\r\n\r\ndata:2", []string{"1", "2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := events([]byte(c.body))
			if len(got) != len(c.want) {
				t.Fatalf("events(%q) = %q, want %q", c.body, got, c.want)
			}
			for i := range got {
				if string(got[i]) != c.want[i] {
					t.Errorf("event %d = %q, want %q", i, got[i], c.want[i])
				}
			}
		})
	}
}

// TestStdioWire matches responses to requests by id and finds the revision
// each was sent to: what initialize negotiated, what _meta names, or the
// revision a client that declared nothing is answered in.
func TestStdioWire(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, in, out string
		want          []Sent // Raw and Where left out
	}{
		{
			"initialize fixes the revision",
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}` + "\n" +
				`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
				`{"jsonrpc":"2.0","id":"a","method":"tools/list"}` + "\n",
			`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-03-26"}}` + "\n" +
				`{"jsonrpc":"2.0", "id": "a","result":{"tools":[]}}` + "\n" +
				`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}` + "\n",
			[]Sent{{Method: "initialize", Rev: "2025-03-26"}, {Method: "tools/list", Rev: "2025-03-26"}, {Rev: "2025-03-26"}},
		},
		{
			"_meta names the revision, and a request without it is answered as the oldest",
			`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}` + "\n" +
				`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n",
			`{"jsonrpc":"2.0","id":2,"result":{}}` + "\n" + `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"}}` + "\n",
			[]Sent{{Method: "ping", Rev: "2024-11-05"}, {Method: "server/discover", Rev: "2026-07-28"}},
		},
		{
			"a cancelled request is marked",
			`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}` + "\n" +
				`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{}}` + "\n" +
				`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8}}` + "\n",
			`{"jsonrpc":"2.0","id":7,"result":{"protocolVersion":"2024-11-05"}}` + "\n" + `{"jsonrpc":"2.0","id":8,"result":{}}` + "\n",
			[]Sent{{Method: "initialize", Rev: "2024-11-05"}, {Method: "tools/call", Rev: "2024-11-05", Cancelled: true}},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := new(StdioWire)
			w.FromClient.Write([]byte(c.in))
			w.FromServer.Write([]byte(c.out))
			got, err := w.Sent()
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("%d messages, want %d", len(got), len(c.want))
			}
			for i, g := range got {
				w := c.want[i]
				if g.Method != w.Method || g.Rev != w.Rev || g.Cancelled != w.Cancelled {
					t.Errorf("message %d (%s): method %q rev %s cancelled %v, want %q %s %v", i, g.Raw, g.Method, g.Rev, g.Cancelled, w.Method, w.Rev, w.Cancelled)
				}
			}
		})
	}
}
