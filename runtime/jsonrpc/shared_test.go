package jsonrpc

import (
	"strings"
	"testing"
	"unsafe"
)

// TestDecodeSharesTheInput: params and result are the input's own bytes,
// so a large message is not copied once more as it is read.
func TestDecodeSharesTheInput(t *testing.T) {
	within := func(b, in []byte) bool {
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(in)))
		p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		return len(b) > 0 && p >= lo && p+uintptr(len(b)) <= lo+uintptr(len(in))
	}
	big := strings.Repeat("x", 1<<20)
	for _, in := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"text":"` + big + `"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"text":"` + big + `"}}`,
	} {
		b := []byte(in)
		msgs, errs, _ := Decode(b, false)
		if errs[0] != nil {
			t.Fatal(errs[0])
		}
		m := msgs[0]
		raw := m.Result
		if m.Method != "" {
			raw = m.Params
		}
		if len(raw) < len(big) || !within(raw, b) {
			t.Errorf("%.40s…: the raw member is a copy, not the input's bytes", in)
		}
	}
}

// TestDecodeSharesIDAndMethod: a message's id and method are read from the
// input's bytes, not copied first; the id's capacity ends with it, so an
// append to it cannot write over the input (TestDecodeAllocations counts
// what that saves).
func TestDecodeSharesIDAndMethod(t *testing.T) {
	in := []byte(`{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{}}`)
	msgs, errs, _ := Decode(in, false)
	if errs[0] != nil {
		t.Fatal(errs[0])
	}
	m := msgs[0]
	if string(m.ID) != `"abc"` || m.Method != "tools/call" || cap(m.ID) != len(m.ID) {
		t.Fatalf("id %s (cap %d), method %q", m.ID, cap(m.ID), m.Method)
	}
	_ = append(m.ID, 'x')
	if string(in[len(`{"jsonrpc":"2.0","id":"abc"`)]) != "," {
		t.Error("an append to the id wrote over the input")
	}
}
