// Package mcpjson reads JSON as MCP messages define it, for every message
// mcpx decodes: the generated types, JSON-RPC framing, the edge, the
// transports and the upstream clients all decode through [Unmarshal].
//
// encoding/json (v1) matches member names case-insensitively ("Name" sets
// name, a way to slip members past a schema check), takes the last of two
// members with one name, and replaces invalid UTF-8 silently; it also scans
// every input twice. The JSON v2 implementation the Go team develops at
// github.com/go-json-experiment/json (the basis of encoding/json/v2, which
// Go 1.26 ships only behind GOEXPERIMENT=jsonv2) matches names exactly,
// rejects duplicate names and invalid UTF-8 as RFC 8259 asks, and decodes
// in one pass, two to three times faster. Once encoding/json/v2 is a plain
// standard package, this file's import changes and nothing else.
//
// Writing JSON stays with encoding/json: the generated types' omitempty
// and omitzero tags mean what v1 says.
package mcpjson

import (
	"errors"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Unmarshal decodes data into v, which must be a non-nil pointer. Types
// with an UnmarshalJSON method (the generated unions, json.RawMessage)
// decode through it, as with encoding/json.
func Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// IsSyntax reports whether err says the input is not JSON at all (as
// opposed to JSON of the wrong shape): JSON-RPC answers the one -32700 and
// the other -32600 or -32602.
func IsSyntax(err error) bool {
	var s *jsontext.SyntacticError
	return errors.As(err, &s)
}

// Valid reports whether data is one JSON value as [Unmarshal] reads them.
func Valid(data []byte) bool { return jsontext.Value(data).IsValid() }
