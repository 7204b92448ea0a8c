package streamhttp

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpx-dev/mcpx/internal/mcpjson"
	"github.com/mcpx-dev/mcpx/runtime/edge"
)

// peekDecoder reads a request's params for readPeek, kept in a pool: the
// decoder is reset on the params themselves (a bytes.Buffer over them,
// which it parses in place), so every raw value it returns is a slice of
// them, as mcpjson.UnmarshalShared's are.
type peekDecoder struct {
	dec jsontext.Decoder
	buf bytes.Buffer
}

var peekDecoders = sync.Pool{New: func() any { return new(peekDecoder) }}

// readPeek reads what the transport needs of a request's params (peek)
// with a decoder of JSON tokens: the members it names, each the raw
// value, and _meta, a map of raw values; every other member is skipped,
// checked as it is. What does not fit stays empty and read false; the
// edge then reads the params itself and reports what is wrong.
//
// It reads what mcpjson.UnmarshalShared into a peek reads
// (TestReadPeekIsUnmarshal, FuzzReadPeek: the same members, also when
// the params do not fit), in half the time (BenchmarkReadPeek): the JSON
// library's struct and map decoding, a call of the raw values'
// unmarshaler for each member, cost more than the edge's own decoding of
// the params into their revision's types.
func readPeek(params json.RawMessage) *peek {
	p := new(peek)
	p.readFrom(params)
	return p
}

// readFrom is readPeek into p, a zero peek.
func (p *peek) readFrom(params json.RawMessage) {
	if len(params) > 0 && params[0] == '{' {
		pd := peekDecoders.Get().(*peekDecoder)
		pd.buf = *bytes.NewBuffer(params)
		pd.dec.Reset(&pd.buf)
		p.read = p.decode(&pd.dec)
		pd.buf = bytes.Buffer{} // the params are not kept
		pd.dec.Reset(&pd.buf)
		peekDecoders.Put(pd)
	}
}

// readDecoded is readFrom for params jsonrpc.Decode has read, and so
// valid JSON: they are looked through by mcpjson.Members, which hops over
// the text of strings instead of checking it once more (a tools/call's
// 64 kB arguments: ~50 µs; a small call's params: ~0.4 µs against the
// decoder's ~1.2 µs, BenchmarkReadPeek). What Members is not sure of, or
// any member not as a request has it (_meta neither an object nor null),
// is readFrom's, which also says why.
func (p *peek) readDecoded(params json.RawMessage) {
	if len(params) > 0 && params[0] == '{' && p.scan(params) {
		p.read = true
		return
	}
	*p = peek{} // what scan set before it stopped
	p.readFrom(params)
}

// scan is readDecoded's look through the params; false if p must be
// read the decoder's way.
func (p *peek) scan(params []byte) bool {
	return mcpjson.Members(params, func(name, val []byte) bool {
		switch string(name) {
		case "_meta":
			return p.scanMeta(val)
		case "name":
			p.Name = val
		case "uri":
			p.URI = val
		case "taskId":
			p.TaskID = val
		case "arguments":
			p.Arguments = val
		}
		return true
	})
}

// scanMeta is decodeMeta for a value Members found.
func (p *peek) scanMeta(val []byte) bool {
	if string(val) == "null" {
		p.Meta = nil
		return true
	}
	if len(val) == 0 || val[0] != '{' {
		return false
	}
	if p.Meta == nil {
		p.Meta = make(map[string]json.RawMessage)
	}
	return mcpjson.Members(val, func(key, v []byte) bool {
		p.Meta[edge.MetaKey(key)] = v
		return true
	})
}

// decode reads the params' object into p; it reports whether they were
// read whole, without error.
func (p *peek) decode(dec *jsontext.Decoder) bool {
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return false
	}
	var name [64]byte // a member's unquoted name, when it has escapes
	for dec.PeekKind() != '}' {
		raw, err := dec.ReadValue() // the member's name
		if err != nil {
			return false
		}
		n, ok := unquoted(name[:0], raw)
		if !ok {
			if err := dec.SkipValue(); err != nil {
				return false
			}
			continue
		}
		var field *json.RawMessage
		switch string(n) {
		case "_meta":
			if !p.decodeMeta(dec) {
				return false
			}
			continue
		case "name":
			field = &p.Name
		case "uri":
			field = &p.URI
		case "taskId":
			field = &p.TaskID
		case "arguments":
			field = &p.Arguments
		default:
			if err := dec.SkipValue(); err != nil {
				return false
			}
			continue
		}
		v, err := dec.ReadValue()
		if err != nil {
			return false
		}
		*field = json.RawMessage(v)
	}
	if _, err := dec.ReadToken(); err != nil { // '}'
		return false
	}
	_, err := dec.ReadToken()
	return err == io.EOF // nothing after the object
}

// decodeMeta reads _meta's value into p.Meta: null leaves it nil, an
// object is a map of its members' raw values, anything else fails.
func (p *peek) decodeMeta(dec *jsontext.Decoder) bool {
	switch dec.PeekKind() {
	case 'n':
		_, err := dec.ReadValue()
		p.Meta = nil
		return err == nil
	case '{':
	default:
		return false
	}
	if _, err := dec.ReadToken(); err != nil {
		return false
	}
	if p.Meta == nil {
		p.Meta = make(map[string]json.RawMessage)
	}
	var name [64]byte // a member's unquoted name, when it has escapes
	for dec.PeekKind() != '}' {
		raw, err := dec.ReadValue()
		if err != nil {
			return false
		}
		key, ok := unquoted(name[:0], raw)
		if !ok {
			return false
		}
		v, err := dec.ReadValue()
		if err != nil {
			return false
		}
		p.Meta[edge.MetaKey(key)] = json.RawMessage(v)
	}
	_, err := dec.ReadToken() // '}'
	return err == nil
}

// unquoted is the JSON string raw (a member's name) unquoted: a slice
// of raw when it has no escapes, else unquoted into buf.
func unquoted(buf []byte, raw []byte) ([]byte, bool) {
	if len(raw) >= 2 && bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1], true
	}
	n, err := jsontext.AppendUnquote(buf, raw)
	return n, err == nil
}
