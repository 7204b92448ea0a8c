package host_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/demo"
	"github.com/mcpx-dev/mcpx/runtime/host"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
)

// TestHTTPLimits: the limits in Config.HTTP (what `mcpx serve --max-*`
// sets) reach the endpoint.
func TestHTTPLimits(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	c := host.Config{NS: demo.New(), Info: mcp.Implementation{Name: "mcpx", Version: "test"}, HTTP: streamhttp.Options{MaxBody: 64}}
	go func() { done <- host.HTTP(ctx, c, "127.0.0.1:0", func(u string) { urls <- u }) }()
	defer func() {
		cancel()
		if err := <-done; err != nil && err != context.Canceled {
			t.Errorf("host.HTTP: %v", err)
		}
	}()
	var url string
	select {
	case url = <-urls:
	case err := <-done:
		t.Fatalf("host.HTTP: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("not serving within 10s")
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 64) + `"}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a %d-byte body with MaxBody 64: HTTP %d, want 413", len(body), resp.StatusCode)
	}
}
