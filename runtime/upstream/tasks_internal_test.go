package upstream

import (
	"encoding/json"
	"testing"
	"time"
)

// TestTaskPollInterval: the upstream's poll interval is respected within
// [pollFloor, pollCeiling]; none suggested is pollDefault. Never a busy
// loop (0), never minutes between polls.
func TestTaskPollInterval(t *testing.T) {
	ms := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		in   *float64
		want time.Duration
	}{
		{nil, pollDefault},
		{ms(0), pollFloor},
		{ms(-5), pollFloor},
		{ms(200), 200 * time.Millisecond},
		{ms(3_600_000), pollCeiling},
	} {
		var f follower
		f.setInterval(tc.in)
		if f.interval != tc.want {
			t.Errorf("pollInterval %v: polled every %s, want %s", tc.in, f.interval, tc.want)
		}
	}
}

// TestReadTaskHandle: both flavours of handle are read, with their poll
// interval under either spelling; one without a taskId is an error.
func TestReadTaskHandle(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		id   string
		poll float64
	}{
		{`{"task":{"taskId":"a","status":"working","createdAt":"x","lastUpdatedAt":"x","ttl":null,"pollInterval":70}}`, "a", 70},
		{`{"resultType":"task","taskId":"b","status":"working","createdAt":"x","lastUpdatedAt":"x","ttlMs":null,"pollIntervalMs":80}`, "b", 80},
	} {
		h, err := readHandle(json.RawMessage(tc.raw))
		if err != nil || h.TaskID != tc.id || h.interval() == nil || *h.interval() != tc.poll {
			t.Errorf("%s: read %+v, %v; want task %q polled every %v ms", tc.raw, h, err, tc.id, tc.poll)
		}
	}
	if _, err := readHandle(json.RawMessage(`{"resultType":"task","status":"working"}`)); err == nil {
		t.Error("a handle without a taskId was read")
	}
}
