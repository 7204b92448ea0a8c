package config

import (
	"testing"
	"time"
)

// TestTaskSettings: the "mcpx" block's taskEager, taskAfter, taskTTL
// (positive durations) and maxTasks (1 to 1048576) are kept; unset, each
// is 0 (the edge's and the store's defaults); anything else is a problem
// at its path.
func TestTaskSettings(t *testing.T) {
	for _, tc := range []struct {
		mcpx    string
		want    TaskSettings
		problem string
	}{
		{``, TaskSettings{}, ""},
		{`,"mcpx":{"taskEager":"100ms","taskAfter":"3s","taskTTL":"2h","maxTasks":5}`, TaskSettings{Eager: 100 * time.Millisecond, After: 3 * time.Second, TTL: 2 * time.Hour, Max: 5}, ""},
		{`,"mcpx":{"taskEager":"soon"}`, TaskSettings{}, `f.json: /mcpx/taskEager: must be a duration such as "250ms", "10s" or "1h"`},
		{`,"mcpx":{"taskTTL":"0s"}`, TaskSettings{}, "f.json: /mcpx/taskTTL: must be more than zero"},
		{`,"mcpx":{"maxTasks":0}`, TaskSettings{}, "f.json: /mcpx/maxTasks: must be at least 1"},
	} {
		c, err := Parse("f.json", []byte(`{"mcpServers":{"a":{"command":"x"}}`+tc.mcpx+`}`), env(nil))
		switch {
		case tc.problem == "" && err != nil:
			t.Errorf("%s: %v", tc.mcpx, err)
		case tc.problem == "" && c.Tasks != tc.want:
			t.Errorf("%s: %+v, want %+v", tc.mcpx, c.Tasks, tc.want)
		case tc.problem != "" && (err == nil || err.Error() != tc.problem):
			t.Errorf("%s: %v\nwant %s", tc.mcpx, err, tc.problem)
		}
	}
}
