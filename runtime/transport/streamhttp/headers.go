package streamhttp

import (
	"encoding/base64"
	"encoding/json"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// Header names, as the specification spells them (net/http matches them
// case-insensitively).
const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "MCP-Protocol-Version"
	headerMethod          = "Mcp-Method"
	headerName            = "Mcp-Name"
)

// isLoopbackHost reports whether host (no port, brackets removed) names
// this machine: localhost or a loopback IP literal.
func isLoopbackHost(host string) bool {
	host = strings.ToLower(host)
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// originAllowed reports whether an Origin header value may reach the
// server: absent, an http(s) origin on a loopback host (any port), or one
// of the configured origins.
func (h *Handler) originAllowed(origin string) bool {
	if origin == "" {
		return true
	}
	for _, a := range h.origins {
		if strings.EqualFold(a, origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || (u.Path != "" && u.Path != "/") {
		return false
	}
	return isLoopbackHost(u.Hostname())
}

// hostAllowed reports whether the Host header may reach a server that
// listens on a loopback address: it must name this machine (or the host
// of a configured origin), so that a page whose DNS name was rebound to
// 127.0.0.1 cannot talk to it. A server on any other address is not
// checked here.
func (h *Handler) hostAllowed(r *http.Request) bool {
	la, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	tcp, ok := la.(*net.TCPAddr)
	if !ok || !tcp.IP.IsLoopback() {
		return true
	}
	host := r.Host
	if hst, _, err := net.SplitHostPort(host); err == nil {
		host = hst
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "" {
		return false
	}
	if isLoopbackHost(host) {
		return true
	}
	for _, a := range h.originHosts {
		if strings.EqualFold(a, host) {
			return true
		}
	}
	return false
}

// accepts is what a request's Accept header allows in the response.
type accepts struct{ json, sse bool }

// parseAccept reads the Accept header leniently: none at all, an empty
// one, or */* allows both; q=0 excludes a type.
func parseAccept(values []string) accepts {
	var a accepts
	seen := false
	for _, v := range values {
		for rest := v; rest != ""; {
			var part string
			part, rest, _ = strings.Cut(rest, ",")
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			seen = true
			mt, params, err := MediaType(part)
			if err != nil {
				continue
			}
			if q, ok := params["q"]; ok {
				if f, err := strconv.ParseFloat(q, 64); err == nil && f <= 0 {
					continue
				}
			}
			switch mt {
			case "*/*":
				a.json, a.sse = true, true
			case "application/*", "application/json":
				a.json = true
			case "text/*", "text/event-stream":
				a.sse = true
			}
		}
	}
	if !seen {
		return accepts{json: true, sse: true}
	}
	return a
}

// isJSON reports whether a Content-Type header is application/json (with
// any parameters).
func isJSON(contentType string) bool {
	mt, _, err := MediaType(contentType)
	return err == nil && mt == "application/json"
}

// commonMediaTypes are the values MCP peers send in Content-Type and
// Accept, without parameters.
var commonMediaTypes = [...]string{"application/json", "text/event-stream", "*/*"}

// MediaType is mime.ParseMediaType, with the common values read without
// it: it allocates a map per call, and it runs on every request and
// answer both ways through a gateway. The parameters are nil for those.
func MediaType(v string) (mediatype string, params map[string]string, err error) {
	trimmed := strings.TrimSpace(v)
	for _, t := range commonMediaTypes {
		if strings.EqualFold(trimmed, t) {
			return t, nil, nil
		}
	}
	return mime.ParseMediaType(v)
}

// peek is what the transport reads of a request's params, decoded once:
// the _meta (whose protocol version the header must match, handed on to
// the edge), the members Mcp-Name mirrors, and the arguments Mcp-Param-*
// headers mirror.
type peek struct {
	Meta      map[string]json.RawMessage `json:"_meta"`
	Name      json.RawMessage            `json:"name"`
	URI       json.RawMessage            `json:"uri"`
	TaskID    json.RawMessage            `json:"taskId"`
	Arguments json.RawMessage            `json:"arguments"`

	read bool // the params decoded as an object: Meta is all of their _meta
}

// edgeMeta is the _meta to hand the edge: nil when the params did not
// decode (the edge reads them again and says why), empty when they have none.
func (p *peek) edgeMeta() map[string]json.RawMessage {
	switch {
	case !p.read:
		return nil
	case p.Meta == nil:
		return noMeta
	}
	return p.Meta
}

// noMeta is the _meta of params that have none; never written to.
var noMeta = map[string]json.RawMessage{}

// member returns the raw value of a member Mcp-Name mirrors.
func (p *peek) member(name string) json.RawMessage {
	switch name {
	case "name":
		return p.Name
	case "uri":
		return p.URI
	case "taskId":
		return p.TaskID
	}
	return nil
}

// headerValue returns the one value of a header, whether it was sent, and
// false in ok when it was sent more than once or holds characters a
// header value may not (anything but visible ASCII, space and tab).
func headerValue(r *http.Request, name string) (v string, present, ok bool) {
	vs := r.Header.Values(name)
	switch len(vs) {
	case 0:
		return "", false, true
	case 1:
	default:
		return "", true, false
	}
	v = vs[0]
	for i := 0; i < len(v); i++ {
		if c := v[i]; c != '\t' && (c < 0x20 || c > 0x7e) {
			return "", true, false
		}
	}
	return v, true, true
}

const (
	b64Prefix = "=?base64?"
	b64Suffix = "?="
)

// decodeSentinel undoes the Base64 sentinel form =?base64?…?= that
// Mcp-Name uses for values that are not header-safe.
func decodeSentinel(v string) (string, bool) {
	if len(v) < len(b64Prefix)+len(b64Suffix) || !strings.HasPrefix(v, b64Prefix) || !strings.HasSuffix(v, b64Suffix) {
		return v, true
	}
	// Standard Base64 with padding, as the value-encoding rules say; the
	// conformance suite checks that unpadded or non-alphabet values fail.
	b, err := base64.StdEncoding.Strict().DecodeString(v[len(b64Prefix) : len(v)-len(b64Suffix)])
	if err != nil {
		return "", false
	}
	return string(b), true
}

// nameSource is the params member Mcp-Name mirrors, by method, and
// whether a request without the header is rejected. The tasks extension's
// methods mirror taskId; one left out is tolerated (docs/revisions.md#http-header-checks).
var nameSource = map[string]struct {
	field    string
	required bool
}{
	mcp.MethodToolsCall:     {"name", true},
	mcp.MethodPromptsGet:    {"name", true},
	mcp.MethodResourcesRead: {"uri", true},
	mcp.MethodTasksGet:      {"taskId", false},
	mcp.MethodTasksUpdate:   {"taskId", false},
	mcp.MethodTasksCancel:   {"taskId", false},
}

func mismatch(format string, args ...any) *jsonrpc.Error {
	return jsonrpc.Errorf(jsonrpc.HeaderMismatch, nil, format, args...)
}

// checkStandardHeaders checks Mcp-Method and Mcp-Name against a 2026-07-28
// request's body (streamable-http.mdx, Server Validation): a required
// header that is missing, malformed or different from the body is -32020.
func checkStandardHeaders(r *http.Request, m *jsonrpc.Message, p *peek) *jsonrpc.Error {
	method, present, ok := headerValue(r, headerMethod)
	switch {
	case !ok:
		return mismatch("Header mismatch: the %s header must be one value of visible ASCII characters", headerMethod)
	case !present:
		return mismatch("Header mismatch: the %s header is required on every modern request and must be %s", headerMethod, jsonrpc.Quote(m.Method))
	case method != m.Method:
		return mismatch("Header mismatch: %s header value %s does not match body method %s", headerMethod, jsonrpc.Quote(method), jsonrpc.Quote(m.Method))
	}
	src, ok := nameSource[m.Method]
	if !ok {
		return nil
	}
	name, present, ok := headerValue(r, headerName)
	if ok && present {
		name, ok = decodeSentinel(name)
	}
	switch {
	case !ok:
		return mismatch("Header mismatch: the %s header is malformed; send visible ASCII or the =?base64?…?= form", headerName)
	case !present && !src.required:
		return nil
	case !present:
		return mismatch("Header mismatch: the %s header is required on %s and must carry params.%s", headerName, m.Method, src.field)
	}
	raw := p.member(src.field)
	want, err := jsonrpc.StringValue(raw)
	if raw == nil || err != nil {
		return mismatch("Header mismatch: %s header value %s does not match params.%s, which is missing or not a string", headerName, jsonrpc.Quote(name), src.field)
	}
	if name != want {
		return mismatch("Header mismatch: %s header value %s does not match body value %s", headerName, jsonrpc.Quote(name), jsonrpc.Quote(want))
	}
	return nil
}

// Guard applies the endpoint's Origin and Host checks to another handler
// served beside it (the /v1 API), so a page in a browser reaches neither:
// a request they refuse gets 403 and a plain-text reason.
func (h *Handler) Guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case !h.originAllowed(r.Header.Get("Origin")):
			http.Error(w, "the Origin "+strconv.Quote(r.Header.Get("Origin"))+" is not allowed to use this server", http.StatusForbidden)
		case !h.hostAllowed(r):
			http.Error(w, "the Host "+strconv.Quote(r.Host)+" does not name this local server", http.StatusForbidden)
		default:
			next.ServeHTTP(w, r)
		}
	})
}
