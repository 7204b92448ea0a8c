package main

import (
	"encoding/base64"
	"strings"
	"testing"
)

// TestBadStateKeyStopsStartup: a MCPX_STATE_KEY that is no key stops
// `mcpx stdio` at startup, with the built-in namespace and with a config,
// saying what is wrong with it and how to make one.
func TestBadStateKeyStopsStartup(t *testing.T) {
	t.Setenv("MCPX_STATE_KEY", base64.StdEncoding.EncodeToString([]byte("too short")))
	const want = "the requestState key: MCPX_STATE_KEY: the key is 9 bytes; a state key is at least 32 (generate one with `openssl rand -base64 32`)"
	for _, args := range [][]string{
		{"stdio", "--builtin", "demo"},
		{"stdio", "--config", "../../examples/mcpx.json"},
	} {
		code, _, errOut := mcpx(t, args...)
		if code != 1 || !strings.Contains(errOut, want) {
			t.Errorf("mcpx %s: exit %d, %q; want 1 and %q", strings.Join(args, " "), code, errOut, want)
		}
	}
}
