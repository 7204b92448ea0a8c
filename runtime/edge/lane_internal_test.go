package edge

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

func laneEdge() *Edge {
	return &Edge{Server: &server.Server{Info: mcp.Implementation{Name: "mcpx", Version: "lane-test"}}}
}

// typedAnswer is what the typed way answers a client of revision client
// for raw, an upstream's tools/call result in revision up: decoded into
// up's types, upgraded to the hub's, then downgraded and encoded for the
// client (a namespace with nothing to map hands the result back as it
// is).
func typedAnswer(e *Edge, up, client mcp.Revision, raw []byte) (json.RawMessage, error) {
	res, err := testDialect(up).Result(mcp.MethodToolsCall, raw)
	if err != nil {
		return nil, err
	}
	return e.encodeResult(client, res)
}

// laneAnswer is what the lane answers a client of revision client for
// raw, an upstream's result in revision up, or false when it leaves raw
// to the typed way.
func laneAnswer(t *testing.T, e *Edge, up, client mcp.Revision, raw []byte) ([]byte, bool) {
	t.Helper()
	var l resultLane
	l.openFor(e, client)
	stand := l.take(up, raw)
	if stand == nil {
		if out, lost := l.close(nil); out != nil || lost {
			t.Fatalf("%s to %s: the lane refused %s, yet kept an answer", up, client, raw)
		}
		return nil, false
	}
	out, lost := l.close(stand)
	if out == nil || lost {
		t.Fatalf("%s to %s: the lane took %s and lost it", up, client, raw)
	}
	defer out.Free()
	return bytes.Clone(out.Bytes()), true
}

// sameJSON reports whether a and b are the same JSON value, members in
// any order; each must be valid as mcpx's decoder reads JSON (no member
// twice).
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := mcpjson.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := mcpjson.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

// laneSeeds are upstream results the lane takes between every two
// revisions that both have their members (needs names them), and others
// it must leave to the typed way.
var laneSeeds = []struct {
	raw string
	// needs is what the result holds that not every revision declares:
	// "blockMeta" (a block's _meta), "structured" (structuredContent),
	// "modern" (resultType, serverInfo), "audio" (AudioContent).
	needs string
	taken bool
}{
	{`{"content":[{"type":"text","text":"hi"}]}`, "", true},
	{`{"content":[]}`, "", true},
	{` { "content" : [ { "text" : "a\"b\u00e9\n" , "type" : "text" } , {"type":"text","text":""} ] , "isError" : true } `, "", true},
	{`{"isError":false,"content":[{"type":"text","text":"x"}],"_meta":{"a.b/c":[1,{"d":null}],"e":"f"}}`, "", true},
	{`{"content":[{"type":"text","text":"x","_meta":{"k":1}}]}`, "blockMeta", true},
	{`{"content":[{"type":"text","text":"x"}],"structuredContent":{"n":1.50,"s":"t"}}`, "structured", true},
	{`{"content":[{"type":"text","text":"x"}],"resultType":"complete"}`, "modern", true},
	{`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up","version":"9"},"x":true},"content":[{"type":"text","text":"x"}]}`, "modern", true},

	{`{"content":[{"type":"text","text":"x","annotations":{"priority":1}}]}`, "", false},
	{`{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"}]}`, "", true},
	{`{"content":[{"mimeType":"image/png","_meta":{"w":640},"data":"iVBORw0KGgo=","type":"image"}]}`, "blockMeta", true},
	{`{"content":[{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}]}`, "audio", true},
	{`{"content":[{"type":"text","text":"a"},{"type":"image","data":"AA==","mimeType":"image/gif"},{"type":"audio","data":"","mimeType":"audio/ogg"}],"isError":false}`, "audio", true},
	{`{"content":[{"type":"image","data":"AAAA"}]}`, "", false},
	{`{"content":[{"type":"image","mimeType":"image/png"}]}`, "", false},
	{`{"content":[{"type":"image","data":1,"mimeType":"image/png"}]}`, "", false},
	{`{"content":[{"type":"image","data":"AAAA","mimeType":"image/png","text":"x"}]}`, "", false},
	{`{"content":[{"type":"image","data":"AAAA","mimeType":"image/png","annotations":{}}]}`, "", false},
	{`{"content":[{"type":"text","data":"AAAA","mimeType":"image/png"}]}`, "", false},
	{`{"content":[{"type":"resource","resource":{"uri":"file:///a","text":"x"}}]}`, "", false},
	{`{"content":[{"data":"AAAA","mimeType":"image/png"}]}`, "", false},
	{`{"content":[{"type":"resource_link","uri":"file:///a","name":"a"}]}`, "", false},
	{`{"content":[{"type":"text","text":"x"}],"extra":1}`, "", false},
	{`{"content":[{"type":"text","text":"x","extra":1}]}`, "", false},
	{`{"content":[{"type":"text"}]}`, "", false},
	{`{"isError":false,"content":[{"text":"0"}]}`, "", false},
	{`{"content":[{"type":"text","text":1}]}`, "", false},
	{`{"content":[{"type":"text","text":"x"}],"isError":null}`, "", false},
	{`{"content":[{"type":"text","text":"x"}],"isError":"true"}`, "", false},
	{`{"content":{}}`, "", false},
	{`{"isError":true}`, "", false},
	{`{"content":[{"type":"text","text":"x"}],"structuredContent":[1]}`, "structured", false},
	{`{"content":[{"type":"text","text":"x"}],"structuredContent":null}`, "structured", false},
	{`{"content":[{"type":"text","text":"x"}],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"}}}`, "", false},
	{`{"content":[{"type":"text","text":"x"}],"_meta":{"io.modelcontextprotocol/model-immediate-response":"x"}}`, "", false},
	{`{"content":[{"type":"text","text":"x","_meta":{"io.modelcontextprotocol/serverInfo":{}}}]}`, "blockMeta", false},
	{`{"content":[{"type":"text","text":"x"}],"_meta":[]}`, "", false},
	{`{"_meta":{},"content":[]}`, "", false},
	{`{"content":[{"type":"text","text":"x","_meta":{}}]}`, "blockMeta", false},
	{`{"content":[{"type":"text","text":"x"}],"resultType":"task"}`, "modern", false},
	{`{"content":[{"type":"text","text":"x"}],"resultType":"input_required"}`, "modern", false},
	{`{"task":{"taskId":"t","status":"working"},"resultType":"task"}`, "modern", false},
	{`{"content":[{"type":"text","text":"x"}],"\u0069sError":true}`, "", false},
	{`[]`, "", false},
}

// has reports whether rev declares what needs names.
func has(rev mcp.Revision, needs string) bool {
	declares := func(typ, member string) bool {
		t, _ := revision.Lookup(rev).Type(typ)
		return slices.Contains(t.Fields, member)
	}
	switch needs {
	case "blockMeta":
		return declares("TextContent", "_meta")
	case "structured":
		return declares("CallToolResult", "structuredContent")
	case "modern":
		return IsModern(rev)
	case "audio":
		_, ok := revision.Lookup(rev).Type("AudioContent")
		return ok
	}
	return true
}

// TestLaneMatchesTyped: from an upstream of every revision to a client
// of every revision, the lane takes the results it should and answers
// each as the typed way does (the same JSON value), and leaves the
// others, including every result with a member either revision lacks,
// to the typed way.
func TestLaneMatchesTyped(t *testing.T) {
	e := laneEdge()
	for _, upt := range revision.Tables {
		for _, clientt := range revision.Tables {
			up, client := upt.Revision, clientt.Revision
			for _, s := range laneSeeds {
				want := s.taken && has(up, s.needs) && has(client, s.needs)
				got, taken := laneAnswer(t, e, up, client, []byte(s.raw))
				if taken != want {
					t.Errorf("%s to %s: %s: taken %v, want %v", up, client, s.raw, taken, want)
					continue
				}
				if !taken {
					continue
				}
				typed, err := typedAnswer(e, up, client, []byte(s.raw))
				if err != nil {
					t.Errorf("%s to %s: %s: the lane took what the typed way refuses: %v", up, client, s.raw, err)
					continue
				}
				if !sameJSON(t, got, typed) {
					t.Errorf("%s to %s: %s:\nlane  %s\ntyped %s", up, client, s.raw, got, typed)
				}
			}
		}
	}
}

// TestLaneOnce: a lane takes one result while it is open, none with a
// member its client's revision lacks; and an answer other than its
// stand-in is lost, not answered.
func TestLaneOnce(t *testing.T) {
	e := laneEdge()
	raw := []byte(`{"content":[{"type":"text","text":"x"}]}`)
	var closed resultLane
	if closed.take(mcp.Rev20260728, raw) != nil {
		t.Error("a lane never opened took a result")
	}
	var l resultLane
	l.openFor(e, mcp.Rev20251125)
	modern := []byte(`{"content":[{"type":"text","text":"x"}],"resultType":"complete"}`)
	if l.take(mcp.Rev20260728, modern) != nil {
		t.Error("a 2025-11-25 client's lane took a 2026-07-28 result with resultType")
	}
	stand := l.take(mcp.Rev20251125, raw)
	if stand == nil || l.take(mcp.Rev20251125, raw) != nil {
		t.Fatal("the lane did not take one result, and only one")
	}
	copied := *stand
	if out, lost := l.close(&copied); out != nil || !lost {
		t.Errorf("a copy of the stand-in came back: out %v, lost %v; want lost", out != nil, lost)
	}
	if l.take(mcp.Rev20251125, raw) != nil {
		t.Error("a closed lane took a result")
	}
	var none *resultLane
	if out, lost := none.close(nil); none.isOpen() || out != nil || lost {
		t.Error("no lane is open, nor holds anything")
	}
}

// FuzzLaneMatchesTyped: whatever the lane takes, from an upstream of any
// revision to a client of any, the typed way takes too and answers with
// the same JSON value.
func FuzzLaneMatchesTyped(f *testing.F) {
	n := len(revision.Tables)
	for _, s := range laneSeeds {
		for i := range n * n {
			f.Add([]byte(s.raw), uint8(i))
		}
	}
	e := laneEdge()
	f.Fuzz(func(t *testing.T, raw []byte, r uint8) {
		pair := int(r) % (n * n)
		up, client := revision.Tables[pair/n].Revision, revision.Tables[pair%n].Revision
		var v any
		if mcpjson.Unmarshal(raw, &v) != nil {
			return // the lane is offered only what jsonrpc.Decode read
		}
		got, taken := laneAnswer(t, e, up, client, raw)
		if !taken {
			return
		}
		typed, err := typedAnswer(e, up, client, raw)
		if err != nil {
			t.Fatalf("%s to %s: %s: the lane took what the typed way refuses: %v", up, client, raw, err)
		}
		if !sameJSON(t, got, typed) {
			t.Fatalf("%s to %s: %s:\nlane  %s\ntyped %s", up, client, raw, got, typed)
		}
	})
}

// BenchmarkLane: a small text result from a 2025-11-25 upstream to a
// 2025-06-18 client, the typed way and through the lane, side by side.
func BenchmarkLane(b *testing.B) {
	e := laneEdge()
	raw := []byte(`{"content":[{"type":"text","text":"{\"text\":\"hello, world\"}"}],"isError":false}`)
	b.Run("typed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := typedAnswer(e, mcp.Rev20251125, mcp.Rev20250618, raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("lane", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var l resultLane
			l.openFor(e, mcp.Rev20250618)
			out, _ := l.close(l.take(mcp.Rev20251125, raw))
			if out == nil {
				b.Fatal("the lane refused the result")
			}
			out.Free()
		}
	})
}
