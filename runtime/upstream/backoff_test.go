package upstream

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
)

// delayLog keeps the records logged, with their duration attributes.
type delayLog struct {
	mu   sync.Mutex
	recs []delayRecord
}

type delayRecord struct {
	msg  string
	at   time.Time
	durs map[string]time.Duration
}

func (l *delayLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *delayLog) WithGroup(string) slog.Handler            { return l }
func (l *delayLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *delayLog) Handle(_ context.Context, r slog.Record) error {
	rec := delayRecord{msg: r.Message, at: r.Time, durs: map[string]time.Duration{}}
	r.Attrs(func(a slog.Attr) bool {
		if a.Value.Kind() == slog.KindDuration {
			rec.durs[a.Key] = a.Value.Duration()
		}
		return true
	})
	l.mu.Lock()
	l.recs = append(l.recs, rec)
	l.mu.Unlock()
	return nil
}

func (l *delayLog) all() []delayRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]delayRecord(nil), l.recs...)
}

// TestLoggedRetryDelayIsTheRealOne: an upstream that cannot start is
// tried again at the next call after the backoff, here 400ms after it
// failed although the backoff was 250ms. No log line may promise a retry
// after a delay that is not the one waited (before, "retry_in=250ms"), and
// the line of the attempt says the delay actually waited.
func TestLoggedRetryDelayIsTheRealOne(t *testing.T) {
	leakcheck.Check(t)
	logs := &delayLog{}
	c := New(Spec{Name: "ghost", Command: "/nonexistent/mcp-server-ghost"}, mcpxInfo, slog.New(logs))
	defer c.Close()
	ctx := context.Background()
	if echo(ctx, c) == nil {
		t.Fatal("a command that does not exist started")
	}
	const wait = 400 * time.Millisecond
	time.Sleep(wait)
	if echo(ctx, c) == nil {
		t.Fatal("a command that does not exist started")
	}
	recs := logs.all()
	var failed []time.Time // when each attempt's failure was logged
	for _, r := range recs {
		if r.msg == "upstream unavailable" {
			failed = append(failed, r.at)
		}
	}
	if len(failed) != 2 {
		t.Fatalf("%d attempts logged, want 2: %+v", len(failed), recs)
	}
	waited := failed[1].Sub(failed[0])
	said := false
	for _, r := range recs {
		for k, d := range r.durs {
			switch {
			case k == "retry_in" && r.at.Equal(failed[0]) && (d < waited-50*time.Millisecond || d > waited+50*time.Millisecond):
				t.Errorf("%q says %s=%s; the retry came after %s", r.msg, k, d, waited.Round(time.Millisecond))
			case k == "after" && r.at.After(failed[0]) && !r.at.After(failed[1]):
				said = true
				if d < waited-50*time.Millisecond || d > waited+50*time.Millisecond {
					t.Errorf("%q says %s=%s; the retry came after %s", r.msg, k, d, waited.Round(time.Millisecond))
				}
			}
		}
	}
	if !said {
		t.Errorf("no line of the second attempt says how long mcpx waited (%s): %+v", waited.Round(time.Millisecond), recs)
	}
}
