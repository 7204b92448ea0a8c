package streamhttp_test

import (
	"bufio"
	"fmt"
	"net"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
)

// rawListen opens a listen over a plain TCP connection (no client
// goroutine of net/http's) and reads up to its acknowledgement.
func rawListen(t *testing.T, srvURL, id string) (net.Conn, *bufio.Reader) {
	t.Helper()
	u, _ := url.Parse(srvURL)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	body := listenBody(id, `{"toolsListChanged":true}`)
	var hd strings.Builder
	for k, v := range modern("subscriptions/listen", "") {
		fmt.Fprintf(&hd, "%s: %s\r\n", k, v)
	}
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n%sContent-Length: %d\r\n\r\n%s", u.Host, hd.String(), len(body), body)
	br := bufio.NewReader(conn)
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("listen %s: %v", id, err)
		}
		if strings.Contains(line, "notifications/subscriptions/acknowledged") {
			conn.SetReadDeadline(time.Time{})
			return conn, br
		}
	}
}

// TestHeldListenCostsOneGoroutine: an idle listen stream whose
// connection was taken over keeps one goroutine, the reader that notices
// its client leaving; the edge holds the listen as a registration
// (HandleHeld), with no goroutine waiting for its end (there were two a
// stream before). Close still ends each with its cancellation and result.
func TestHeldListenCostsOneGoroutine(t *testing.T) {
	leakcheck.Check(t)
	ns := newChangingNS()
	srv, h := startChanging(t, ns, streamhttp.Options{Logger: discard()})
	time.Sleep(50 * time.Millisecond) // the watcher's goroutines settle
	before := runtime.NumGoroutine()
	const n = 40
	conns := make([]net.Conn, n)
	readers := make([]*bufio.Reader, n)
	for i := range n {
		conns[i], readers[i] = rawListen(t, srv.URL, fmt.Sprintf("G%d", i))
	}
	eventually(t, "every stream open", func() bool { return h.OpenStreams() == n })
	var during int
	eventually(t, "one goroutine a stream", func() bool {
		during = runtime.NumGoroutine()
		return during-before <= n+n/4
	})
	t.Logf("goroutines: %d before, %d with %d streams open", before, during, n)
	h.Close()
	for i, br := range readers {
		conns[i].SetReadDeadline(time.Now().Add(10 * time.Second))
		var rest strings.Builder
		for {
			line, err := br.ReadString('\n')
			rest.WriteString(line)
			if err != nil || line == "0\r\n" {
				break
			}
		}
		b := rest.String()
		c, r := strings.Index(b, `"method":"notifications/cancelled"`), strings.Index(b, fmt.Sprintf(`"id":"G%d","result"`, i))
		if c < 0 || r < c || !strings.HasSuffix(b, "0\r\n") {
			t.Errorf("listen G%d at Close: want the cancellation, the result and the last chunk:\n%s", i, b)
		}
		conns[i].Close()
	}
}
