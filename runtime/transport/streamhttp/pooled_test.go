package streamhttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/catalog"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
)

var megabyte = strings.Repeat(strings.Repeat("x", 79)+"\n", 1<<20/80)

// sizedHandler serves "sized", whose text is the letter of its arguments
// n times, and "mb", a constant text of 1 MB.
func sizedHandler() *streamhttp.Handler {
	c := catalog.New()
	c.AddTool(mcp.Tool{Name: "sized", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(_ context.Context, raw json.RawMessage) (*mcp.CallToolResult, error) {
		var a struct {
			Letter string `json:"letter"`
			N      int    `json:"n"`
		}
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, err
		}
		return catalog.TextResult(strings.Repeat(a.Letter, a.N)), nil
	})
	c.AddTool(mcp.Tool{Name: "mb", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
		return catalog.TextResult(megabyte), nil
	})
	return streamhttp.New(&edge.Edge{Server: &server.Server{NS: c, Info: mcp.Implementation{Name: "t", Version: "1"}}}, streamhttp.Options{Logger: discard()})
}

func callBody(id int, tool, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{%s,"name":%q,"arguments":%s}}`, id, modernMeta, tool, args)
}

// TestPooledAnswersIntact: answers whose results were written into pooled
// buffers, given back once written, each hold their own result, however
// many calls of other sizes run at once, as JSON and as an SSE stream.
func TestPooledAnswersIntact(t *testing.T) {
	h := sizedHandler()
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.Close() })
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			for i := range 25 {
				letter, n := string(rune('a'+g)), (i*7919+g*104729)%(300<<10)+1
				hd := modern("tools/call", "sized")
				if g%3 == 2 {
					hd["Accept"] = "text/event-stream"
				}
				resp := do(t, nil, http.MethodPost, srv.URL, hd, callBody(i, "sized", fmt.Sprintf(`{"letter":%q,"n":%d}`, letter, n)))
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Error(err)
					return
				}
				body := string(b)
				if g%3 == 2 { // one event: its data line is the answer
					_, body, _ = strings.Cut(body, "data: ")
					body, _, _ = strings.Cut(body, "\n")
				}
				var got struct {
					ID     int `json:"id"`
					Result struct {
						Content []struct{ Text string } `json:"content"`
					} `json:"result"`
				}
				if err := json.Unmarshal([]byte(body), &got); err != nil || got.ID != i || len(got.Result.Content) != 1 || got.Result.Content[0].Text != strings.Repeat(letter, n) {
					t.Errorf("goroutine %d, call %d (%d × %s): %v, answer %.200s", g, i, n, letter, err, b)
					return
				}
			}
		})
	}
	wg.Wait()
}

type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(int)             {}
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }

// TestPooledAnswerReused: a plain JSON answer of 1 MB is written from a
// pooled buffer given back afterwards, so that the next one allocates no
// buffer for it (without the pool: ~2 MB a call, the buffer and its copy).
func TestPooledAnswerReused(t *testing.T) {
	h := sizedHandler()
	t.Cleanup(h.Close)
	serve := func(id int) {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(callBody(id, "mb", "{}")))
		for k, v := range modern("tools/call", "mb") {
			r.Header.Set(k, v)
		}
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		h.ServeHTTP(&discardWriter{h: http.Header{}}, r)
	}
	// One P: the pool's buffers are per P.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for i := range 3 {
		serve(i)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	serve(3)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 512<<10 {
		t.Errorf("a 1 MB answer allocated %d bytes", n)
	}
}
