package admin

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestAddr(t *testing.T) {
	for in, want := range map[string]string{
		"9090":         "127.0.0.1:9090",
		":9090":        "127.0.0.1:9090",
		"0":            "127.0.0.1:0",
		"0.0.0.0:9090": "0.0.0.0:9090",
		"[::1]:9090":   "[::1]:9090",
		"host:1":       "host:1",
	} {
		if got, err := Addr(in); err != nil || got != want {
			t.Errorf("Addr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "70000", "host", "host:port", "-1"} {
		if got, err := Addr(bad); err == nil {
			t.Errorf("Addr(%q) = %q; want an error", bad, got)
		}
	}
}

// TestEndpoints: /healthz answers at once, /readyz is 503 until told
// and then what it is told (503 with the reasons when not ready), /metrics
// is the handler given, /debug/pprof/ is served.
func TestEndpoints(t *testing.T) {
	s := New(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "metrics here") }))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bound, _, err := Serve(ctx, "0", s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(bound, "127.0.0.1:") {
		t.Errorf("a bare port listens on %s; want loopback", bound)
	}
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + bound + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/healthz"); code != 200 || strings.TrimSpace(body) != "ok" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	if code, body := get("/readyz"); code != 503 || !strings.Contains(body, "starting") {
		t.Errorf("/readyz before SetReady: %d %q", code, body)
	}
	s.SetReady(func() Readiness {
		return Readiness{Upstreams: map[string]UpstreamReadiness{"x": {State: "backing_off", Reason: "exit status 3"}}}
	})
	code, body := get("/readyz")
	var rd Readiness
	if code != 503 || json.Unmarshal([]byte(body), &rd) != nil || rd.Upstreams["x"].Reason != "exit status 3" {
		t.Errorf("/readyz not ready: %d %q", code, body)
	}
	s.SetReady(func() Readiness { return Readiness{Ready: true} })
	if code, _ := get("/readyz"); code != 200 {
		t.Errorf("/readyz ready: %d", code)
	}
	if code, body := get("/metrics"); code != 200 || body != "metrics here" {
		t.Errorf("/metrics: %d %q", code, body)
	}
	if code, body := get("/debug/pprof/"); code != 200 || !strings.Contains(body, "goroutine") {
		t.Errorf("/debug/pprof/: %d", code)
	}
}
