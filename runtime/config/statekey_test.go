package config

import (
	"encoding/base64"
	"strings"
	"testing"
)

// TestStateKey: the top-level "mcpx" block's stateKey is kept as written
// when it reads as keys, and is a problem at /mcpx/stateKey saying what
// is wrong (and how to make one) when it does not; the block takes no
// other key, and the rest of the file is still checked.
func TestStateKey(t *testing.T) {
	good := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32)))
	old := base64.RawURLEncoding.EncodeToString([]byte(strings.Repeat("o", 40)))
	for _, tc := range []struct{ mcpx, key, problem string }{
		{``, "", ""},
		{`,"mcpx":{}`, "", ""},
		{`,"mcpx":{"stateKey":"` + good + `"}`, good, ""},
		{`,"mcpx":{"stateKey":"` + good + `, ` + old + `"}`, good + ", " + old, ""},
		{`,"mcpx":{"stateKey":""}`, "", "f.json: /mcpx/stateKey: the key is empty; generate one with `openssl rand -base64 32`"},
		{`,"mcpx":{"stateKey":"` + base64.StdEncoding.EncodeToString([]byte("sixteen bytes!!!")) + `"}`, "", "f.json: /mcpx/stateKey: the key is 16 bytes; a state key is at least 32 (generate one with `openssl rand -base64 32`)"},
		{`,"mcpx":{"stateKey":"` + good + `,not*base64"}`, "", "f.json: /mcpx/stateKey: key 2 of 2 is not base64; generate one with `openssl rand -base64 32`"},
		{`,"mcpx":{"stateKey":7}`, "", "f.json: /mcpx/stateKey: must be a string, not a number"},
		{`,"mcpx":{"stateKeys":"x"}`, "", `f.json: /mcpx/stateKeys: unknown key; expected one of "access", "apiTools", "auth", "commands", "discovery", "maxParked", "maxTasks", "openapi", "parkTimeout", "stateKey", "store", "taskAfter", "taskEager", "taskTTL"`},
	} {
		c, err := Parse("f.json", []byte(`{"mcpServers":{"a":{"command":"x"}}`+tc.mcpx+`}`), env(nil))
		switch {
		case tc.problem == "" && err != nil:
			t.Errorf("%s: %v", tc.mcpx, err)
		case tc.problem == "" && c.StateKey != tc.key:
			t.Errorf("%s: StateKey %q, want %q", tc.mcpx, c.StateKey, tc.key)
		case tc.problem != "" && (err == nil || err.Error() != tc.problem):
			t.Errorf("%s: %v\nwant %s", tc.mcpx, err, tc.problem)
		}
	}
	// A bad key and a bad server: both said.
	_, err := Parse("f.json", []byte(`{"mcpServers":{"a":{"command":"x","mcpx":{"timeout":"0s"}}},"mcpx":{"stateKey":"x"}}`), env(nil))
	if err == nil || !strings.Contains(err.Error(), "/mcpx/stateKey") || !strings.Contains(err.Error(), "/mcpServers/a/mcpx/timeout") {
		t.Errorf("both problems: %v", err)
	}
}
