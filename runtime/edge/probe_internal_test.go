package edge

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// TestProbeNewerThanTheUpstream is the trial of issue 11 without a second
// generated revision: mcpx probes in a modern revision newer than any the
// upstream speaks (here a made-up one, as a newer mcpx would), the
// upstream refuses it with -32022 listing the one it speaks, and mcpx
// probes again in that one and is served in it. Each probe's HTTP header
// names the version its _meta names.
func TestProbeNewerThanTheUpstream(t *testing.T) {
	const newer = mcp.Revision("2099-12-31")
	for _, rev := range ModernRevisions {
		var sent []string
		rt := func(_ context.Context, m *jsonrpc.Message) (*jsonrpc.Message, error) {
			meta, _ := readMeta(m.Params)
			v, _ := meta.protocolVersion()
			if h, modern := VersionHeader(nil, m); h != v || !modern {
				t.Errorf("probe in %s: header %q, modern %v", v, h, modern)
			}
			sent = append(sent, string(m.ID)+"@"+v)
			if v != string(rev) {
				return jsonrpc.ErrorResponse(m.ID, &jsonrpc.Error{Code: jsonrpc.UnsupportedProtocolVersion, Message: "Unsupported protocol version",
					Data: mustJSON(map[string]any{"supported": []string{string(rev), "2025-11-25"}, "requested": v})}), nil
			}
			return &jsonrpc.Message{JSONRPC: "2.0", ID: m.ID, Result: mustJSON(map[string]any{"supportedVersions": []string{string(rev)}, "capabilities": map[string]any{"prompts": map[string]any{}}, "resultType": "complete"})}, nil
		}
		d := &Dialect{client: mcp.Implementation{Name: "mcpx", Version: "test"}}
		p := d.discover(context.Background(), rt, newer, `0`, `4`)
		want := []string{"0@" + string(newer), "4@" + string(rev)}
		if !p.modern || p.err != nil || d.Revision() != rev || d.Capabilities.Prompts == nil || !slices.Equal(sent, want) {
			t.Errorf("%s: probe %+v, revision %s after %v; want modern %s after %v", rev, p, d.Revision(), sent, rev, want)
		}
		// Later requests name the revision found, not the one probed first.
		raw, err := d.Request(mcp.MethodPromptsList, &mcp.PaginatedRequestParams{Meta: mcp.Meta{}}, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		meta, _ := readMeta(raw)
		if v, _ := meta.protocolVersion(); v != string(rev) {
			t.Errorf("%s: a request names %q: %s", rev, v, raw)
		}
	}
}

// TestProbeRefused: what a refused probe means, by the error and the
// versions a -32022 lists.
func TestProbeRefused(t *testing.T) {
	unsupported := func(supported ...string) *jsonrpc.Error {
		return &jsonrpc.Error{Code: jsonrpc.UnsupportedProtocolVersion, Message: "no", Data: mustJSON(map[string]any{"supported": supported})}
	}
	newest, legacy := NewestModern, LatestLegacy
	for _, c := range []struct {
		name    string
		sent    mcp.Revision
		e       *jsonrpc.Error
		retry   mcp.Revision
		offer   mcp.Revision
		wantErr string
	}{
		{"a shared modern revision other than the probe's: probe again in it", "2099-12-31", unsupported("2098-01-01", string(newest), string(legacy)), newest, legacy, ""},
		{"the probe's own revision listed: refused", newest, unsupported(string(newest)), "", legacy, "which it lists as supported"},
		{"only a legacy revision shared: initialize with it", newest, unsupported("2099-12-31", string(Oldest)), "", Oldest, ""},
		{"nothing shared: refused", newest, unsupported("2099-12-31"), "", legacy, "the upstream supports 2099-12-31"},
		{"no list: legacy", newest, &jsonrpc.Error{Code: jsonrpc.UnsupportedProtocolVersion, Message: "no"}, "", legacy, ""},
		{"another error: legacy", newest, &jsonrpc.Error{Code: jsonrpc.MethodNotFound, Message: "no"}, "", legacy, ""},
		{"header mismatch: refused", newest, &jsonrpc.Error{Code: jsonrpc.HeaderMismatch, Message: "Header mismatch"}, "", legacy, "refused mcpx's request"},
	} {
		retry, p := probeRefused(c.sent, c.e)
		switch {
		case retry != c.retry || p.offer != c.offer:
			t.Errorf("%s: retry %q, offer %q; want %q, %q", c.name, retry, p.offer, c.retry, c.offer)
		case c.wantErr == "" && p.err != nil, c.wantErr != "" && (p.err == nil || !strings.Contains(p.err.Error(), c.wantErr)):
			t.Errorf("%s: error %v, want %q", c.name, p.err, c.wantErr)
		}
	}

	// A second -32022, to the probe in the revision the first named, ends
	// it: no third probe, no initialize.
	calls := 0
	rt := func(_ context.Context, m *jsonrpc.Message) (*jsonrpc.Message, error) {
		calls++
		return jsonrpc.ErrorResponse(m.ID, unsupported(string(newest))), nil
	}
	d := &Dialect{}
	if p := d.discover(context.Background(), rt, "2099-12-31", `0`, `4`); p.err == nil || !strings.Contains(p.err.Error(), "refused "+string(newest)+", which it lists") || calls != 2 {
		t.Errorf("refused twice: %+v after %d probes", p, calls)
	}
}
