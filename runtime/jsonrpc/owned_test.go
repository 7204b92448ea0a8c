package jsonrpc_test

import (
	"testing"

	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

type countFree struct{ n int }

func (c *countFree) Free() { c.n++ }

// TestOwnedFree: an Owned message gives its buffer back once, and its
// result is gone afterwards (not a slice of a buffer in use again); any
// other message's Free does nothing.
func TestOwnedFree(t *testing.T) {
	buf := new(countFree)
	m := jsonrpc.Owned([]byte(`1`), []byte(`{"a":1}`), buf)
	if b, err := jsonrpc.Encode(m); err != nil || string(b) != `{"jsonrpc":"2.0","id":1,"result":{"a":1}}` {
		t.Fatalf("Encode: %s, %v", b, err)
	}
	m.Free()
	m.Free()
	if buf.n != 1 || m.Result != nil {
		t.Errorf("freed %d times, result %s after Free", buf.n, m.Result)
	}
	plain := jsonrpc.Response([]byte(`2`), []byte(`{}`))
	plain.Free()
	if string(plain.Result) != `{}` {
		t.Errorf("Free changed a message that owns no buffer: %s", plain.Result)
	}
	var none *jsonrpc.Message
	none.Free()
}
