package stdio_test

import (
	"encoding/json"
	"testing"

	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/transport/stdio"
	"github.com/mcpx-dev/mcpx/testkit/closedworld"
)

// TestEachModernRevisionOverStdio: on one stdio process, a request whose
// _meta names a modern revision is answered in it, for every modern
// revision in the tables, before and after a legacy initialize on the
// same process; the legacy session keeps its own revision meanwhile.
func TestEachModernRevisionOverStdio(t *testing.T) {
	v, err := closedworld.Default()
	if err != nil {
		t.Fatal(err)
	}
	s := start(t, stdio.Options{})
	check := func(rev string) {
		t.Helper()
		s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + rev + `","io.modelcontextprotocol/clientCapabilities":{}}}}`)
		var r struct{ Result json.RawMessage }
		got := s.recv()
		if json.Unmarshal([]byte(got), &r) != nil || r.Result == nil {
			t.Fatalf("%s tools/list: %s", rev, got)
		}
		if err := v.Validate(rev, "ListToolsResult", r.Result); err != nil {
			t.Errorf("%s tools/list: %v", rev, err)
		}
	}
	for _, rev := range edge.ModernRevisions {
		check(string(rev))
	}
	legacy := string(edge.Oldest)
	s.send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"` + legacy + `","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	s.recv()
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, rev := range edge.ModernRevisions {
		check(string(rev))
	}
	s.send(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	var r struct{ Result json.RawMessage }
	if got := s.recv(); json.Unmarshal([]byte(got), &r) != nil || v.Validate(legacy, "ListToolsResult", r.Result) != nil {
		t.Errorf("the %s session's tools/list: %s", legacy, got)
	}
}
