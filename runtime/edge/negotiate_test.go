package edge_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// TestNegotiateProbeErrors: how the server/discover probe's error decides
// the era (streamable-http.mdx, Backward Compatibility: a recognised modern
// error means a modern server, to be answered by correcting the request;
// anything else means falling back to initialize).
func TestNegotiateProbeErrors(t *testing.T) {
	legacyInit := &jsonrpc.Message{JSONRPC: "2.0", ID: json.RawMessage(`1`), Result: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"legacy","version":"1"}}`)}
	for _, c := range []struct {
		name    string
		probe   *jsonrpc.Message // the answer to server/discover; nil: a transport error
		want    mcp.Revision     // "" when Negotiate must fail
		wantErr string
	}{
		{"method not found: legacy", jsonrpc.ErrorResponse(json.RawMessage(`0`), &jsonrpc.Error{Code: jsonrpc.MethodNotFound, Message: "no"}), "2025-11-25", ""},
		{"no JSON-RPC answer: legacy", nil, "2025-11-25", ""},
		{"unsupported version listing a legacy revision: legacy", jsonrpc.ErrorResponse(json.RawMessage(`0`), &jsonrpc.Error{Code: jsonrpc.UnsupportedProtocolVersion, Message: "no", Data: json.RawMessage(`{"supported":["2025-06-18","2027-01-01"],"requested":"2026-07-28"}`)}), "2025-11-25", ""},
		{"unsupported version without a list: legacy", jsonrpc.ErrorResponse(json.RawMessage(`0`), &jsonrpc.Error{Code: jsonrpc.UnsupportedProtocolVersion, Message: "no"}), "2025-11-25", ""},
		{"unsupported version, only unknown ones: refused", jsonrpc.ErrorResponse(json.RawMessage(`0`), &jsonrpc.Error{Code: jsonrpc.UnsupportedProtocolVersion, Message: "no", Data: json.RawMessage(`{"supported":["2027-01-01"],"requested":"2026-07-28"}`)}), "", "the upstream supports 2027-01-01"},
		{"header mismatch: refused", jsonrpc.ErrorResponse(json.RawMessage(`0`), &jsonrpc.Error{Code: jsonrpc.HeaderMismatch, Message: "Header mismatch: Mcp-Method"}), "", "Header mismatch: Mcp-Method"},
		{"missing capability: refused", jsonrpc.ErrorResponse(json.RawMessage(`0`), &jsonrpc.Error{Code: jsonrpc.MissingRequiredClientCapability, Message: "needs sampling"}), "", "needs sampling"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var sent []string
			rt := func(_ context.Context, m *jsonrpc.Message) (*jsonrpc.Message, error) {
				sent = append(sent, m.Method)
				switch {
				case m.Method == mcp.MethodServerDiscover && c.probe == nil:
					return nil, errors.New("HTTP 400 with a body that is not a JSON-RPC response")
				case m.Method == mcp.MethodServerDiscover:
					return c.probe, nil
				}
				return legacyInit, nil
			}
			d, err := edge.Negotiate(context.Background(), rt, mcp.Implementation{Name: "mcpx", Version: "test"})
			switch {
			case c.want == "" && err == nil:
				t.Fatalf("negotiated %s after %v, want an error", d.Revision(), sent)
			case c.want == "" && !strings.Contains(err.Error(), c.wantErr):
				t.Fatalf("error %q, want it to say %q", err, c.wantErr)
			case c.want == "" && len(sent) != 1:
				t.Errorf("sent %v after a modern refusal, want the probe alone", sent)
			case c.want != "" && err != nil:
				t.Fatalf("Negotiate: %v", err)
			case c.want != "" && d.Revision() != c.want:
				t.Errorf("negotiated %s, want %s", d.Revision(), c.want)
			}
		})
	}
}

// TestNegotiateSlowStart: a probe that goes unanswered means legacy, but a
// modern server that was only slow to start refuses the initialize that
// follows; it is then probed once more. A legacy server that ignores the
// probe and accepts initialize is not probed again.
func TestNegotiateSlowStart(t *testing.T) {
	t.Parallel() // each case waits out edge.DiscoverTimeout once
	// The slow server speaks every modern revision, so the newest is picked.
	speaks, _ := json.Marshal(edge.ModernRevisions)
	discovered := &jsonrpc.Message{JSONRPC: "2.0", ID: json.RawMessage(`3`), Result: json.RawMessage(`{"supportedVersions":` + string(speaks) + `,"capabilities":{"tools":{}},"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"slow","version":"1"}}}`)}
	for _, c := range []struct {
		name     string
		initErr  bool
		want     mcp.Revision
		wantSent string
	}{
		{"modern, slow to start", true, edge.NewestModern, "server/discover initialize server/discover"},
		{"legacy, ignores the probe", false, "2025-11-25", "server/discover initialize"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var sent []string
			rt := func(ctx context.Context, m *jsonrpc.Message) (*jsonrpc.Message, error) {
				sent = append(sent, m.Method)
				switch {
				case m.Method == mcp.MethodServerDiscover && len(sent) == 1:
					<-ctx.Done() // still starting
					return nil, ctx.Err()
				case m.Method == mcp.MethodServerDiscover:
					return discovered, nil
				case c.initErr:
					return jsonrpc.ErrorResponse(m.ID, &jsonrpc.Error{Code: jsonrpc.MethodNotFound, Message: "initialize is not a modern method"}), nil
				}
				return &jsonrpc.Message{JSONRPC: "2.0", ID: m.ID, Result: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"legacy","version":"1"}}`)}, nil
			}
			d, err := edge.Negotiate(context.Background(), rt, mcp.Implementation{Name: "mcpx", Version: "test"})
			if err != nil {
				t.Fatalf("Negotiate: %v", err)
			}
			if d.Revision() != c.want || strings.Join(sent, " ") != c.wantSent {
				t.Errorf("negotiated %s after %v, want %s after %s", d.Revision(), sent, c.want, c.wantSent)
			}
			if c.want == edge.NewestModern && d.ServerInfo.Name != "slow" {
				t.Errorf("serverInfo %+v, want the one the second probe declared", d.ServerInfo)
			}
		})
	}
}
