package config

import (
	"testing"
	"time"
)

// TestParkSettings: the "mcpx" block's parkTimeout (a positive duration)
// and maxParked (1 to 65536) are kept; unset, both are 0 (the gateway's
// defaults); anything else is a problem at its path.
func TestParkSettings(t *testing.T) {
	for _, tc := range []struct {
		mcpx    string
		timeout time.Duration
		max     int
		problem string
	}{
		{``, 0, 0, ""},
		{`,"mcpx":{"parkTimeout":"90s","maxParked":3}`, 90 * time.Second, 3, ""},
		{`,"mcpx":{"parkTimeout":"soon"}`, 0, 0, `f.json: /mcpx/parkTimeout: must be a duration such as "5m", "1m30s" or "500ms"`},
		{`,"mcpx":{"parkTimeout":"0s"}`, 0, 0, "f.json: /mcpx/parkTimeout: must be more than zero"},
		{`,"mcpx":{"maxParked":0}`, 0, 0, "f.json: /mcpx/maxParked: must be at least 1"},
	} {
		c, err := Parse("f.json", []byte(`{"mcpServers":{"a":{"command":"x"}}`+tc.mcpx+`}`), env(nil))
		switch {
		case tc.problem == "" && err != nil:
			t.Errorf("%s: %v", tc.mcpx, err)
		case tc.problem == "" && (c.ParkTimeout != tc.timeout || c.MaxParked != tc.max):
			t.Errorf("%s: ParkTimeout %v, MaxParked %d; want %v, %d", tc.mcpx, c.ParkTimeout, c.MaxParked, tc.timeout, tc.max)
		case tc.problem != "" && (err == nil || err.Error() != tc.problem):
			t.Errorf("%s: %v\nwant %s", tc.mcpx, err, tc.problem)
		}
	}
}
