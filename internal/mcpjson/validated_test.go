package mcpjson_test

import (
	"reflect"
	"strings"
	"testing"
	"unsafe"

	v20251125 "github.com/mcpx-dev/mcpx/generated/wire/v20251125"
	v20260728 "github.com/mcpx-dev/mcpx/generated/wire/v20260728"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
)

// TestUnmarshalRead: for input the decoder has read (valid JSON), the
// value and the error are UnmarshalShared's, whether a large raw member
// is cut out or not.
func TestUnmarshalRead(t *testing.T) {
	big := `{"text":"` + strings.Repeat("x", 5000) + `","n":[1,{"a":"}"}]}`
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","k":` + big + `}`
	for _, in := range []string{
		`{"name":"echo","arguments":` + big + `}`,
		`{"arguments":` + big + `,"name":"echo"}`,
		` { "name" : "echo" , "arguments" : ` + big + ` , ` + meta + ` } `,
		`{` + meta + `,"arguments":` + big + `,"name":"echo","requestState":"s"}`,
		`{"name":"echo","arguments":` + big + `,"arguments":{}}`, // twice: the decoder's error
		`{"name":"echo","arguments":{},"arguments":` + big + `}`,
		`{"name":"echo","name":"again","arguments":` + big + `}`,
		`{"name":5,"arguments":` + big + `}`,
		`{"name":"echo","argument\u0073":` + big + `}`,
		`{"name":"echo","Arguments":` + big + `}`,
		`{"name":"echo","arguments":"` + strings.Repeat("y", 5000) + `"}`,
		`{"name":"echo","arguments":[` + big + `,` + big + `]}`,
		`{"name":"echo","arguments":{}}`,
		`{"name":"echo","other":` + big + `}`,
		`[` + big + `]`,
	} {
		var shared, read v20260728.CallToolRequestParams
		errS := mcpjson.UnmarshalShared([]byte(in), &shared)
		errR := mcpjson.UnmarshalRead([]byte(in), &read)
		if (errS == nil) != (errR == nil) || errS != nil && mcpjson.Describe(errS) != mcpjson.Describe(errR) {
			t.Errorf("%.60s: UnmarshalShared: %v; UnmarshalRead: %v", in, errS, errR)
			continue
		}
		if errS == nil && !reflect.DeepEqual(shared, read) {
			t.Errorf("%.60s: UnmarshalShared %.80v; UnmarshalRead %.80v", in, shared, read)
		}
	}
	// Types without raw members, and what is no struct, are UnmarshalShared's.
	in := []byte(`{"content":[{"type":"text","text":"` + strings.Repeat("x", 5000) + `"}],"structuredContent":` + big + `}`)
	var a, b v20251125.CallToolResult
	if errA, errB := mcpjson.UnmarshalShared(in, &a), mcpjson.UnmarshalRead(in, &b); errA != nil || errB != nil || !reflect.DeepEqual(a, b) {
		t.Errorf("CallToolResult: %v, %v", errA, errB)
	}
	var m map[string]any
	if err := mcpjson.UnmarshalRead(in, &m); err != nil || len(m) != 2 {
		t.Errorf("map: %v, %v", err, m)
	}
}

// TestUnmarshalReadSkips: a large raw member is not read again; it is a
// slice of the input, and what the decoder would have refused in it
// (here invalid UTF-8, which jsonrpc.Decode refuses first) is not seen.
// Only what the decoder has read may be given to UnmarshalRead.
func TestUnmarshalReadSkips(t *testing.T) {
	in := []byte(`{"name":"echo","arguments":{"text":"` + strings.Repeat("x", 5000) + "\xff" + `"}}`)
	var p v20260728.CallToolRequestParams
	if err := mcpjson.UnmarshalShared(in, &p); err == nil {
		t.Fatal("UnmarshalShared took invalid UTF-8")
	}
	if err := mcpjson.UnmarshalRead(in, &p); err != nil || p.Name != "echo" {
		t.Fatalf("UnmarshalRead: %v, %q", err, p.Name)
	}
	if start := strings.Index(string(in), `{"text"`); unsafe.SliceData(p.Arguments) != &in[start] || len(p.Arguments) != len(in)-start-1 {
		t.Errorf("arguments %.40s are not the input's slice", p.Arguments)
	}
}
