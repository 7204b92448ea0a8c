package upstream

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
)

// noLeaks returns a check, to defer, that no goroutine, child process or
// open file started since the call is left.
func noLeaks(t *testing.T) func() {
	t.Helper()
	return leakcheck.Start(t)
}

// TestStderrLongLine: an upstream stderr line over 1 MiB is logged cut,
// saying so, and stderr is read on: the upstream, which then writes far
// more than a pipe holds there, is served.
func TestStderrLongLine(t *testing.T) {
	defer noLeaks(t)()
	p := newProc(t, "loud", "raw:longstderr")
	p.spec.Timeout = 3 * time.Second
	log, logs := newLogCapture()
	c := New(p.spec, mcpxInfo, log)
	err := within(t, 10*time.Second, "a call to an upstream with a long stderr line", func() error { return echo(context.Background(), c) })
	if err != nil {
		t.Errorf("call: %v", err)
	}
	within(t, 5*time.Second, "Close", c.Close)

	var lines []string
	for _, r := range logs.records("upstream stderr") {
		lines = append(lines, r.attrs["line"].String())
	}
	if len(lines) != 82 {
		t.Fatalf("%d stderr lines logged, want 82 (the long one, 80 fillers, the last)", len(lines))
	}
	if l := lines[0]; !strings.HasPrefix(l, "xxxx") || !strings.HasSuffix(l, "…(truncated, 1048577 bytes in all)") || len(l) > maxLogLine+50 {
		t.Errorf("the long line was logged as %d bytes ending %q, want %d bytes of it saying it was truncated", len(l), l[max(0, len(l)-60):], maxLogLine)
	}
	for i, l := range lines[1:81] {
		if want := fmt.Sprintf("filler %02d %s", i, strings.Repeat("y", 4000)); l != want {
			t.Errorf("stderr line %d was logged as %.40q…, want %.40q…", i+1, l, want)
		}
	}
	if lines[81] != "after the long line" {
		t.Errorf("the last stderr line was logged as %.40q, want %q", lines[81], "after the long line")
	}
}

// TestReadStderr: stderr lines are logged without their line ending, a
// long one cut at a rune boundary and saying how long it was, a last one
// without a newline too.
func TestReadStderr(t *testing.T) {
	long := "a" + strings.Repeat("é", maxLogLine) // the cut falls inside an é
	log, logs := newLogCapture()
	p := &process{log: log, noisy: log}
	p.readStderr(io.MultiReader(strings.NewReader("plain\r\n"+long+"\r\n\n"), strings.NewReader("last, no newline")))
	var got []string
	for _, r := range logs.records("upstream stderr") {
		got = append(got, r.attrs["line"].String())
	}
	if len(got) != 4 {
		t.Fatalf("logged %d lines, want 4: %.80q", len(got), got)
	}
	if got[0] != "plain" || got[2] != "" || got[3] != "last, no newline" {
		t.Errorf("logged %.80q", got)
	}
	head, ok := strings.CutSuffix(got[1], fmt.Sprintf("…(truncated, %d bytes in all)", len(long)))
	if !ok || !utf8.ValidString(head) || !strings.HasPrefix(long, head) || len(head) < maxLogLine-utf8.UTFMax {
		t.Errorf("the long line was logged as %d bytes ending %q", len(got[1]), got[1][max(0, len(got[1])-60):])
	}
}

// TestLogFlood: an upstream flooding stderr and log messages that go to
// mcpx's log gets a burst, then LogRate lines a second; the lines
// dropped are counted in reports, one per interval while dropping and
// one at Close.
func TestLogFlood(t *testing.T) {
	defer noLeaks(t)()
	const lines, rate = 3000, 10
	p := newProc(t, "flood", fmt.Sprintf("raw:stderr=%d,logs=%d", lines, lines))
	p.spec.LogRate = rate
	log, logs := newLogCapture()
	c := New(p.spec, mcpxInfo, log)
	c.limit.every = 100 * time.Millisecond
	start := time.Now()
	if err := within(t, 10*time.Second, "a call to a flooding upstream", func() error { return echo(context.Background(), c) }); err != nil {
		t.Fatal(err)
	}
	const report = "upstream log lines dropped: over the rate limit"
	for deadline := time.Now().Add(3 * time.Second); len(logs.records(report)) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Error("no report of dropped lines while the upstream runs")
			break
		}
	}
	within(t, 5*time.Second, "Close", c.Close)
	elapsed := time.Since(start)

	kept := len(logs.records("upstream stderr")) + len(logs.records("upstream log message"))
	dropped := 0
	for _, r := range logs.records(report) {
		dropped += int(r.attrs["dropped"].Int64())
	}
	t.Logf("%d lines logged, %d reported dropped in %s", kept, dropped, elapsed.Round(time.Millisecond))
	if most := logBurst*rate + int(elapsed.Seconds()*rate) + 1; kept > most {
		t.Errorf("%d of the upstream's lines were logged in %s, want at most %d", kept, elapsed.Round(time.Millisecond), most)
	}
	if kept+dropped != 2*lines {
		t.Errorf("%d lines logged and %d reported dropped, want %d in all", kept, dropped, 2*lines)
	}
}
