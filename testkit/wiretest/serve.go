package wiretest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
)

// ExitTimeout bounds how long mcpx may take to stop once its input has
// closed or its shutdown has begun.
const ExitTimeout = 10 * time.Second

// CheckLog fails t when log (slog's text format) holds an error, and shows
// the log of a failed test; what names whose log it is.
func CheckLog(t *testing.T, what string, log *LockedBuffer) {
	t.Helper()
	if strings.Contains(log.String(), "level=ERROR") {
		t.Errorf("%s logged an error:\n%s", what, log.String())
	} else if t.Failed() {
		t.Logf("%s log:\n%s", what, log.String())
	}
}

// ServeHTTP serves e over Streamable HTTP on a free loopback port through
// streamhttp.ListenAndServe (what `mcpx serve` runs), recording every
// exchange into w, and returns the endpoint URL. When the test ends it
// shuts down, which must be graceful (all requests done, held streams
// ended) within the shutdown timeout, and log, e's log, must hold no error.
func ServeHTTP(t *testing.T, e *edge.Edge, w *HTTPWire, log *LockedBuffer) string {
	t.Helper()
	h := streamhttp.New(e, streamhttp.Options{Logger: e.Log})
	ctx, cancel := context.WithCancel(context.Background())
	url := make(chan string, 1)
	served := make(chan error, 1)
	go func() {
		served <- streamhttp.ListenAndServe(ctx, "127.0.0.1:0", w.Wrap(h, h.Close), func(u string) { url <- u })
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-served:
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("streamhttp.ListenAndServe: %v", err)
			}
		case <-time.After(ExitTimeout + streamhttp.ShutdownTimeout):
			t.Errorf("streamhttp.ListenAndServe had not returned %s after shutdown began", ExitTimeout+streamhttp.ShutdownTimeout)
		}
		CheckLog(t, "mcpx (HTTP)", log)
	})
	select {
	case u := <-url:
		return u
	case err := <-served:
		t.Fatalf("streamhttp.ListenAndServe: %v", err)
		return ""
	}
}
