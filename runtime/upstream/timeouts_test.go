package upstream

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestTimeoutSaidOnce: an upstream that does not answer its handshake in
// time fails the call with one sentence naming the upstream, the method
// and the timeout, each once; so does the call made during the backoff
// that follows.
func TestTimeoutSaidOnce(t *testing.T) {
	p := newProc(t, "sleepy", "hang")
	p.spec.Timeout = 200 * time.Millisecond
	c := New(p.spec, mcpxInfo, testLog(t))
	defer c.Close()
	ctx := context.Background()
	err := within(t, 6*time.Second, "a call to an upstream that never answers", func() error { return echo(ctx, c) })
	want := regexp.MustCompile(`^upstream "sleepy" did not answer (server/discover|initialize) within 200ms$`)
	if err == nil || !want.MatchString(err.Error()) {
		t.Fatalf("got %v, want %s", err, want)
	}
	method := want.FindStringSubmatch(err.Error())[1]
	// The backoff's answer gives the same reason, still said once.
	err = echo(ctx, c)
	if err == nil {
		t.Fatal("a call during the backoff succeeded")
	}
	for _, s := range []string{`"sleepy"`, method, "200ms"} {
		if n := strings.Count(err.Error(), s); n != 1 {
			t.Errorf("%q said %d times in %q", s, n, err)
		}
	}
}
