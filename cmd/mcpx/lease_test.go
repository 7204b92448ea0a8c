package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestTaskLeaseFlag: a --task-lease below zero is refused with exit 2,
// naming the flag (the lease itself is pinned by runtime/replicatest's
// TestReplicaKilledMidTask, which gives --task-lease 2s and waits no
// longer than that for the failure).
func TestTaskLeaseFlag(t *testing.T) {
	var stderr bytes.Buffer
	if code := runServe("stdio", []string{"--task-lease=-1s"}, strings.NewReader(""), new(bytes.Buffer), &stderr); code != 2 || !strings.Contains(stderr.String(), "--task-lease") {
		t.Errorf("--task-lease=-1s: exit %d, %q", code, stderr.String())
	}
}
