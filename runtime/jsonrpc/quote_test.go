package jsonrpc

import (
	"strings"
	"testing"
)

func TestQuoteAndClip(t *testing.T) {
	if got := Quote("tools/call"); got != `"tools/call"` {
		t.Errorf("Quote of a short value: %s", got)
	}
	if got := Clip("2026-07-28"); got != "2026-07-28" {
		t.Errorf("Clip of a short value: %s", got)
	}
	long := strings.Repeat("x", 4<<20)
	if got := Quote(long); got != `"`+strings.Repeat("x", MaxQuoted)+`"…` {
		t.Errorf("Quote of 4 MiB: %d bytes, %.20s", len(got), got)
	}
	if got := Clip(long); got != strings.Repeat("x", MaxQuoted)+"…" {
		t.Errorf("Clip of 4 MiB: %d bytes", len(got))
	}
	// A character is not cut in two.
	s := strings.Repeat("x", MaxQuoted-1) + "ü" + "yyy"
	if got := Clip(s); got != strings.Repeat("x", MaxQuoted-1)+"…" {
		t.Errorf("Clip across a character: %q", got)
	}
}
