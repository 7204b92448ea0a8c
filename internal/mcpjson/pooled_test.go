package mcpjson_test

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/convert"
	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
)

// TestMarshalPooledIsMarshal: MarshalPooled writes Marshal's bytes (and
// fails where it fails) for every value TestMarshalIsEncodingJSON checks,
// also into a buffer a larger answer used before.
func TestMarshalPooledIsMarshal(t *testing.T) {
	big, err := mcpjson.MarshalPooled(strings.Repeat("<x>\n", 1<<14))
	if err != nil {
		t.Fatal(err)
	}
	big.Free() // the next buffer may well be this one, longer than any below
	for name, doc := range marshalCases {
		hub := mcp.New(name)
		if err := mcpjson.Unmarshal([]byte(doc), hub); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		values := map[string]any{"hub": hub, "unsupported": map[string]any{"c": make(chan int)}}
		for _, rev := range mcp.Revisions {
			if w, err := convert.Downgrade(rev, hub); err == nil {
				values[string(rev)] = w
			}
		}
		for where, v := range values {
			want, werr := mcpjson.Marshal(v)
			got, gerr := mcpjson.MarshalPooled(v)
			if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
				t.Errorf("%s at %s: Marshal: %v, MarshalPooled: %v", name, where, werr, gerr)
				continue
			}
			if gerr != nil {
				continue
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s at %s:\nMarshalPooled: %s\nMarshal:       %s", name, where, got.Bytes(), want)
			}
			got.Free()
		}
	}
}

// TestMarshalPooledNoCopy: a 1 MB text written again into a buffer given
// back allocates (almost) nothing; Marshal allocates its copy each time.
func TestMarshalPooledNoCopy(t *testing.T) {
	v := map[string]string{"text": strings.Repeat(strings.Repeat("x", 79)+"\n", 1<<20/80)}
	// One P: the pool's buffers are per P, and a test moved to another
	// one between two calls would find that P's buffer (or none).
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for range 3 { // the buffer grows to its size, and to a quarter more
		b, err := mcpjson.MarshalPooled(v)
		if err != nil {
			t.Fatal(err)
		}
		b.Free()
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b, err := mcpjson.MarshalPooled(v)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Errorf("writing 1 MB into a warm pooled buffer allocated %d bytes", n)
	}
}
