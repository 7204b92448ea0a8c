package edge

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/convert"
	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// callParamsSeeds are tools/call params, and whether scanCallParams reads
// them (in every revision: the three members it reads are in all).
var callParamsSeeds = []struct {
	raw     string
	scanned bool
}{
	{`{"name":"echo","arguments":{"text":"hello"}}`, true},
	{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"up__echo","arguments":{"text":"hello"}}`, true},
	{` { "name" : "echo" , "arguments" : { "a" : [ 1 , 2 ] } , "_meta" : { "progressToken" : 7 } } `, true},
	{`{"name":"echo"}`, true},
	{`{"name":""}`, true},
	{`{}`, true},
	{`{"arguments":{}}`, true},
	{`{"_meta":{}}`, true},
	{`{"name":"échо","arguments":{"t":"<b>&\u2028"}}`, true},
	{`{"name":"e","_meta":{"k":null,"progressToken":"p"}}`, true},
	{`{"name":"e","arguments":{"text":"` + strings.Repeat("x", 5000) + `"}}`, true},
	{`{"name":"e\"cho"}`, false},
	{`{"name":"\u0065cho"}`, false},
	{`{"name":null}`, false},
	{`{"name":1}`, false},
	{`{"name":"e","arguments":null}`, false},
	{`{"name":"e","arguments":[1]}`, false},
	{`{"name":"e","arguments":"x"}`, false},
	{`{"name":"e","_meta":null}`, false},
	{`{"name":"e","_meta":{"\u006b":1}}`, false},
	{`{"name":"e","task":{"ttl":1000}}`, false},
	{`{"name":"e","requestState":"s"}`, false},
	{`{"name":"e","inputResponses":{}}`, false},
	{`{"name":"e","other":1}`, false},
	{`{"n\u0061me":"e"}`, false},
}

// decodedParams is raw as jsonrpc.Decode gives a request's params, or
// nil when the request does not decode.
func decodedParams(raw string) *jsonrpc.Message {
	msgs, errs, _ := jsonrpc.Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+raw+`}`), false)
	if len(msgs) != 1 || errs[0] != nil || !msgs[0].ParamsDecoded() {
		return nil
	}
	return msgs[0]
}

// checkCallParams checks, for params raw from a client of rev, that
// scanCallParams gives what the typed decode does whenever it reads them,
// and that writeCallParams writes what the typed encode does for those
// params and for them with the _meta members RequestFor sets; scanned is
// whether scanCallParams read them.
func checkCallParams(t *testing.T, rev mcp.Revision, raw string) (scanned bool) {
	t.Helper()
	m := decodedParams(raw)
	if m == nil {
		return false
	}
	typed, typedErr := decodeParams(rev, "CallToolRequestParams", m.Params)
	fast, scanned := scanCallParams(m.Params)
	if scanned {
		if typedErr != nil {
			t.Fatalf("%s: %s: scanned what the typed way refuses: %v", rev, raw, typedErr)
		}
		if !reflect.DeepEqual(fast, typed) {
			t.Fatalf("%s: %s:\nscanned %#v\ntyped   %#v", rev, raw, fast, typed)
		}
	}
	if typedErr != nil {
		return scanned
	}
	p := typed.(*mcp.CallToolRequestParams)
	checkWrite(t, rev, p)
	patched := *p
	patched.Meta = mcp.Meta{}
	for k, v := range p.Meta {
		patched.Meta[k] = v
	}
	patched.Meta["progressToken"] = json.RawMessage(`"mcpx-1"`)
	patched.Meta[protocolVersionKey] = json.RawMessage(`"` + string(rev) + `"`)
	patched.Meta[clientCapabilitiesKey] = json.RawMessage(`{"elicitation":{},"roots":{"listChanged":true}}`)
	patched.Meta[mcp.MetaKeyClientInfo] = json.RawMessage(`{"name":"mcpx","version":"test"}`)
	checkWrite(t, rev, &patched)
	return scanned
}

// checkWrite checks that writeCallParams, when it writes p in rev, writes
// the bytes the typed downgrade and encode write.
func checkWrite(t *testing.T, rev mcp.Revision, p *mcp.CallToolRequestParams) {
	t.Helper()
	got, ok := writeCallParams(rev, p)
	if !ok {
		return
	}
	wire, err := convert.Downgrade(rev, p)
	if err != nil {
		t.Fatalf("%s: %+v: written, yet the downgrade fails: %v", rev, p, err)
	}
	want, err := marshalWire(p, wire)
	if err != nil {
		t.Fatalf("%s: %+v: written, yet the typed encode fails: %v", rev, p, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s:\nwritten %s\ntyped   %s", rev, got, want)
	}
}

// TestCallParamsMatchTyped: in every revision, scanCallParams reads the
// params it should and gives the typed way's hub params for them, and
// writeCallParams writes what the typed way writes.
func TestCallParamsMatchTyped(t *testing.T) {
	for _, tb := range revision.Tables {
		for _, s := range callParamsSeeds {
			if decodedParams(s.raw) == nil {
				t.Fatalf("seed %s does not decode as a request's params", s.raw)
			}
			if got := checkCallParams(t, tb.Revision, s.raw); got != s.scanned {
				t.Errorf("%s: %s: scanned %v, want %v", tb.Revision, s.raw, got, s.scanned)
			}
		}
	}
}

// TestWriteCallParamsWrites: the params a gateway forwards for a plain
// call are written here, not left to the typed way, in every revision.
func TestWriteCallParamsWrites(t *testing.T) {
	for _, p := range []*mcp.CallToolRequestParams{
		{Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`), Meta: mcp.Meta{"progressToken": json.RawMessage(`1`)}},
		{Name: "echo", Meta: mcp.Meta{"k": nil}}, // set by code, not decoded: null
	} {
		for _, tb := range revision.Tables {
			if _, ok := writeCallParams(tb.Revision, p); !ok {
				t.Errorf("%s: left %+v to the typed way", tb.Revision, p)
			}
			checkWrite(t, tb.Revision, p)
		}
	}
	for _, left := range []*mcp.CallToolRequestParams{
		{Name: "a<b"},
		{Name: "e", Arguments: json.RawMessage(`{ "a":1}`)},
		{Name: "e", Task: &mcp.TaskMetadata{}},
		{Name: "e", Meta: mcp.Meta{"k": json.RawMessage(`"&"`)}},
	} {
		if _, ok := writeCallParams(mcp.Rev20251125, left); ok {
			t.Errorf("wrote %+v, which the typed way writes otherwise", left)
		}
	}
}

// FuzzCallParams: whatever params scanCallParams reads, the typed way
// reads the same; whatever writeCallParams writes, the typed way writes
// the same bytes.
func FuzzCallParams(f *testing.F) {
	for _, s := range callParamsSeeds {
		for i := range revision.Tables {
			f.Add(s.raw, uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, raw string, r uint8) {
		checkCallParams(t, revision.Tables[int(r)%len(revision.Tables)].Revision, raw)
	})
}

// BenchmarkCallParams is a forwarded tools/call's params read from a
// 2026-07-28 client and written for a 2026-07-28 upstream, the typed way
// and by scanCallParams and writeCallParams, side by side.
func BenchmarkCallParams(b *testing.B) {
	const raw = `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"up__echo","arguments":{"text":"hello"}}`
	m := decodedParams(raw)
	rev := mcp.Rev20260728
	b.Run("decode/typed", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, err := decodeParams(rev, "CallToolRequestParams", m.Params); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode/scanned", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, ok := scanCallParams(m.Params); !ok {
				b.Fatal("not scanned")
			}
		}
	})
	p, _ := scanCallParams(m.Params)
	b.Run("encode/typed", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			wire, err := convert.Downgrade(rev, p)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := marshalWire(p, wire); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode/written", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, ok := writeCallParams(rev, p); !ok {
				b.Fatal("not written")
			}
		}
	})
}
