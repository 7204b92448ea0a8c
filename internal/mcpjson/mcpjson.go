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
// Writing JSON keeps encoding/json's meaning (the generated types'
// omitempty and omitzero tags mean what v1 says): [Marshal] writes what
// encoding/json.Marshal writes, byte for byte, with the v2 implementation
// under its v1 options, in one pass. encoding/json re-scans and copies the
// output of every MarshalJSON method (each union, each json.RawMessage):
// a 1 MB text block was encoded, then compacted again once per level.
package mcpjson

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf16"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// MaxDepth is how deeply arrays and objects may nest in what [Unmarshal]
// reads (the decoder's own limit); deeper input fails [IsTooDeep].
const MaxDepth = 10000

// Unmarshal decodes data into v, which must be a non-nil pointer. Types
// with an UnmarshalJSON method (the generated unions, json.RawMessage)
// decode through it, as with encoding/json.
func Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v, longStrings) }

// UnmarshalShared is Unmarshal, except that each json.RawMessage it
// fills (not those a union's own UnmarshalJSON fills) is a slice of data,
// not a copy: for a message's params and result, already slices of the
// buffer the message owns (jsonrpc.Decode), whose arguments and structured
// content were copied once more on every call. data must not change while
// v is in use.
//
// A long data's long strings are not validated twice (see lift).
func UnmarshalShared(data []byte, v any) error {
	if len(data) >= liftMin {
		if done, err := unmarshalLifted(data, v); done {
			return err
		}
	}
	return json.Unmarshal(data, v, sharedRaw)
}

var sharedRaw = json.WithUnmarshalers(json.JoinUnmarshalers(json.UnmarshalFunc(func(b []byte, m *stdjson.RawMessage) error {
	*m = b
	return nil
}), longString))

var longStrings = json.WithUnmarshalers(longString)

// longStringMin is the length from which a string is decoded by
// longString; shorter ones keep the decoder's own way (and its cache of
// short strings).
const longStringMin = 1024

// longString decodes a long JSON string holding escapes (a text content
// block's lines, each "\n") with one copy instead of two: the decoder
// unquotes into a buffer of its own and then copies that into the string.
// Here the unquoted bytes are the string. The value is the one the
// decoder makes (TestLongStrings): Unmarshal has already rejected invalid
// UTF-8 before the value is read.
var longString = json.UnmarshalFromFunc(func(dec *jsontext.Decoder, s *string) error {
	if dec.PeekKind() != '"' || !long(dec.UnreadBuffer()) {
		return errors.ErrUnsupported // the decoder's way: null, errors, short strings
	}
	val, err := dec.ReadValue()
	if err != nil {
		return err
	}
	*s, err = unquoteString(val)
	return err
})

// unquoteString is the string the valid JSON string quoted holds, in a
// buffer of its own made once (a strings.Builder's, so not zeroed first
// as a make([]byte) is: 1 MB cleared for nothing on a 1 MB result).
func unquoteString(quoted []byte) (string, error) {
	body := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body), nil // no escape: one copy either way
	}
	var sb strings.Builder
	sb.Grow(len(body))
	if unquoteValid(&sb, body) {
		return sb.String(), nil
	}
	b, err := jsontext.AppendUnquote(nil, quoted)
	return string(b), err
}

// unquoteValid writes to sb the string whose quoted body (between its
// quotes) is body, which the decoder has read or lift has checked
// (scanner.str): its UTF-8 and its escapes are sound. The text between
// escapes is copied as it is (memmove, found by bytes.IndexByte) instead
// of byte by byte with its UTF-8 checked once more, as
// jsontext.AppendUnquote does. A \u escape of half a surrogate pair
// alone, or an invalid one, is not its to judge: it reports false, and
// the caller unquotes the whole string the decoder's way.
func unquoteValid(sb *strings.Builder, body []byte) bool {
	for {
		i := bytes.IndexByte(body, '\\')
		if i < 0 {
			sb.Write(body)
			return true
		}
		sb.Write(body[:i])
		if i+1 >= len(body) {
			return false
		}
		switch c := body[i+1]; c {
		case '"', '\\', '/':
			sb.WriteByte(c)
		case 'b':
			sb.WriteByte('\b')
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case 'u':
			end := unicodeEscape(body, i)
			if end < 0 {
				return false // half a pair alone: the decoder's to judge
			}
			r, _ := hex4(body, i+2)
			if end-i == 12 { // a surrogate pair
				lo, _ := hex4(body, i+8)
				r = utf16.DecodeRune(r, lo)
			}
			sb.WriteRune(r)
			body = body[end:]
			continue
		default:
			return false
		}
		body = body[i+2:]
	}
}

// long reports whether the string at the start of rest (after the
// separator and whitespace before it) is at least longStringMin bytes
// long: no unescaped quote in its first longStringMin bytes (a text
// holding JSON has escaped quotes early).
func long(rest []byte) bool {
	i := 0
	for i < len(rest) && (rest[i] == ' ' || rest[i] == '\t' || rest[i] == '\n' || rest[i] == '\r' || rest[i] == ':' || rest[i] == ',') {
		i++
	}
	if i >= len(rest) || rest[i] != '"' {
		return false
	}
	s := rest[i+1:]
	if len(s) <= longStringMin {
		return false
	}
	s = s[:longStringMin]
	for {
		j := bytes.IndexByte(s, '"')
		if j < 0 {
			return true
		}
		k := j
		for k > 0 && s[k-1] == '\\' {
			k--
		}
		if (j-k)%2 == 0 {
			return false // not escaped: the string ends here
		}
		s = s[j+1:]
	}
}

// Marshal encodes v as encoding/json.Marshal does, byte for byte (HTML-
// safe strings, v1's omitempty, nil slices as null, MarshalJSON honoured;
// only a string holding invalid UTF-8 differs: its U+FFFD is written as
// the character, not as \ufffd), in one pass: the generated unions write their variant straight into the
// same encoder (MarshalJSONTo) instead of returning bytes to re-scan.
func Marshal(v any) ([]byte, error) { return json.Marshal(v, jsonv1.DefaultOptionsV1()) }

// Encoder is what a MarshalJSONTo method writes to.
type Encoder = jsontext.Encoder

// MarshalEncode writes v to enc with enc's own options: a union's variant
// in the encoding of the value that holds it.
func MarshalEncode(enc *Encoder, v any) error { return json.MarshalEncode(enc, v) }

// IsSyntax reports whether err says the input is not JSON at all (as
// opposed to JSON of the wrong shape): JSON-RPC answers the one -32700 and
// the other -32600 or -32602.
func IsSyntax(err error) bool {
	var s *jsontext.SyntacticError
	return errors.As(err, &s)
}

// Valid reports whether data is one JSON value as [Unmarshal] reads them.
func Valid(data []byte) bool { return jsontext.Value(data).IsValid() }

// IsTooDeep reports whether err says the input nests arrays and objects
// more than MaxDepth deep: JSON that is valid, but more than mcpx reads.
func IsTooDeep(err error) bool {
	var s *jsontext.SyntacticError
	// The decoder's error for it is not exported; its text is its name.
	return errors.As(err, &s) && s.Err != nil && s.Err.Error() == "exceeded max depth"
}

// Check returns why data is not one JSON value as [Unmarshal] reads
// them (an error [IsSyntax] and perhaps [IsTooDeep] report), or nil.
func Check(data []byte) error {
	return json.Unmarshal(data, new(jsontext.Value))
}

// Describe says what is wrong with JSON that [Unmarshal] could not decode
// into a Go value, in JSON terms ("at /name: expected a string, not a
// number"), never naming Go types. Other errors are described as they are.
func Describe(err error) string {
	var se *json.SemanticError
	if !errors.As(err, &se) {
		return err.Error()
	}
	at := ""
	if se.JSONPointer != "" {
		at = fmt.Sprintf("at %s: ", se.JSONPointer)
	}
	want, got := jsonKindOf(se.GoType), kindName(se.JSONKind)
	switch {
	case want != "" && got != "":
		return fmt.Sprintf("%sexpected %s, not %s", at, want, got)
	case got != "":
		return fmt.Sprintf("%s%s is not allowed here", at, got)
	}
	return at + "a value of the wrong type"
}

// kindName names a JSON kind as a message does: "a string", "null".
func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return ""
}

// jsonKindOf is the JSON kind a Go type decodes from, when it is one
// kind; "" for types that take several (interfaces, unions with their
// own decoding).
func jsonKindOf(t reflect.Type) string {
	if t == nil {
		return ""
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return ""
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a base64 string"
		}
		return "an array"
	}
	return ""
}

var unmarshalerType = reflect.TypeFor[interface{ UnmarshalJSON([]byte) error }]()
