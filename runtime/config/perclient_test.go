package config

import (
	"testing"
	"time"
)

// TestSessionSetting: a server's "session" is "shared" (the default) or
// "per-client"; perClientMax and perClientIdle are kept for a per-client
// server (unset: 0, the gateway's defaults) and are a problem on a shared
// one, where they would mean nothing; anything else is a problem at its
// path.
func TestSessionSetting(t *testing.T) {
	for _, tc := range []struct {
		mcpx      string
		perClient bool
		max       int
		idle      time.Duration
		problem   string
	}{
		{``, false, 0, 0, ""},
		{`,"mcpx":{"session":"shared"}`, false, 0, 0, ""},
		{`,"mcpx":{"session":"per-client"}`, true, 0, 0, ""},
		{`,"mcpx":{"session":"per-client","perClientMax":3,"perClientIdle":"90s"}`, true, 3, 90 * time.Second, ""},
		{`,"mcpx":{"session":"each"}`, false, 0, 0, `f.json: /mcpServers/a/mcpx/session: must be one of "shared", "per-client"`},
		{`,"mcpx":{"session":"per-client","perClientMax":0}`, false, 0, 0, `f.json: /mcpServers/a/mcpx/perClientMax: must be at least 1`},
		{`,"mcpx":{"session":"per-client","perClientIdle":"soon"}`, false, 0, 0, `f.json: /mcpServers/a/mcpx/perClientIdle: must be a duration such as "10m", "1h" or "90s"`},
		{`,"mcpx":{"session":"per-client","perClientIdle":"0s"}`, false, 0, 0, `f.json: /mcpServers/a/mcpx/perClientIdle: must be more than zero`},
		{`,"mcpx":{"perClientMax":3}`, false, 0, 0, `f.json: /mcpServers/a/mcpx/perClientMax: applies only with "session": "per-client"`},
		{`,"mcpx":{"session":"shared","perClientIdle":"1m"}`, false, 0, 0, `f.json: /mcpServers/a/mcpx/perClientIdle: applies only with "session": "per-client"`},
	} {
		c, err := Parse("f.json", []byte(`{"mcpServers":{"a":{"command":"x"`+tc.mcpx+`}}}`), env(nil))
		switch {
		case tc.problem == "" && err != nil:
			t.Errorf("%s: %v", tc.mcpx, err)
		case tc.problem == "":
			s := c.Servers[0]
			if s.PerClient != tc.perClient || s.PerClientMax != tc.max || s.PerClientIdle != tc.idle {
				t.Errorf("%s: PerClient %v, max %d, idle %v; want %v, %d, %v", tc.mcpx, s.PerClient, s.PerClientMax, s.PerClientIdle, tc.perClient, tc.max, tc.idle)
			}
		case err == nil || err.Error() != tc.problem:
			t.Errorf("%s: %v\nwant %s", tc.mcpx, err, tc.problem)
		}
	}
}
