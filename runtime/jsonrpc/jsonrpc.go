// Package jsonrpc reads and writes JSON-RPC 2.0 messages as MCP uses them.
// Request ids are kept as the raw JSON the peer sent (a string stays a
// string, 7 stays 7, 7.0 stays 7.0), params and results stay raw JSON: the
// edge decodes them into the revision's types.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpx-dev/mcpx/internal/mcpjson"
)

// Message is one request, notification or response.
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`

	buf Freer // what Result lives in, given back by Free (owned.go)

	// read is where the Params that Decode read (validated) begin, to
	// tell them from bytes put there since, in m or in a copy of it (a
	// pointer, not the slice: a Message of 136 bytes is in the 144-byte
	// size class, one of 152 in the 160-byte one; it was 128).
	read *byte
}

// ParamsDecoded reports whether m's Params are those [Decode] read, and
// so valid JSON as the decoder reads it (UTF-8, duplicate names, depth):
// params a caller put in a message, or in a copy of one, may hold
// anything. A decoder may then skip what was read already
// (mcpjson.UnmarshalRead).
func (m *Message) ParamsDecoded() bool {
	return m != nil && len(m.Params) > 0 && unsafe.SliceData(m.Params) == m.read
}

// IsRequest reports whether m expects a response.
func (m *Message) IsRequest() bool { return m.Method != "" && m.ID != nil }

// IsNotification reports whether m is a notification.
func (m *Message) IsNotification() bool { return m.Method != "" && m.ID == nil }

// IsResponse reports whether m answers a request.
func (m *Message) IsResponse() bool { return m.Method == "" }

// Request returns a request message.
func Request(id json.RawMessage, method string, params json.RawMessage) *Message {
	return &Message{JSONRPC: "2.0", ID: id, Method: method, Params: params}
}

// Notification returns a notification message.
func Notification(method string, params json.RawMessage) *Message {
	return &Message{JSONRPC: "2.0", Method: method, Params: params}
}

// Response returns a result response to id.
func Response(id json.RawMessage, result json.RawMessage) *Message {
	return &Message{JSONRPC: "2.0", ID: id, Result: result}
}

// ErrorResponse returns an error response to id (nil when the id could not
// be read: it is then written as null).
func ErrorResponse(id json.RawMessage, err *Error) *Message {
	if id == nil {
		id = json.RawMessage("null")
	}
	return &Message{JSONRPC: "2.0", ID: id, Error: err}
}

// Error is a JSON-RPC error object.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// Is makes errors.Is match two errors with the same code.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Code == e.Code
}

// Errorf returns an error with code and a formatted message; data, if not
// nil, is encoded as the error's data.
func Errorf(code int64, data any, format string, args ...any) *Error {
	e := &Error{Code: code, Message: fmt.Sprintf(format, args...)}
	if data != nil {
		if b, err := json.Marshal(data); err == nil {
			e.Data = b
		}
	}
	return e
}

// Decode reads one message or, if batches is true, a batch of them. It
// checks what JSON-RPC itself requires (jsonrpc "2.0", an id that is a
// string, a number or absent, a method that is a string, a response with
// exactly one of result and error) and reports the first violation as the
// error the peer should get: -32700 for bytes that are not JSON, -32600 for
// JSON that is not a message. A batch is decoded member by member; a bad
// member yields an error at the same index (and the message, when its id
// could be read, so the answer can carry it). msgs and errs always have the
// same length; a batch that cannot be read at all is one error, batch false.
//
// A message's Params and Result are b's own bytes, not a copy (a 16 MB
// result is not copied once more): b must not be changed while the
// messages are in use. Every caller reads each message into a buffer of
// its own.
func Decode(b []byte, batches bool) (msgs []*Message, errs []*Error, batch bool) {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		if !mcpjson.Valid(b) {
			return []*Message{nil}, []*Error{syntaxError(mcpjson.Check(b))}, false
		}
		if !batches {
			return []*Message{nil}, []*Error{{Code: InvalidRequest, Message: "batches are not part of this protocol revision; send one message at a time"}}, false
		}
		var raw []json.RawMessage
		if err := mcpjson.Unmarshal(b, &raw); err != nil || len(raw) == 0 {
			return []*Message{nil}, []*Error{{Code: InvalidRequest, Message: "a batch must be a non-empty array of messages"}}, false
		}
		msgs, errs = make([]*Message, len(raw)), make([]*Error, len(raw))
		for i, r := range raw {
			msgs[i], errs[i] = decodeOne(r)
		}
		return msgs, errs, true
	}
	// One message: Unmarshal checks the syntax as it decodes, so the bytes
	// are scanned once, not first by mcpjson.Valid and again to decode.
	m, err := decodeOne(b)
	return []*Message{m}, []*Error{err}, false
}

func parseError() *Error { return &Error{Code: ParseError, Message: "the message is not valid JSON"} }

// syntaxError is the error for input the decoder refused with err. JSON
// nested more deeply than the decoder reads is valid JSON, but it is
// still -32700: JSON-RPC gives that code to any error "while parsing the
// JSON text", which is where this one arises, before the input could be
// looked at as a request (-32600 says a request was read and is wrong).
// Its message says what the limit is, so that the sender is not told its
// valid JSON is invalid.
func syntaxError(err error) *Error {
	if mcpjson.IsTooDeep(err) {
		return &Error{Code: ParseError, Message: fmt.Sprintf("the message nests arrays and objects more than %d levels deep, more than this server reads", mcpjson.MaxDepth)}
	}
	return parseError()
}

// wire is Message with presence kept for the members whose absence matters.
// Every member is a slice of the input, as Decode says (json.RawMessage
// would copy each): the id and method of every message were copied, and
// jsonrpc made a string of its own, before being read. Its tags and
// shared's UnmarshalJSON are what reflection reads it by, the reference
// its UnmarshalJSONFrom is tested against.
type wire struct {
	JSONRPC shared `json:"jsonrpc"`
	ID      shared `json:"id"`
	Method  shared `json:"method"`
	Params  shared `json:"params"`
	Result  shared `json:"result"`
	Error   shared `json:"error"`
}

// shared is a raw JSON value kept as the slice of the input it was read
// from: json.RawMessage copies it. Its capacity ends with it, so that an
// append to it cannot write over the rest of the input.
type shared []byte

func (s *shared) UnmarshalJSON(b []byte) error { *s = b[:len(b):len(b)]; return nil }

// is2 reports whether the jsonrpc member raw is the string "2.0", however
// it is spelled.
func is2(raw shared) bool {
	if string(raw) == `"2.0"` {
		return true
	}
	var v string
	return raw != nil && raw[0] == '"' && String(raw, &v) == nil && v == "2.0"
}

// UnmarshalJSONFrom reads w in one pass, as the decoder's reflection read
// the struct before (FuzzDecodeMatchesReflection), without looking up
// each member's field and arshaler at run time: names matched exactly
// after unescaping, unknown members skipped, null leaving w empty, and
// duplicate names refused by the decoder itself (a syntactic error, as
// before). Each member is the slice of the input the decoder read.
func (w *wire) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	switch tok.Kind() {
	case 'n':
		*w = wire{}
		return nil
	case '{':
	default:
		return errNotObject
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadValue()
		if err != nil {
			return err
		}
		f := w.member(name)
		if f == nil {
			if err := dec.SkipValue(); err != nil {
				return err
			}
			continue
		}
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		*f = shared(v[:len(v):len(v)])
	}
	_, err = dec.ReadToken()
	return err
}

var errNotObject = errors.New("a message must be a JSON object")

// member is the field of w that the quoted name names, or nil.
func (w *wire) member(name []byte) *shared {
	n := name[1 : len(name)-1]
	if bytes.IndexByte(n, '\\') >= 0 {
		var buf [16]byte
		u, err := jsontext.AppendUnquote(buf[:0], name)
		if err != nil {
			return nil // the decoder read it: it cannot be wrong
		}
		n = u
	}
	return w.field(n)
}

// field is the field of w that the unquoted name n names, or nil.
func (w *wire) field(n []byte) *shared {
	switch string(n) {
	case "jsonrpc":
		return &w.JSONRPC
	case "id":
		return &w.ID
	case "method":
		return &w.Method
	case "params":
		return &w.Params
	case "result":
		return &w.Result
	case "error":
		return &w.Error
	}
	return nil
}

// wires holds the wires decodeOne reads into: one given to the decoder
// (an interface) would be allocated for every message.
var wires = sync.Pool{New: func() any { return new(wire) }}

func decodeOne(b []byte) (*Message, *Error) {
	w := wires.Get().(*wire)
	var err error
	if !w.scan(b) {
		err = mcpjson.Unmarshal(b, w)
	}
	m, e := w.message(b, err)
	*w = wire{} // not holding on to b
	wires.Put(w)
	return m, e
}

// scan reads a message into w, a zero wire, with mcpjson.ScanObject,
// which validates it as the decoder does but hops over the text of its
// strings (a tools/call's 64 kB arguments, or result). It reports whether
// it did; w is unchanged when not, and the decoder reads the message,
// with its errors. It is tried at any length: for a small message too it
// costs less than the decoder (1.2 against 1.3-1.7 µs for a request,
// 0.9 against 1.2-1.6 µs for a result; BenchmarkDecodeOne).
func (w *wire) scan(b []byte) bool {
	return mcpjson.ScanObject(b, func(name, val []byte) {
		if f := w.field(name); f != nil {
			*f = shared(val[:len(val):len(val)])
		}
	})
}

// message is the Message w holds, once read from b with err.
func (w *wire) message(b []byte, err error) (*Message, *Error) {
	if err != nil {
		if mcpjson.IsSyntax(err) || len(b) == 0 {
			return nil, syntaxError(err)
		}
		return nil, &Error{Code: InvalidRequest, Message: "a message must be a JSON object"}
	}
	if j := w.JSONRPC; len(j) > 0 && j[0] != '"' && string(j) != "null" {
		// What decoding it into a string said (before it was kept raw).
		return nil, &Error{Code: InvalidRequest, Message: "a message must be a JSON object"}
	}
	m := &Message{JSONRPC: "2.0", Params: json.RawMessage(w.Params), Result: json.RawMessage(w.Result), read: unsafe.SliceData(w.Params)}
	invalid := func(msg string) (*Message, *Error) { return m, &Error{Code: InvalidRequest, Message: msg} }
	if w.ID != nil && (w.ID[0] == '"' || w.ID[0] == '-' || w.ID[0] >= '0' && w.ID[0] <= '9') {
		m.ID = json.RawMessage(w.ID) // so that an invalid request's error can carry its id
	}
	if !is2(w.JSONRPC) {
		return invalid(`"jsonrpc" must be "2.0"`)
	}
	if w.ID != nil {
		switch w.ID[0] {
		case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		case 'n': // null: only a response to an unreadable request has it
			if w.Method != nil {
				return invalid(`"id" must be a string or a number, not null`)
			}
			m.ID = json.RawMessage(w.ID)
		default:
			return invalid(`"id" must be a string or a number`)
		}
	}
	if w.Method != nil {
		if err := String(w.Method, &m.Method); err != nil || m.Method == "" {
			return invalid(`"method" must be a non-empty string`)
		}
		if w.Params != nil && w.Params[0] != '{' && w.Params[0] != '[' {
			return invalid(`"params" must be a structured value (MCP uses objects)`)
		}
		return m, nil
	}
	// A response.
	if m.ID == nil {
		return invalid(`a message needs a "method" or an "id"`)
	}
	if (w.Result == nil) == (w.Error == nil) {
		return invalid(`a response has exactly one of "result" and "error"`)
	}
	if w.Error != nil {
		m.Error = new(Error)
		if err := mcpjson.Unmarshal(w.Error, m.Error); err != nil {
			return invalid(`"error" must be an object with a code and a message`)
		}
	}
	return m, nil
}

// String decodes a JSON string into s, as mcpjson.Unmarshal would. Methods,
// protocol versions and log levels are short strings without escapes, read
// on every message: those are taken as they are, the rest go through
// encoding/json.
func String(raw []byte, s *string) error {
	v, err := StringValue(raw)
	if err == nil {
		*s = v
	}
	return err
}

// StringValue is String returning the string: nothing of the caller's
// escapes to the decoder, so that a string read on every message costs
// at most itself.
func StringValue(raw []byte) (string, error) {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && plain(raw[1:n-1]) {
		return string(raw[1 : n-1]), nil
	}
	return decodeString(raw)
}

func decodeString(raw []byte) (string, error) {
	var s string
	err := mcpjson.Unmarshal(raw, &s)
	return s, err
}

// plain reports whether b needs no unescaping inside a JSON string: printable
// ASCII other than the quote and the backslash.
func plain(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// Encode writes m as one line of JSON, without a trailing newline. The raw
// members are copied as they are, not re-scanned (encoding/json would
// compact a 60 kB tools/list result once more); only a member that holds a
// line break is compacted, so a message never spans two lines.
func Encode(m *Message) ([]byte, error) {
	return appendMessage(make([]byte, 0, 64+len(m.ID)+len(m.Method)+len(m.Params)+len(m.Result)), m)
}

// EncodeBatch writes the answers to a batch as one JSON array.
func EncodeBatch(msgs []*Message) ([]byte, error) {
	buf := []byte{'['}
	for i, m := range msgs {
		if i > 0 {
			buf = append(buf, ',')
		}
		var err error
		if buf, err = appendMessage(buf, m); err != nil {
			return nil, err
		}
	}
	return append(buf, ']'), nil
}

// Framed is Encode of a result response in three pieces: the bytes before
// the result, the result itself (m's own bytes, not a copy) and the closing
// brace, so that a large result is written out without first being copied
// into one buffer with its envelope. ok is false, and Encode is the way,
// when m is not a result response or its result holds a line break to
// compact.
func Framed(m *Message) (head, result, tail []byte, ok bool) {
	if m.Result == nil || m.Error != nil || m.Method != "" || m.Params != nil {
		return nil, nil, nil, false
	}
	return frame(&Message{ID: m.ID}, "result", m.Result)
}

// frame is env's encoding with the member name: value added last, in
// three pieces; ok is false when value holds a line break to compact.
func frame(env *Message, name string, value json.RawMessage) (head, val, tail []byte, ok bool) {
	if bytes.IndexByte(value, '\n') >= 0 || bytes.IndexByte(value, '\r') >= 0 {
		return nil, nil, nil, false
	}
	head, err := appendMessage(make([]byte, 0, 64+len(env.ID)+len(env.Method)), env)
	if err != nil {
		return nil, nil, nil, false
	}
	head = append(append(append(head[:len(head)-1], `,"`...), name...), `":`...)
	return head, value, closeBrace, true
}

var closeBrace = []byte{'}'}

// FramedRequest is Framed for a request or a notification with params:
// the bytes before them, the params themselves and the closing brace, so
// that a tools/call's 64 kB arguments go to an upstream without first
// being copied into one buffer with their envelope. ok is false, and
// Encode is the way, when m is no such message or its params hold a line
// break to compact.
func FramedRequest(m *Message) (head, params, tail []byte, ok bool) {
	if m.Method == "" || m.Params == nil || m.Result != nil || m.Error != nil {
		return nil, nil, nil, false
	}
	return frame(&Message{ID: m.ID, Method: m.Method}, "params", m.Params)
}

func appendMessage(buf []byte, m *Message) ([]byte, error) {
	buf = append(buf, `{"jsonrpc":"2.0"`...)
	raw := func(name string, v json.RawMessage) error {
		if v == nil {
			return nil
		}
		buf = append(buf, `,"`...)
		buf = append(buf, name...)
		buf = append(buf, `":`...)
		if bytes.IndexByte(v, '\n') < 0 && bytes.IndexByte(v, '\r') < 0 {
			buf = append(buf, v...)
			return nil
		}
		var c bytes.Buffer
		if err := json.Compact(&c, v); err != nil {
			return fmt.Errorf("jsonrpc: %s: %w", name, err)
		}
		buf = append(buf, c.Bytes()...)
		return nil
	}
	if err := raw("id", m.ID); err != nil {
		return nil, err
	}
	if m.Method != "" {
		buf = append(buf, `,"method":`...)
		if plain([]byte(m.Method)) {
			buf = append(append(append(buf, '"'), m.Method...), '"')
		} else {
			b, _ := json.Marshal(m.Method)
			buf = append(buf, b...)
		}
	}
	if err := raw("params", m.Params); err != nil {
		return nil, err
	}
	if err := raw("result", m.Result); err != nil {
		return nil, err
	}
	if m.Error != nil {
		b, err := json.Marshal(m.Error)
		if err != nil {
			return nil, err
		}
		buf = append(append(buf, `,"error":`...), b...)
	}
	return append(buf, '}'), nil
}
