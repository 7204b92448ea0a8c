package jsonrpc

import "encoding/json"

// A Freer is a buffer that a message's result lives in, to be given back
// once the message is written (mcpjson.Buffer).
type Freer interface{ Free() }

// Owned is Response with a result that lives in buf: the one who writes
// the message out calls Free afterwards, and the buffer serves the next
// answer. A message nobody frees is only garbage, as any other.
func Owned(id, result json.RawMessage, buf Freer) *Message {
	m := Response(id, result)
	m.buf = buf
	return m
}

// Free gives back the buffer m's result lives in, if it has one (Owned),
// and clears Result, which must not be read afterwards: nothing may hold
// on to it once it has been written (a stream's events and a batch's
// answer are copies; an answer cached for later is never Owned).
func (m *Message) Free() {
	if m == nil || m.buf == nil {
		return
	}
	buf := m.buf
	m.buf, m.Result = nil, nil
	buf.Free()
}
