package streamhttp_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/cluster"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
)

// spyRecords are memory records that keep what was written and read.
type spyRecords struct {
	cluster.MemoryRecords
	mu   sync.Mutex
	puts []string // key=value, put or swapped in
	ttls []time.Duration
}

func (s *spyRecords) Put(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	s.mu.Lock()
	s.puts = append(s.puts, key+"="+string(val))
	s.ttls = append(s.ttls, ttl)
	s.mu.Unlock()
	return s.MemoryRecords.Put(ctx, key, val, ttl)
}

func (s *spyRecords) Swap(ctx context.Context, key string, old, val []byte) (bool, error) {
	ok, err := s.MemoryRecords.Swap(ctx, key, old, val)
	if ok {
		s.mu.Lock()
		s.puts = append(s.puts, key+"="+string(val))
		s.mu.Unlock()
	}
	return ok, err
}

func (s *spyRecords) Get(ctx context.Context, key string, ttl time.Duration) ([]byte, error) {
	s.mu.Lock()
	s.ttls = append(s.ttls, ttl)
	s.mu.Unlock()
	return s.MemoryRecords.Get(ctx, key, ttl)
}

// TestSharedSessionRecord: a shared session's record is keyed and owned by
// hashes (neither the session id nor the owner appears in the store), its
// time to live is the idle timeout, given again by every request, and a
// log level set on another replica is written back to it.
func TestSharedSessionRecord(t *testing.T) {
	recs, hub := &spyRecords{}, cluster.NewHub()
	opt := func() streamhttp.Options {
		return streamhttp.Options{SessionIdle: 7 * time.Minute, Shared: &streamhttp.Shared{Records: recs, Bus: hub.Join(cluster.NewID(), time.Second)}}
	}
	a, _ := start(t, opt())
	b, _ := start(t, opt())
	sid := openSession(t, a, "2025-06-18")
	h := hdr{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
	decode(t, post(t, b, h, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"warning"}}`), http.StatusOK)
	recs.mu.Lock()
	defer recs.mu.Unlock()
	if len(recs.puts) != 2 {
		t.Fatalf("want the record written at initialize and after setLevel, got %q", recs.puts)
	}
	for _, p := range recs.puts {
		if strings.Contains(p, sid) {
			t.Fatalf("the session id is readable in the store: %s", p)
		}
	}
	if !strings.Contains(recs.puts[1], `"logLevel":"warning"`) {
		t.Fatalf("the log level set on B is not in the record: %s", recs.puts[1])
	}
	if len(recs.ttls) < 2 { // initialize's put, the setLevel's read (its write keeps that)
		t.Fatalf("ttls %v", recs.ttls)
	}
	for _, ttl := range recs.ttls {
		if ttl != 7*time.Minute {
			t.Fatalf("a record's TTL %s, want the idle timeout", ttl)
		}
	}
}

// TestSharedSessionHeldByItsStream: a GET stream held on A keeps a shared
// session alive past its idle timeout with no request, as it does in one
// process: B still serves it.
func TestSharedSessionHeldByItsStream(t *testing.T) {
	recs, hub := &cluster.MemoryRecords{}, cluster.NewHub()
	opt := func() streamhttp.Options {
		return streamhttp.Options{SessionIdle: 1500 * time.Millisecond, Shared: &streamhttp.Shared{Records: recs, Bus: hub.Join(cluster.NewID(), time.Second)}}
	}
	a, _ := start(t, opt())
	b, _ := start(t, opt())
	sid := openSession(t, a, "2025-06-18")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := do(t, ctx, http.MethodGet, a.URL, hdr{"Accept": "text/event-stream", "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}, "")
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET: %d", resp.StatusCode)
	}
	time.Sleep(3 * time.Second) // twice the idle timeout, no request
	h := hdr{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
	decode(t, post(t, b, h, `{"jsonrpc":"2.0","id":2,"method":"ping"}`), http.StatusOK)
}
