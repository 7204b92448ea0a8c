package edge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// fakeUpstream answers the handshake as an upstream speaking the given
// versions would, and records what mcpx sent. A modern one (strict)
// refuses a probe in a version it does not list with -32022, as the
// 2026-07-28 versioning page requires; lenient, it answers every probe. A
// legacy-only one answers the probe -32601 and initialize with its newest
// legacy version, whatever was offered.
type fakeUpstream struct {
	t        *testing.T
	versions []string
	lenient  bool
	sent     []*jsonrpc.Message
}

func (f *fakeUpstream) roundTrip(_ context.Context, m *jsonrpc.Message) (*jsonrpc.Message, error) {
	f.sent = append(f.sent, m)
	modern := slices.ContainsFunc(f.versions, func(v string) bool { return edge.IsModern(mcp.Revision(v)) || !edge.Known(mcp.Revision(v)) })
	switch m.Method {
	case mcp.MethodServerDiscover:
		asked := probeVersion(f.t, m)
		// Over HTTP the header must name the _meta's version.
		if h, isModern := edge.VersionHeader(nil, m); h != asked || !isModern {
			f.t.Errorf("the probe in %s would carry MCP-Protocol-Version %q (modern %v)", asked, h, isModern)
		}
		switch {
		case !modern:
			return jsonrpc.ErrorResponse(m.ID, &jsonrpc.Error{Code: jsonrpc.MethodNotFound, Message: "no server/discover before initialize"}), nil
		case !f.lenient && !slices.Contains(f.versions, asked):
			data, _ := json.Marshal(map[string]any{"supported": f.versions, "requested": asked})
			return jsonrpc.ErrorResponse(m.ID, &jsonrpc.Error{Code: jsonrpc.UnsupportedProtocolVersion, Message: "Unsupported protocol version", Data: data}), nil
		}
		res, _ := json.Marshal(map[string]any{"supportedVersions": f.versions, "capabilities": map[string]any{"tools": map[string]any{}}, "resultType": "complete",
			"_meta": map[string]any{mcp.MetaKeyServerInfo: map[string]string{"name": "fake", "version": "1"}}})
		return &jsonrpc.Message{JSONRPC: "2.0", ID: m.ID, Result: res}, nil
	case mcp.MethodInitialize:
		var answer string
		for _, v := range f.versions {
			if edge.Known(mcp.Revision(v)) && !edge.IsModern(mcp.Revision(v)) {
				answer = v
				break
			}
		}
		if answer == "" {
			return jsonrpc.ErrorResponse(m.ID, &jsonrpc.Error{Code: jsonrpc.MethodNotFound, Message: "initialize is no modern method"}), nil
		}
		res := fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{},"serverInfo":{"name":"fake","version":"1"}}`, answer)
		return &jsonrpc.Message{JSONRPC: "2.0", ID: m.ID, Result: json.RawMessage(res)}, nil
	}
	return nil, fmt.Errorf("unexpected %s", m.Method)
}

// methods lists what mcpx sent, with each probe's version.
func (f *fakeUpstream) methods() string {
	var out []string
	for _, m := range f.sent {
		switch m.Method {
		case mcp.MethodServerDiscover:
			out = append(out, m.Method+"@"+probeVersion(f.t, m))
		case mcp.MethodInitialize:
			var p struct{ ProtocolVersion string }
			json.Unmarshal(m.Params, &p)
			out = append(out, m.Method+"@"+p.ProtocolVersion)
		default:
			out = append(out, m.Method)
		}
	}
	return strings.Join(out, " ")
}

// probeVersion is the version a request's _meta names.
func probeVersion(t *testing.T, m *jsonrpc.Message) string {
	t.Helper()
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	json.Unmarshal(m.Params, &p)
	var v string
	json.Unmarshal(p.Meta[mcp.MetaKeyProtocolVersion], &v)
	return v
}

func negotiate(t *testing.T, f *fakeUpstream) (*edge.Dialect, error) {
	t.Helper()
	return edge.Negotiate(context.Background(), f.roundTrip, mcp.Implementation{Name: "mcpx", Version: "test"})
}

// TestNegotiateEachModernUpstream: an upstream speaking only one modern
// revision, of any that mcpx has, is reached in that revision, strict or
// lenient about the probe's version; its requests then name it in _meta
// and in the HTTP header. A newer modern revision mcpx has does not make
// an older one's upstream unreachable.
func TestNegotiateEachModernUpstream(t *testing.T) {
	for _, rev := range edge.ModernRevisions {
		for _, lenient := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/lenient=%v", rev, lenient), func(t *testing.T) {
				f := &fakeUpstream{t: t, versions: []string{"2099-12-31", string(rev)}, lenient: lenient}
				d, err := negotiate(t, f)
				if err != nil {
					t.Fatalf("Negotiate: %v (sent %s)", err, f.methods())
				}
				want := "server/discover@" + string(edge.NewestModern)
				if !lenient && rev != edge.NewestModern {
					want += " server/discover@" + string(rev)
				}
				if d.Revision() != rev || !d.Modern() || d.ServerInfo.Name != "fake" || d.Capabilities.Tools == nil || f.methods() != want {
					t.Errorf("negotiated %s (modern %v, %+v) after %s; want %s after %s", d.Revision(), d.Modern(), d.ServerInfo, f.methods(), rev, want)
				}
				raw, err := d.Request(mcp.MethodToolsList, &mcp.PaginatedRequestParams{Meta: mcp.Meta{}}, nil, "")
				if err != nil {
					t.Fatal(err)
				}
				m := jsonrpc.Request(json.RawMessage(`100`), mcp.MethodToolsList, raw)
				if v := probeVersion(t, m); v != string(rev) {
					t.Errorf("a request names %q in _meta, want %s: %s", v, rev, raw)
				}
				if h, modern := edge.VersionHeader(d, m); h != string(rev) || !modern {
					t.Errorf("a request carries MCP-Protocol-Version %q (modern %v), want %s", h, modern, rev)
				}
			})
		}
	}
}

// TestNegotiateEachLegacyUpstream: a legacy-only upstream is offered
// mcpx's newest legacy revision and reached in whichever legacy revision
// it answers; a dual-era one whose only shared revision is legacy is
// offered that one.
func TestNegotiateEachLegacyUpstream(t *testing.T) {
	for _, rev := range edge.LegacyRevisions {
		t.Run(string(rev), func(t *testing.T) {
			f := &fakeUpstream{t: t, versions: []string{string(rev)}}
			d, err := negotiate(t, f)
			want := "server/discover@" + string(edge.NewestModern) + " initialize@" + string(edge.LatestLegacy)
			if err != nil || d.Revision() != rev || d.Modern() || d.Initialized() == nil || f.methods() != want {
				t.Fatalf("negotiated %v, %v after %s; want %s after %s", d, err, f.methods(), rev, want)
			}

			f = &fakeUpstream{t: t, versions: []string{"2099-12-31", string(rev)}, lenient: true}
			d, err = negotiate(t, f)
			want = "server/discover@" + string(edge.NewestModern) + " initialize@" + string(rev)
			if err != nil || d.Revision() != rev || f.methods() != want {
				t.Errorf("dual-era, sharing %s: negotiated %v, %v after %s; want %s", rev, d, err, f.methods(), want)
			}
			f.lenient = false // a -32022 naming it instead of a DiscoverResult
			f.sent = nil
			d, err = negotiate(t, f)
			if err != nil || d.Revision() != rev || f.methods() != want {
				t.Errorf("dual-era, -32022 naming %s: negotiated %v, %v after %s; want %s", rev, d, err, f.methods(), want)
			}
		})
	}
}

// TestNegotiateNothingShared: an upstream listing no version mcpx speaks
// fails the handshake with the versions of both, without an initialize.
func TestNegotiateNothingShared(t *testing.T) {
	for _, lenient := range []bool{false, true} {
		f := &fakeUpstream{t: t, versions: []string{"2099-12-31", "2098-01-01"}, lenient: lenient}
		_, err := negotiate(t, f)
		if err == nil || !strings.Contains(err.Error(), "2099-12-31, 2098-01-01") || !strings.Contains(err.Error(), string(edge.NewestModern)) {
			t.Errorf("lenient %v: %v, want an error naming both sides' versions", lenient, err)
		}
		if len(f.sent) != 1 {
			t.Errorf("lenient %v: sent %s, want the probe alone", lenient, f.methods())
		}
	}
}
