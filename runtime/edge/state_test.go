package edge_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
)

// TestSessionStateRoundTrip: what a legacy session negotiated and set
// survives its record's JSON (a store shared by replicas), and a session
// restored from it serves in the negotiated revision with the client's
// capabilities; Update takes over a log level set elsewhere.
func TestSessionStateRoundTrip(t *testing.T) {
	c := newClient(t)
	r := c.do("initialize", `{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{},"roots":{"listChanged":true}},"clientInfo":{"name":"t","version":"1.2"}}`)
	if r.Msg == nil || r.Msg.Error != nil {
		t.Fatalf("initialize: %+v", r.Msg)
	}
	if r := c.do("logging/setLevel", `{"level":"warning"}`); r.Msg == nil || r.Msg.Error != nil {
		t.Fatalf("setLevel: %+v", r.Msg)
	}
	st := c.sess.State()
	if st.Revision != mcp.Rev20250618 || st.LogLevel != "warning" || st.Client.Version != "1.2" || st.Capabilities.Elicitation == nil || st.Capabilities.Roots == nil {
		t.Fatalf("state: %+v", st)
	}
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var back edge.SessionState
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	restored := edge.RestoreSession(back)
	if got := restored.State(); !reflect.DeepEqual(got, st) {
		t.Fatalf("restored:\n%+v\nwant\n%+v", got, st)
	}
	// Served on the restored session: in its revision, not the default.
	c2 := newClient(t)
	c2.sess = restored
	if r := c2.do("tools/list", ""); r.Rev != mcp.Rev20250618 || r.Msg == nil || r.Msg.Error != nil {
		t.Fatalf("tools/list on the restored session: rev %s, %+v", r.Rev, r.Msg)
	}
	back.LogLevel = "debug"
	restored.Update(back)
	if restored.State().LogLevel != "debug" {
		t.Fatal("Update did not take the log level over")
	}
}
