package host_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/cluster"
	"github.com/mcpx-dev/mcpx/runtime/requeststate"
)

// BenchmarkParkedRetry: what relaying a parked question's retry to the
// replica that holds the call adds (issue 19), A/B in one run: each
// iteration parks two calls on replica A and retries one on A ("same")
// and one on B ("relayed", over the bus), in alternating order, on the
// memory hub and on a real redis-server. Only the retries are timed (the
// parks are not); the metrics are each kind's median and mean in
// microseconds, and the median of the differences. The retries accept
// JSON alone, or also SSE (/sse: the relay then has a topic for the
// call's notifications, subscribed and unsubscribed per retry).
//
//	go test ./runtime/host -run '^$' -bench BenchmarkParkedRetry -benchtime 300x -count 3
func BenchmarkParkedRetry(b *testing.B) {
	for _, be := range []struct {
		name string
		new  backend
	}{{"memory", memoryBackend}, {"redis-server", redisServerBackend}} {
		for _, sse := range []bool{false, true} {
			name := be.name
			if sse {
				name += "/sse"
			}
			b.Run(name, func(b *testing.B) {
				rs := startReplicas(b, 2, be.new(b), nil)
				benchRetries(b, rs[0], rs[1], sse)
			})
		}
	}
}

func benchRetries(b *testing.B, a, other *replica, sse bool) {
	same := make([]time.Duration, 0, b.N)
	relayed := make([]time.Duration, 0, b.N)
	diff := make([]time.Duration, 0, b.N)
	retry := func(on *replica, state string) time.Duration {
		b.StartTimer()
		start := time.Now()
		var msg map[string]any
		if sse {
			_, _, msg = rpc(b, on.url, "", modernHeaders("tools/call", "ask"), askCall(state, adaAnswer))
		} else {
			msg = askPost(b, on.url, askCall(state, adaAnswer))
		}
		d := time.Since(start)
		b.StopTimer()
		if got := resultText(msg); got != "hello Ada" {
			b.Fatalf("retry: %v", msg)
		}
		return d
	}
	b.ResetTimer()
	b.StopTimer()
	for i := range b.N {
		s1, s2 := benchPark(b, a), benchPark(b, a)
		var ds, dr time.Duration
		if i%2 == 0 {
			ds, dr = retry(a, s1), retry(other, s2)
		} else {
			dr, ds = retry(other, s2), retry(a, s1)
		}
		same, relayed, diff = append(same, ds), append(relayed, dr), append(diff, dr-ds)
	}
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	b.ReportMetric(us(median(same)), "same-p50-us")
	b.ReportMetric(us(median(relayed)), "relayed-p50-us")
	b.ReportMetric(us(mean(same)), "same-mean-us")
	b.ReportMetric(us(mean(relayed)), "relayed-mean-us")
	b.ReportMetric(us(median(diff)), "added-p50-us")
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func mean(ds []time.Duration) time.Duration {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}

func benchPark(b *testing.B, r *replica) string {
	msg := askPost(b, r.url, askCall("", ""))
	res, _ := msg["result"].(map[string]any)
	state, _ := res["requestState"].(string)
	if state == "" {
		b.Fatalf("ask: %v", msg)
	}
	return state
}

// askPost sends a 2026-07-28 tools/call of ask and returns its JSON answer.
func askPost(b testing.TB, url, body string) map[string]any {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for k, v := range modernHeaders("tools/call", "ask") {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var msg map[string]any
	if err := json.Unmarshal(raw, &msg); err != nil {
		b.Fatalf("%v: %s", err, raw)
	}
	return msg
}

// BenchmarkLegacySessionRequest: what sharing legacy sessions costs a
// plain request (issue 19): tools/call greet on a session, with no cluster
// (the session in the process), on the memory hub, and on a real
// redis-server (one GETEX per request: the record read and its TTL
// refreshed), the session made on another replica than the one serving.
//
//	go test ./runtime/host -run '^$' -bench BenchmarkLegacySessionRequest -benchtime 2000x -count 3
func BenchmarkLegacySessionRequest(b *testing.B) {
	for _, be := range []struct {
		name string
		new  backend
	}{{"alone", nil}, {"memory", memoryBackend}, {"redis-server", redisServerBackend}} {
		b.Run(be.name, func(b *testing.B) {
			var init, serve *replica
			if be.new == nil {
				r := startReplica(b, &cluster.Cluster{Bus: cluster.Local(), Records: &cluster.MemoryRecords{}}, requeststate.Random(), nil)
				init, serve = r, r
			} else {
				rs := startReplicas(b, 2, be.new(b), nil)
				init, serve = rs[0], rs[1]
			}
			sid := benchSession(b, init.url)
			body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{}}}`
			b.ResetTimer()
			for range b.N {
				req, _ := http.NewRequest(http.MethodPost, serve.url, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json")
				req.Header.Set("Mcp-Session-Id", sid)
				req.Header.Set("MCP-Protocol-Version", "2025-06-18")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || !strings.Contains(string(raw), "hello") {
					b.Fatalf("%d %s", resp.StatusCode, raw)
				}
			}
		})
	}
}

func benchSession(b *testing.B, url string) string {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		b.Fatal("no session")
	}
	return sid
}
