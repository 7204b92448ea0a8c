package edge

import (
	"reflect"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// TestEmptyClientCapabilitiesAsDecoded: the capabilities a modern request
// declaring nothing gets without decoding are what decoding its {} gives,
// in every modern revision.
func TestEmptyClientCapabilitiesAsDecoded(t *testing.T) {
	for _, rev := range mcp.Revisions {
		if !IsModern(rev) {
			continue
		}
		c := &call{rev: rev, meta: requestMeta{clientCapabilitiesKey: []byte(`{}`)}}
		decoded, err := decodeParams(rev, "ClientCapabilities", []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		if got := c.clientCapabilities(); !reflect.DeepEqual(got, decoded) {
			t.Errorf("%s: %+v, decoding {} gives %+v", rev, got, decoded)
		}
		c.meta[clientCapabilitiesKey] = []byte(`{"roots":{}}`)
		if got := c.clientCapabilities(); got.Roots == nil {
			t.Errorf("%s: declared roots not read: %+v", rev, got)
		}
	}
}

// TestEmptyClientCapabilitiesNotDecoded: declaring nothing costs one
// allocation (the value handed out), not a decode and an upgrade.
func TestEmptyClientCapabilitiesNotDecoded(t *testing.T) {
	c := &call{rev: "2026-07-28", meta: requestMeta{clientCapabilitiesKey: []byte(`{}`)}}
	if n := testing.AllocsPerRun(100, func() { c.clientCapabilities() }); n > 1 {
		t.Errorf("%v allocations for capabilities {}", n)
	}
}
