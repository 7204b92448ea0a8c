package edge

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// headerProtocolVersion is the HTTP header that names a request's
// revision, as the transport pages spell it.
const headerProtocolVersion = "MCP-Protocol-Version"

// Seen is what a transport knows of one message besides its body.
type Seen struct {
	// HTTP marks a message posted on its own over Streamable HTTP: a
	// request whose _meta names a version must then carry the header too.
	HTTP bool
	// Header is the MCP-Protocol-Version header, "" when absent.
	Header string
	// Meta is the request's params._meta when the transport has already
	// decoded it (an empty map when the params have none), so that it is
	// read once; nil means the edge reads it. The edge does not change it.
	Meta map[string]json.RawMessage
	// Default is a legacy message's revision when neither its session nor
	// the header names one.
	Default mcp.Revision
}

// Class is which revision a message is in, decided once by [Classify]:
// the transport reads the era and any refusal from it, and [Edge.Handle]
// serves the message in it.
type Class struct {
	set     bool
	rev     mcp.Revision // a legacy message's unless its session negotiated one
	headers bool         // the request must carry the modern request headers
	meta    requestMeta
	err     error // the message is not to be served
	refused bool  // err concerns the headers: answered before anything else
}

// Classify decides which revision m is in. A request whose _meta names a
// version is in that version, served per request (-32022 if mcpx does not
// serve it so), and over HTTP the header must name the same (-32020,
// whichever of the two names a revision mcpx serves); a modern header, or
// _meta with modern request members, without that version is a modern
// request missing it (-32602). Anything else is legacy: in its session's
// negotiated revision (see [Class.Revision]), else the header's, else
// s.Default; a header naming no revision mcpx serves is refused. m may be
// nil where there is no single message (a GET, a whole batch): then only
// the header is read.
func Classify(m *jsonrpc.Message, s Seen) Class {
	c := Class{set: true, rev: s.Default}
	request := m != nil && m.IsRequest()
	c.meta = requestMeta(s.Meta)
	var readErr error
	if c.meta == nil && m != nil {
		c.meta, readErr = readMeta(m.Params)
	}
	header := mcp.Revision(s.Header)
	v, named := c.meta.protocolVersion()
	switch {
	case named && request && s.HTTP && s.Header == "":
		return c.refuse(modernOr(mcp.Revision(v)), jsonrpc.Errorf(jsonrpc.HeaderMismatch, nil, "Header mismatch: the %s header is required and must equal params._meta[%q] (%s)", headerProtocolVersion, protocolVersionKey, jsonrpc.Clip(v)))
	case named && request && s.Header != "" && s.Header != v:
		return c.refuse(modernOr(mcp.Revision(v)), jsonrpc.Errorf(jsonrpc.HeaderMismatch, nil, "Header mismatch: the %s header (%s) does not match params._meta[%q] (%s)", headerProtocolVersion, jsonrpc.Clip(s.Header), protocolVersionKey, jsonrpc.Clip(v)))
	case !named && s.Header != "" && !Known(header):
		return c.refuse(s.Default, jsonrpc.Errorf(jsonrpc.InvalidRequest, map[string]any{"supported": supportedVersions(), "requested": jsonrpc.Clip(s.Header)},
			"the %s header names %s, which this server does not serve; supported: %s", headerProtocolVersion, jsonrpc.Quote(s.Header), strings.Join(supportedVersions(), ", ")))
	}
	if Known(header) {
		c.rev = header
	}
	switch {
	case readErr != nil:
		c.err, c.headers = readErr, request && IsModern(header)
	case named && IsModern(mcp.Revision(v)):
		c.rev, c.headers = mcp.Revision(v), request
	case named:
		c.rev = NewestModern
		if request {
			c.err = unsupportedVersion(v)
		}
	case IsModern(header):
		c.headers = request
		if request {
			c.err = missingMeta(protocolVersionKey, header)
		}
	case request && c.meta.looksModern():
		c.rev, c.err = NewestModern, missingMeta(protocolVersionKey, "")
	}
	return c
}

// unsupportedVersion is -32022 for a request whose _meta names v, which
// mcpx does not serve per request: data.supported lists every version mcpx
// serves and data.requested repeats v (2026-07-28 versioning page: MUST,
// listing the versions it does support), and the message says which are
// served per request and which through initialize.
func unsupportedVersion(v string) error {
	return &jsonrpc.Error{Code: jsonrpc.UnsupportedProtocolVersion,
		Message: fmt.Sprintf("Unsupported protocol version %s: served per request are %s; %s through initialize", jsonrpc.Quote(v), strings.Join(versions(ModernRevisions), ", "), strings.Join(versions(LegacyRevisions), ", ")),
		Data:    mustJSON(map[string]any{"supported": supportedVersions(), "requested": jsonrpc.Clip(v)})}
}

func (c Class) refuse(rev mcp.Revision, err *jsonrpc.Error) Class {
	c.rev, c.err, c.refused = rev, err, true
	return c
}

// Modern reports whether the message is of a revision served per request:
// it has no session, and whatever Mcp-Session-Id it carries is ignored.
func (c Class) Modern() bool { return IsModern(c.rev) }

// ChecksHeaders reports whether the message is a request of a modern
// revision whose Mcp-Method, Mcp-Name and Mcp-Param-* headers must match
// its body (streamable-http.mdx, Server Validation).
func (c Class) ChecksHeaders() bool { return c.headers }

// Refusal is the error and HTTP status to answer at once, before anything
// else is read, for a message refused for its headers; nil otherwise.
// Other failures are answered by [Edge.Handle] in their turn.
func (c Class) Refusal() (*jsonrpc.Error, int) {
	if !c.refused {
		return nil, 0
	}
	je := c.err.(*jsonrpc.Error)
	return je, status(c.rev, je, c.err)
}

// Revision is the revision to serve the message in: a legacy one's
// session's, once initialize negotiated it.
func (c Class) Revision(sess *Session) mcp.Revision {
	if c.err == nil && !c.Modern() && sess != nil {
		if rev := sess.Revision(); rev != "" {
			return rev
		}
	}
	return c.rev
}
