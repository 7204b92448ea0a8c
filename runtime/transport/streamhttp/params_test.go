package streamhttp_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
)

// TestParamHeaders: Mcp-Param-{Name} headers mirror x-mcp-header
// parameters of a 2026-07-28 tools/call; the server checks them against the
// body after decoding (SEP-2243, streamable-http.mdx "Server Behavior for
// Custom Headers"): anything but a match is 400 with -32020.
func TestParamHeaders(t *testing.T) {
	leakcheck.Check(t)
	srv, _ := start(t, streamhttp.Options{})
	b64 := func(s string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=" }
	call := func(args string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"query","arguments":` + args + `,` + modernMeta + `}}`
	}
	for _, tc := range []struct {
		name    string
		headers hdr
		args    string
		ok      bool
	}{
		{"every header matches", hdr{"Mcp-Param-Region": "us-west1", "Mcp-Param-Limit": "42", "Mcp-Param-Dry": "true"}, `{"region":"us-west1","limit":42,"opts":{"dry":true},"q":"x"}`, true},
		{"header names are case-insensitive", hdr{"mcp-param-region": "us-west1"}, `{"region":"us-west1"}`, true},
		{"integers compare numerically", hdr{"Mcp-Param-Limit": "42.0"}, `{"limit":42}`, true},
		{"base64 is decoded before comparing", hdr{"Mcp-Param-Region": b64("Hello, 世界")}, `{"region":"Hello, 世界"}`, true},
		{"no value, no header", hdr{}, `{"q":"x"}`, true},
		{"a null value needs no header", hdr{}, `{"region":null}`, true},
		{"value in the body, header missing", hdr{}, `{"region":"us-west1"}`, false},
		{"header and body differ", hdr{"Mcp-Param-Region": "eu-west1"}, `{"region":"us-west1"}`, false},
		{"header without a value in the body", hdr{"Mcp-Param-Region": "us-west1"}, `{"q":"x"}`, false},
		{"nested boolean differs", hdr{"Mcp-Param-Dry": "false"}, `{"opts":{"dry":true}}`, false},
		{"base64 without padding", hdr{"Mcp-Param-Region": "=?base64?SGVsbG8?="}, `{"region":"Hello"}`, false},
		{"base64 outside the alphabet", hdr{"Mcp-Param-Region": "=?base64?SGVs!!!bG8=?="}, `{"region":"Hello"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := modern("tools/call", "query")
			for k, v := range tc.headers {
				h[k] = v
			}
			resp := post(t, srv, h, call(tc.args))
			if tc.ok {
				if r := decode(t, resp, http.StatusOK); r.Error != nil && r.Error.Code == -32020 {
					t.Errorf("rejected: %+v", r.Error)
				}
				return
			}
			wantError(t, resp, http.StatusBadRequest, -32020, "7")
		})
	}
}

// listingNS is a versioned namespace of one tool, query, whose argument
// region is mirrored in Mcp-Param-Region, or from version 2 on in
// Mcp-Param-Zone; it counts how often its tools are listed.
type listingNS struct {
	fakeNS
	version atomic.Uint64
	lists   atomic.Int64
}

func (n *listingNS) Version() uint64 { return n.version.Load() }

func (n *listingNS) ListTools(context.Context) ([]mcp.Tool, error) {
	n.lists.Add(1)
	header := "Region"
	if n.version.Load() >= 2 {
		header = "Zone"
	}
	return []mcp.Tool{{Name: "query", InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"` + header + `"}}}`)}}, nil
}

func (n *listingNS) CallTool(context.Context, *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	return text("ok"), nil
}

// TestParamHeadersFollowTheToolList: the Mcp-Param headers of a tools/call
// come from the edge, which reads them once per version of the tool list:
// the tools are not listed for every call, and a changed list is seen.
func TestParamHeadersFollowTheToolList(t *testing.T) {
	leakcheck.Check(t)
	ns := &listingNS{}
	ns.version.Store(1)
	h := streamhttp.New(&edge.Edge{Server: &server.Server{NS: ns, Info: mcp.Implementation{Name: "t", Version: "1"}}}, streamhttp.Options{})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.Close() })
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"query","arguments":{"region":"eu"},` + modernMeta + `}}`
	call := func(header string) *http.Response {
		hd := modern("tools/call", "query")
		hd["Mcp-Param-"+header] = "eu"
		return post(t, srv, hd, body)
	}
	for range 5 {
		if r := decode(t, call("Region"), http.StatusOK); r.Error != nil {
			t.Fatalf("version 1, Mcp-Param-Region: %+v", r.Error)
		}
	}
	if n := ns.lists.Load(); n != 1 {
		t.Errorf("5 calls listed the tools %d times, want once", n)
	}
	wantError(t, call("Zone"), http.StatusBadRequest, -32020, "7")

	ns.version.Store(2)
	wantError(t, call("Region"), http.StatusBadRequest, -32020, "7")
	if r := decode(t, call("Zone"), http.StatusOK); r.Error != nil {
		t.Fatalf("version 2, Mcp-Param-Zone: %+v", r.Error)
	}
	if n := ns.lists.Load(); n != 2 {
		t.Errorf("after one change the tools were listed %d times, want twice", n)
	}
}
