//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TestServeExportsTracesAndFlushesOnExit: `mcpx serve` with
// OTEL_EXPORTER_OTLP_ENDPOINT naming an OTLP/HTTP receiver traces a
// request under the client's traceparent, and the span, held back by a
// batch delay of a minute, reaches the receiver at SIGTERM, before mcpx
// exits 0.
func TestServeExportsTracesAndFlushesOnExit(t *testing.T) {
	var mu sync.Mutex
	var spans []string // name, trace id, parent span id
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req coltrace.ExportTraceServiceRequest
		if proto.Unmarshal(b, &req) != nil {
			http.Error(w, "not OTLP", http.StatusBadRequest)
			return
		}
		mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					spans = append(spans, sp.Name+" "+hex.EncodeToString(sp.TraceId)+" "+hex.EncodeToString(sp.ParentSpanId))
				}
			}
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer recv.Close()

	cmd := exec.Command(mcpxBin(t), "serve", "--listen", "127.0.0.1:0")
	cmd.Env = append(cmd.Environ(), "OTEL_EXPORTER_OTLP_ENDPOINT="+recv.URL, "OTEL_BSP_SCHEDULE_DELAY=60000")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	urls := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`at (http://\S+)`)
		for s.Scan() {
			if m := re.FindStringSubmatch(s.Text()); m != nil {
				select {
				case urls <- m[1]:
				default:
				}
			}
		}
	}()
	var url string
	select {
	case url = <-urls:
	case <-time.After(10 * time.Second):
		t.Fatal("mcpx serve did not say where it serves")
	}
	const trace, parent = "0af7651916cd43dd8448eb211c80319c", "00f067aa0ba902b7"
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},"_meta":{"traceparent":"00-` + trace + `-` + parent + `-01","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(answer, []byte(`"result"`)) {
		t.Fatalf("tools/call echo: %s", answer)
	}
	mu.Lock()
	early := len(spans)
	mu.Unlock()
	if early != 0 {
		t.Fatalf("spans exported before exit, with a batch delay of a minute: %v", spans)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code := exitCode(t, cmd, 10*time.Second); code != 0 {
		t.Errorf("exit code %d after SIGTERM; want 0", code)
	}
	mu.Lock()
	defer mu.Unlock()
	want := "tools/call echo " + trace + " " + parent
	if len(spans) != 1 || spans[0] != want {
		t.Errorf("the receiver got %q, want [%q]: the request's span under the client's, flushed at exit", spans, want)
	}
}

// TestServeRefusesBadTracingConfig: a sampler mcpx cannot honour stops
// `mcpx serve` at once with exit code 1, naming the variable.
func TestServeRefusesBadTracingConfig(t *testing.T) {
	cmd := exec.Command(mcpxBin(t), "serve", "--listen", "127.0.0.1:0")
	cmd.Env = append(cmd.Environ(), "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1", "OTEL_TRACES_SAMPLER=sometimes")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(t, cmd, 10*time.Second); code != 1 || !strings.Contains(stderr.String(), "OTEL_TRACES_SAMPLER=sometimes") {
		t.Errorf("exit code %d, stderr %q; want 1 and a message naming OTEL_TRACES_SAMPLER", code, stderr.String())
	}
}
