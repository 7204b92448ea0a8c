package replicatest

import (
	"context"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/tasks"
	"github.com/mcpx-dev/mcpx/runtime/tasks/redisstore"
)

// benchSetups are the clusters the benchmarks compare: one replica on
// the memory store, one on Redis, three on Redis (round robin).
var benchSetups = []struct {
	name string
	s    setup
}{
	{"1-memory", setup{replicas: 1}},
	{"1-redis", setup{replicas: 1, redis: true}},
	{"3-redis", setup{replicas: 3, redis: true}},
}

// BenchmarkReplicas: 2026-07-28 requests through the proxy, 16 at a time
// (SetParallelism on GOMAXPROCS), on each setup: "call" is a tools/call
// of the replica's own stdio upstream (no store), "tasks-get" a tasks/get
// of a completed task (one store read per request); "tasks-get-serial"
// the same one request at a time.
func BenchmarkReplicas(b *testing.B) {
	for _, bs := range benchSetups {
		b.Run(bs.name, func(b *testing.B) {
			c := start(b, bs.s) // stopped when this setup's runs end
			m := &modern{t: b, url: c.url, token: aliceToken}
			id := newTaskB(b, m)
			m.until(id, 30*time.Second, status("completed"))
			for _, kind := range []string{"call", "tasks-get"} {
				b.Run(kind, func(b *testing.B) {
					var n atomic.Int64
					b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
					b.ResetTimer()
					b.RunParallel(func(pb *testing.PB) {
						w := &modern{t: b, url: c.url, token: aliceToken}
						for pb.Next() {
							var a answer
							if kind == "call" {
								a = w.call("local__greet", `{"name":"b"}`, "")
							} else {
								a = w.task("tasks/get", id, "")
							}
							if a.result() == nil {
								b.Errorf("%s: %v", kind, a)
								return
							}
							n.Add(1)
						}
					})
					b.ReportMetric(float64(n.Load())/b.Elapsed().Seconds(), "req/s")
				})
			}
			// One at a time: a request's latency, where the store's round
			// trip shows instead of hiding behind the others.
			b.Run("tasks-get-serial", func(b *testing.B) {
				for b.Loop() {
					if a := m.task("tasks/get", id, ""); a.result() == nil {
						b.Fatalf("tasks/get: %v", a)
					}
				}
			})
		})
	}
}

// newTaskB starts a one-second task (the benchmark's tasks/get target).
func newTaskB(b *testing.B, m *modern) string {
	b.Helper()
	a := m.call("fx__slow_compute", `{"seconds":1}`, "")
	id, _ := a.result()["taskId"].(string)
	if id == "" {
		b.Fatalf("no task: %v", a)
	}
	return id
}

// BenchmarkStoreGet: one store read of a working task, one at a time:
// the in-memory store against Redis on loopback (a real redis-server),
// the per-request cost Redis adds to what needs the store.
func BenchmarkStoreGet(b *testing.B) {
	ctx := context.Background()
	now := time.Now()
	rec := &tasks.Record{ID: "t", Owner: "o", Status: mcp.TaskStatusWorking, CreatedAt: now, LastUpdatedAt: now, TTL: time.Hour,
		Result: []byte(`{"content":[{"type":"text","text":"` + strings.Repeat("x", 1000) + `"}]}`)}
	r := startRedis(b, false, "", nil)
	rdb := redis.NewClient(&redis.Options{Addr: r.addr()})
	b.Cleanup(func() { rdb.Close() })
	for name, s := range map[string]tasks.Store{"memory": &tasks.Memory{}, "redis": redisstore.New(rdb, redisstore.Options{})} {
		if err := s.Create(ctx, rec); err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Get(ctx, "t"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
