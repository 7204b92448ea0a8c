package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/fixture"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/tasks"
)

const (
	liveTasks = 1000
	pollers   = 32
)

// taskResult is a completed task's result of about 1 KiB, as a tool's
// text answer would be.
var taskResult = json.RawMessage(`{"content":[{"type":"text","text":"` + strings.Repeat("x", 1000) + `"}]}`)

// fillTasks starts n tasks on r, every other one completed with
// taskResult, the rest working, and returns their ids.
func fillTasks(b *testing.B, r *tasks.Runner, n int) []string {
	ctx := context.Background()
	ids := make([]string, n)
	for i := range ids {
		rec, err := r.Start(ctx, "", 0, func() {})
		if err != nil {
			b.Fatal(err)
		}
		if i%2 == 0 {
			r.Finish(ctx, rec.ID, append(json.RawMessage(nil), taskResult...), nil) // a copy each, as distinct results are
		}
		ids[i] = rec.ID
	}
	return ids
}

// BenchmarkTasksGet: 32 goroutines poll 1,000 live tasks (half completed
// with a 1 KiB result, half working) with tasks/get as a 2026-07-28
// client that declared the extension: "edge" through Edge.Handle (params
// decoded, the task read, the result inlined in the client's revision,
// the envelope, encoded), "store" the runner's Get alone.
func BenchmarkTasksGet(b *testing.B) {
	b.Run("edge", func(b *testing.B) {
		r := &tasks.Runner{Store: &tasks.Memory{Max: 2 * liveTasks}}
		e := &edge.Edge{Server: &server.Server{NS: fixture.New(), Info: mcp.Implementation{Name: "mcpx-bench", Version: "0"}},
			Tasks: edge.TaskOptions{Runner: r}}
		ids := fillTasks(b, r, liveTasks)
		params := make([]json.RawMessage, len(ids))
		for i, id := range ids {
			params[i] = json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}},"taskId":"` + id + `"}`)
		}
		var seq atomic.Int64
		b.SetParallelism(max(1, pollers/runtime.GOMAXPROCS(0)))
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			sess := new(edge.Session)
			rng := rand.New(rand.NewPCG(uint64(seq.Add(1)), 7))
			n := 0
			for pb.Next() {
				n++
				m := &jsonrpc.Message{JSONRPC: "2.0", ID: json.RawMessage(fmt.Sprint(n)), Method: mcp.MethodTasksGet, Params: params[rng.IntN(len(params))]}
				if r := e.Handle(context.Background(), sess, edge.In{Msg: m}, nil); r.Msg == nil || r.Msg.Error != nil {
					b.Fatalf("tasks/get: %+v", r.Msg)
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "gets/s")
	})
	b.Run("store", func(b *testing.B) {
		r := &tasks.Runner{Store: &tasks.Memory{Max: 2 * liveTasks}}
		ids := fillTasks(b, r, liveTasks)
		var seq atomic.Int64
		b.SetParallelism(max(1, pollers/runtime.GOMAXPROCS(0)))
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			rng := rand.New(rand.NewPCG(uint64(seq.Add(1)), 7))
			for pb.Next() {
				if _, err := r.Get(context.Background(), ids[rng.IntN(len(ids))], ""); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "gets/s")
	})
}

// BenchmarkTaskMemory: the heap 1,000 tasks hold in the in-memory store
// (half completed with a 1 KiB result), per task.
func BenchmarkTaskMemory(b *testing.B) {
	var perTask float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r := &tasks.Runner{Store: &tasks.Memory{Max: liveTasks}}
		fillTasks(b, r, liveTasks)
		runtime.GC()
		runtime.ReadMemStats(&after)
		perTask = float64(after.HeapAlloc-before.HeapAlloc) / liveTasks
		runtime.KeepAlive(r)
	}
	b.ReportMetric(perTask, "B/task")
}
