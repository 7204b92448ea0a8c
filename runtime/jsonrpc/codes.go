package jsonrpc

// The error codes mcpx sends, from one table. JSON-RPC 2.0 defines the
// first five; MCP defines the rest. Nothing else in the reserved range
// (-32768..-32000) is ever sent: the 2026-07-28 specification forbids
// inventing codes there (basic/index).
const (
	ParseError     = -32700 // the bytes are not JSON
	InvalidRequest = -32600 // JSON, but not a valid request
	MethodNotFound = -32601 // no such method (HTTP 404 for 2026-07-28)
	InvalidParams  = -32602 // the params are wrong; resource not found from 2026-07-28
	InternalError  = -32603 // the server failed

	// ResourceNotFound is resource not found before 2026-07-28, which
	// forbids it.
	ResourceNotFound = -32002
	// HeaderMismatch: an HTTP header disagrees with the body (2026-07-28).
	HeaderMismatch = -32020
	// MissingRequiredClientCapability: the request needs a capability the
	// client did not declare on it (2026-07-28).
	MissingRequiredClientCapability = -32021
	// UnsupportedProtocolVersion: the request names a revision the server
	// does not serve per request (2026-07-28).
	UnsupportedProtocolVersion = -32022
)

// Codes lists every code mcpx may send.
var Codes = []int64{ParseError, InvalidRequest, MethodNotFound, InvalidParams, InternalError, ResourceNotFound, HeaderMismatch, MissingRequiredClientCapability, UnsupportedProtocolVersion}
