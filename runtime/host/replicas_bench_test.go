package host_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkParkedRetry: what relaying a parked question's retry to the
// replica that holds the call adds (issue 19), A/B in one run: each
// iteration parks two calls on replica A and retries one on A ("same")
// and one on B ("relayed", over the bus), in alternating order, on the
// memory hub and on a real redis-server. Only the retries are timed (the
// parks are not); the metrics are each kind's median and mean in
// microseconds, and the median of the differences.
//
//	go test ./runtime/host -run '^$' -bench BenchmarkParkedRetry -benchtime 300x -count 3
func BenchmarkParkedRetry(b *testing.B) {
	for _, be := range []struct {
		name string
		new  backend
	}{{"memory", memoryBackend}, {"redis-server", redisServerBackend}} {
		b.Run(be.name, func(b *testing.B) {
			rs := startReplicas(b, 2, be.new(b), nil)
			benchRetries(b, rs[0], rs[1])
		})
	}
}

func benchRetries(b *testing.B, a, other *replica) {
	same := make([]time.Duration, 0, b.N)
	relayed := make([]time.Duration, 0, b.N)
	diff := make([]time.Duration, 0, b.N)
	retry := func(on *replica, state string) time.Duration {
		b.StartTimer()
		start := time.Now()
		msg := askPost(b, on.url, askCall(state, adaAnswer))
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
