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
// allocation (the value handed out, for a call without its memo), not a
// decode and an upgrade.
func TestEmptyClientCapabilitiesNotDecoded(t *testing.T) {
	c := &call{rev: "2026-07-28", meta: requestMeta{clientCapabilitiesKey: []byte(`{}`)}}
	if n := testing.AllocsPerRun(100, func() { c.clientCapabilities() }); n > 1 {
		t.Errorf("%v allocations for capabilities {}", n)
	}
}

// newCall is a call allocated as the edge allocates one (callAlloc).
func newCall(rev mcp.Revision, meta requestMeta, sess *Session) *call {
	ca := &callAlloc{call: call{rev: rev, meta: meta, sess: sess}}
	ca.call.asks, ca.call.caps = &ca.asks, &ca.caps
	return &ca.call
}

// TestClientCapabilitiesReadOnce: a request's capabilities are read once
// for all who ask (the tasks check, the handler's context, its questions,
// the call's copies), and none declared ({}), or a legacy session's, cost
// no allocation of their own (each ask decoded, or copied, them before).
func TestClientCapabilitiesReadOnce(t *testing.T) {
	c := newCall(mcp.Rev20260728, requestMeta{clientCapabilitiesKey: []byte(`{"elicitation":{"form":{}}}`)}, nil)
	first := c.clientCapabilities()
	if first.Elicitation == nil {
		t.Fatalf("declared elicitation not read: %+v", first)
	}
	cc := *c
	if n := testing.AllocsPerRun(100, func() {
		if c.clientCapabilities() != first || cc.clientCapabilities() != first {
			t.Fatal("read again")
		}
	}); n != 0 {
		t.Errorf("%v allocations to ask again", n)
	}
	sess := &Session{rev: mcp.Rev20251125, caps: mcp.ClientCapabilities{Roots: []byte(`{}`)}}
	for name, meta := range map[string]requestMeta{"{}": {clientCapabilitiesKey: []byte(`{}`)}, "legacy": nil} {
		rev := mcp.Rev20260728
		if meta == nil {
			rev = mcp.Rev20251125
		}
		ca := &callAlloc{call: call{rev: rev, meta: meta, sess: sess}}
		if n := testing.AllocsPerRun(100, func() {
			ca.caps = capsMemo{}
			ca.call.caps = &ca.caps
			if got := ca.call.clientCapabilities(); got != &ca.caps.value || (rev == mcp.Rev20251125) != (got.Roots != nil) {
				t.Fatalf("%s: %+v", name, got)
			}
		}); n != 0 {
			t.Errorf("%s: %v allocations", name, n)
		}
	}
}

// TestCheckModernEmptyCapabilities: a request's clientCapabilities of {}
// is checked without decoding it (an allocation a request before); any
// other is decoded as before.
func TestCheckModernEmptyCapabilities(t *testing.T) {
	m := requestMeta{clientCapabilitiesKey: []byte(`{}`), protocolVersionKey: []byte(`"2026-07-28"`)}
	if n := testing.AllocsPerRun(100, func() {
		if err := m.checkModern(mcp.Rev20260728); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
	for raw, ok := range map[string]bool{`{}`: true, `{"roots":{}}`: true, `[]`: false, `{`: false, `"{}"`: false, `{"tasks":1}`: false} {
		m := requestMeta{clientCapabilitiesKey: []byte(raw)}
		if err := m.checkModern(mcp.Rev20260728); (err == nil) != ok {
			t.Errorf("%s: %v", raw, err)
		}
	}
	m[logLevelKey] = []byte(`"loud"`)
	if m.checkModern(mcp.Rev20260728) == nil {
		t.Error("an unknown log level with {} passed")
	}
}
