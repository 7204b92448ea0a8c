package edge

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// The result lane: a tools/call result made of what the typed way would
// write again unchanged, from the upstream's revision to the client's,
// crosses as the upstream wrote it. The typed way decodes it into the
// upstream revision's types (dropping what that revision does not
// declare), upgrades it to the hub, downgrades it to the client's
// revision (dropping what that one does not declare) and encodes it
// again: about a tenth of mcpx's CPU on a small call (BENCHMARKS.md,
// thirteenth round).
//
// The lane takes only a result whose every member both revisions declare
// (the same one, or two: a 2025-11-25 upstream and a 2025-06-18 client),
// checked against the generated tables: content of text, image and audio
// blocks (no annotations), isError a boolean, structuredContent an
// object, _meta objects neither empty nor with reserved keys
// (io.modelcontextprotocol/…, which the conversions drop or convert; the
// upstream's serverInfo only when both revisions are modern), resultType
// absent or "complete". Anything else (resource blocks, whose URIs a
// namespace maps; a task or an input_required answer; a member either
// revision lacks) goes the typed way. For a 2026-07-28 client the lane
// writes the envelope the typed way writes: resultType "complete", and
// mcpx's serverInfo in _meta in place of the upstream's, its other keys
// kept.
//
// The edge opens the lane (taskCall) only for a call whose result goes
// straight into the request's answer; a namespace that parks a call
// closes it (server.WithoutResultLane), as the gateway does with a
// 2026-07-28 client's call to an upstream that may ask by request.

// resultLane is one request's lane, a server.ResultLane. The zero value
// is closed.
type resultLane struct {
	mu    sync.Mutex
	open  bool
	e     *Edge
	rev   mcp.Revision // the client's
	out   *mcpjson.Buffer
	stand *mcp.CallToolResult // what the call returns in place of the result
}

// openFor opens l, if there is one, for a call of e's whose client speaks
// rev.
func (l *resultLane) openFor(e *Edge, rev mcp.Revision) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.open, l.e, l.rev = true, e, rev
	l.mu.Unlock()
}

// isOpen reports whether l is open; false for none.
func (l *resultLane) isOpen() bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// ResultLane marks l as a server.ResultLane.
func (*resultLane) ResultLane() {}

// LaneResult offers raw, the upstream's result of a tools/call in d's
// revision, valid JSON as jsonrpc.Decode read it, to the lane of ctx's
// request. When the lane takes it (copied), it returns the stand-in the
// call returns in its place; nil means raw goes the typed way (Result).
func (d *Dialect) LaneResult(ctx context.Context, raw json.RawMessage) *mcp.CallToolResult {
	l, _ := server.ResultLaneOf(ctx).(*resultLane)
	if l == nil {
		return nil
	}
	return l.take(d.rev, raw)
}

// take is LaneResult's, for a result in rev, the upstream's.
func (l *resultLane) take(rev mcp.Revision, raw json.RawMessage) *mcp.CallToolResult {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.open || l.out != nil {
		return nil
	}
	shape := laneShapeOf(rev, l.rev)
	if shape == nil {
		return nil
	}
	r, ok := shape.check(raw)
	if !ok {
		return nil
	}
	out := mcpjson.NewBuffer()
	if IsModern(l.rev) {
		shape.writeEnveloped(out, raw, r.meta, l.e.serverInfo())
	} else {
		out.Write(raw)
	}
	l.out = out
	l.stand = &mcp.CallToolResult{Content: []mcp.ContentBlock{}, ResultType: "complete"}
	if r.isError {
		l.stand.IsError = &r.isError
	}
	return l.stand
}

// close ends the lane as the call answers result. It returns the answer's
// bytes when the lane took the upstream's result and result is its
// stand-in; lost when the lane took it and something else came back (a
// namespace did not hand the stand-in back as it was), which must not be
// answered as it is: the stand-in holds none of the result.
func (l *resultLane) close(result any) (out *mcpjson.Buffer, lost bool) {
	if l == nil {
		return nil, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open = false
	if l.out == nil {
		return nil, false
	}
	out, l.out = l.out, nil
	if r, ok := result.(*mcp.CallToolResult); ok && r == l.stand {
		return out, false
	}
	out.Free()
	return nil, true
}

// laneShape is what the lane checks a result against for an upstream's
// revision and a client's: the members of CallToolResult both declare,
// the blocks both have, taken by their type (as written, quoted), and the
// serverInfo _meta key, which a 2026-07-28 answer's envelope writes and
// the upstream's _meta may hold when both revisions are modern ("" for a
// legacy client, where it is reserved as any other).
type laneShape struct {
	result     []string
	blocks     map[string]*blockShape
	serverInfo string
	// upServerInfo is the key of the upstream's serverInfo the lane
	// takes (and the envelope replaces): serverInfo when the upstream
	// spells it so, else "" (a legacy upstream's is reserved).
	upServerInfo string
}

// blockShape is a content block the lane takes: the members its type has
// in the revision, and the string members it must have besides type.
type blockShape struct {
	fields, required []string
}

// laneBlocks are the blocks the lane takes, by type: the hub type and the
// string members each must have. Resource blocks are not among them: a
// namespace maps their URIs.
var laneBlocks = []struct {
	tag, hub string
	required []string
}{
	{"text", "TextContent", []string{"text"}},
	{"image", "ImageContent", []string{"data", "mimeType"}},
	{"audio", "AudioContent", []string{"data", "mimeType"}},
}

// lanePair is an upstream's revision and a client's.
type lanePair struct{ up, client mcp.Revision }

// laneShapes are the shapes of every pair of revisions, from the
// generated tables.
var laneShapes = sync.OnceValue(func() map[lanePair]*laneShape {
	shapes := make(map[lanePair]*laneShape, len(revision.Tables)*len(revision.Tables))
	for _, up := range revision.Tables {
		for _, client := range revision.Tables {
			if shape := newLaneShape(up, client); shape != nil {
				shapes[lanePair{up.Revision, client.Revision}] = shape
			}
		}
	}
	return shapes
})

// newLaneShape is the shape of a result from an upstream of up's
// revision to a client of client's; nil when either lacks
// CallToolResult.
func newLaneShape(up, client *revision.Table) *laneShape {
	upRes, ok1 := up.Type("CallToolResult")
	clientRes, ok2 := client.Type("CallToolResult")
	if !ok1 || !ok2 {
		return nil
	}
	shape := &laneShape{result: fieldsInBoth(upRes.Fields, clientRes.Fields), blocks: map[string]*blockShape{}}
	for _, b := range laneBlocks {
		upTyp, ok1 := up.Type(b.hub)
		clientTyp, ok2 := client.Type(b.hub)
		if ok1 && ok2 {
			shape.blocks[`"`+b.tag+`"`] = &blockShape{fields: fieldsInBoth(upTyp.Fields, clientTyp.Fields), required: b.required}
		}
	}
	if IsModern(client.Revision) {
		shape.serverInfo = client.MetaKey(mcp.MetaKeyServerInfo)
		if IsModern(up.Revision) && up.MetaKey(mcp.MetaKeyServerInfo) == shape.serverInfo {
			shape.upServerInfo = shape.serverInfo
		}
	}
	return shape
}

// fieldsInBoth is the members in both a and b, in a's order.
func fieldsInBoth(a, b []string) []string {
	var both []string
	for _, f := range a {
		if slices.Contains(b, f) {
			both = append(both, f)
		}
	}
	return both
}

// laneShapeOf is the shape of a result from an upstream of revision up
// to a client of revision client; nil for none.
func laneShapeOf(up, client mcp.Revision) *laneShape {
	return laneShapes()[lanePair{up, client}]
}

// laneResult is what check learnt of a result.
type laneResult struct {
	meta    []byte // its _meta, nil when none
	isError bool
}

// check reports whether raw, a tools/call result valid as JSON, is one
// the lane takes (see the top of this file).
func (s *laneShape) check(raw []byte) (r laneResult, ok bool) {
	content := false
	ok = mcpjson.Members(raw, func(name, val []byte) bool {
		if !slices.Contains(s.result, string(name)) {
			return false
		}
		switch string(name) {
		case "content":
			content = true
			return mcpjson.Elements(val, s.block)
		case "isError":
			r.isError = string(val) == "true"
			return r.isError || string(val) == "false"
		case "structuredContent":
			return val[0] == '{'
		case "_meta":
			r.meta = val
			return plainMeta(val, s.upServerInfo)
		case "resultType":
			return string(val) == `"complete"`
		}
		return false // a member the lane does not know: the typed way's
	})
	return r, ok && content
}

// block reports whether val is a content block the lane takes: of a type
// in s.blocks, its required members strings, _meta an object, nothing
// else (no annotations).
func (s *laneShape) block(val []byte) bool {
	var typ []byte
	mcpjson.Members(val, func(name, v []byte) bool {
		if string(name) == "type" {
			typ = v
			return false
		}
		return true
	})
	b := s.blocks[string(typ)]
	if b == nil {
		return false
	}
	seen := 0 // a bit per required member
	return mcpjson.Members(val, func(name, v []byte) bool {
		if !slices.Contains(b.fields, string(name)) {
			return false
		}
		if string(name) == "type" {
			return true
		}
		if string(name) == "_meta" {
			return plainMeta(v, "")
		}
		if i := slices.Index(b.required, string(name)); i >= 0 {
			seen |= 1 << i
			return v[0] == '"'
		}
		return false // annotations, or a member the lane does not know
	}) && seen == 1<<len(b.required)-1
}

// reservedMeta is the prefix of the _meta keys the specification
// reserves, which the conversions drop from a revision that lacks them
// or convert.
const reservedMeta = "io.modelcontextprotocol/"

// plainMeta reports whether val is a _meta object with no reserved key
// but except, and not empty (which the typed way leaves out).
func plainMeta(val []byte, except string) bool {
	n := 0
	return val[0] == '{' && mcpjson.Members(val, func(name, _ []byte) bool {
		n++
		return !strings.HasPrefix(string(name), reservedMeta) || string(name) == except
	}) && n > 0
}

// writeEnveloped writes raw with the 2026-07-28 envelope, as
// Edge.envelope fills it: its members but _meta and resultType as they
// are, then _meta (the upstream's keys but serverInfo, then mcpx's
// serverInfo) and resultType "complete".
func (s *laneShape) writeEnveloped(out *mcpjson.Buffer, raw, meta, info []byte) {
	out.WriteString("{")
	mcpjson.Members(raw, func(name, val []byte) bool {
		if string(name) != "_meta" && string(name) != "resultType" {
			writeMember(out, name, val)
			out.WriteString(",")
		}
		return true
	})
	out.WriteString(`"_meta":{`)
	if meta != nil {
		mcpjson.Members(meta, func(name, val []byte) bool {
			if string(name) != s.serverInfo {
				writeMember(out, name, val)
				out.WriteString(",")
			}
			return true
		})
	}
	writeMember(out, []byte(s.serverInfo), info)
	out.WriteString(`},"resultType":"complete"}`)
}

// writeMember writes "name":val; name holds no escape (mcpjson.Members
// stops at one).
func writeMember(out *mcpjson.Buffer, name, val []byte) {
	out.WriteString(`"`)
	out.Write(name)
	out.WriteString(`":`)
	out.Write(val)
}
