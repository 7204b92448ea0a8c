package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/config"
)

// TestTaskFlags: --task-eager, --task-after, --task-ttl and --max-tasks
// override the config's mcpx block one by one (0 leaves it), and one below
// zero is refused with exit 2, naming the flag.
func TestTaskFlags(t *testing.T) {
	cfg := config.TaskSettings{Eager: time.Second, After: time.Minute, TTL: time.Hour, Max: 9}
	got := withTaskFlags(cfg, config.TaskSettings{Eager: 5 * time.Millisecond, Max: 3})
	if want := (config.TaskSettings{Eager: 5 * time.Millisecond, After: time.Minute, TTL: time.Hour, Max: 3}); got != want {
		t.Fatalf("withTaskFlags = %+v, want %+v", got, want)
	}
	for _, arg := range []string{"--task-eager=-1s", "--task-ttl=-1m", "--max-tasks=-2"} {
		var stderr bytes.Buffer
		if code := runServe("stdio", []string{arg}, strings.NewReader(""), new(bytes.Buffer), &stderr); code != 2 || !strings.Contains(stderr.String(), strings.SplitN(strings.TrimPrefix(arg, "--"), "=", 2)[0]) {
			t.Errorf("%s: exit %d, %q", arg, code, stderr.String())
		}
	}
}
