package config

import "testing"

// TestCacheSettings: a server's "mcpx.cache" is kept as written (ttlMs a
// non-negative integer, scope public or private); unset, CacheTTLMs is
// nil and CacheScope "" (the upstream's own hints, else the defaults);
// anything else is a problem at its path.
func TestCacheSettings(t *testing.T) {
	for _, tc := range []struct {
		cache   string
		ttl     int64 // -1: nil
		scope   string
		problem string
	}{
		{``, -1, "", ""},
		{`,"mcpx":{"cache":{}}`, -1, "", ""},
		{`,"mcpx":{"cache":{"ttlMs":0}}`, 0, "", ""},
		{`,"mcpx":{"cache":{"ttlMs":30000,"scope":"private"}}`, 30000, "private", ""},
		{`,"mcpx":{"cache":{"scope":"public"}}`, -1, "public", ""},
		{`,"mcpx":{"cache":{"ttlMs":-1}}`, 0, "", "f.json: /mcpServers/a/mcpx/cache/ttlMs: must be at least 0"},
		{`,"mcpx":{"cache":{"ttlMs":1.5}}`, 0, "", "f.json: /mcpServers/a/mcpx/cache/ttlMs: must be an integer, not a number"},
		{`,"mcpx":{"cache":{"scope":"shared"}}`, 0, "", `f.json: /mcpServers/a/mcpx/cache/scope: must be one of "public", "private"`},
		{`,"mcpx":{"cache":{"ttl":5}}`, 0, "", `f.json: /mcpServers/a/mcpx/cache/ttl: unknown key; expected one of "scope", "ttlMs"`},
	} {
		c, err := Parse("f.json", []byte(`{"mcpServers":{"a":{"url":"http://x/mcp"`+tc.cache+`}}}`), env(nil))
		if tc.problem != "" {
			if err == nil || err.Error() != tc.problem {
				t.Errorf("%s: %v\nwant %s", tc.cache, err, tc.problem)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.cache, err)
			continue
		}
		s := c.Servers[0]
		switch {
		case tc.ttl < 0 && s.CacheTTLMs != nil, tc.ttl >= 0 && (s.CacheTTLMs == nil || *s.CacheTTLMs != tc.ttl):
			t.Errorf("%s: CacheTTLMs %v, want %d", tc.cache, s.CacheTTLMs, tc.ttl)
		case s.CacheScope != tc.scope:
			t.Errorf("%s: CacheScope %q, want %q", tc.cache, s.CacheScope, tc.scope)
		}
	}
}
