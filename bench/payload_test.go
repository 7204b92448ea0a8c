package bench

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/catalog"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
)

// Large payloads (issue 17). BenchmarkGatewayLarge echoes 64 kB of
// arguments through each path of the procs topology (each party its own
// process, the gateway the mcpx binary), one call at a time; MB/s counts
// both ways. BenchmarkGatewayResult has the upstream answer a small call
// with a 1 MB text result, in memory (as BenchmarkGatewayWork): B/op of
// gateway minus direct is what mcpx itself allocated for the call, the
// client and the upstream being the same code on both paths.

const largeArgs = 64 << 10

// BenchmarkGatewayLarge: 64 kB of text in the arguments, echoed back.
func BenchmarkGatewayLarge(b *testing.B) {
	u := gatewayUpstreams[0] // mcpx: the cheapest upstream, the harshest ratio
	text := strings.Repeat("x", largeArgs)
	for _, p := range gatewayPaths(b, u, true) {
		b.Run("procs/"+u.name+"/c1/"+p.name, func(b *testing.B) {
			s := connect(b, p.url, u.rev)
			if err := callEchoText(s, p.tool, 1, text); err != nil {
				b.Fatal(err)
			}
			cpu := cpuTimes(p)
			b.SetBytes(2 * largeArgs)
			b.ResetTimer()
			for i := range b.N {
				if err := callEchoText(s, p.tool, int64(i+2), text); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if len(p.parties) > 1 {
				used := cpuTimes(p)
				b.ReportMetric(float64((used[1]-cpu[1]).Microseconds())/float64(b.N), "proxy-cpu-µs/op")
			}
		})
	}
}

// resultSize is the text of BenchmarkGatewayResult's answer: a file of
// 1 MB in lines of 80 bytes, so its newlines are escaped on the wire.
const resultSize = 1 << 20

var resultText = func() string {
	line := strings.Repeat("x", 79) + "\n"
	return strings.Repeat(line, resultSize/len(line)+1)[:resultSize]
}()

// blobUpstream serves "blob", which answers any call with resultText.
func blobUpstream() http.Handler {
	c := catalog.New()
	c.AddTool(mcp.Tool{Name: "blob", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
		return catalog.TextResult(resultText), nil
	})
	return streamhttp.New(&edge.Edge{Server: &server.Server{NS: c, Info: mcp.Implementation{Name: "upstream", Version: "bench"}}}, streamhttp.Options{})
}

// callBlob calls the blob tool and checks the answer holds the whole text.
func callBlob(s *session, tool string, id int64) error {
	body := `{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"method":"tools/call","params":{` + modernMeta + `,"name":"` + tool + `","arguments":{}}}`
	b, err := s.post(body, "tools/call", tool)
	if err != nil {
		return err
	}
	// Each of the text's 13,107 newlines is escaped: 2 bytes on the wire.
	if n := strings.Count(string(b), `x\n`); n != resultSize/80 {
		return &answerError{b, n}
	}
	return nil
}

type answerError struct {
	b []byte
	n int
}

func (e *answerError) Error() string {
	return "the answer holds " + strconv.Itoa(e.n) + " lines, not " + strconv.Itoa(resultSize/80) + ": " + string(e.b[:min(len(e.b), 200)])
}

// BenchmarkGatewayResult: a 1 MB result, in memory, each answer streamed
// to its reader through a pipe (piped) as a socket would carry it, so
// that no buffer of the benchmark's own is charged to the gateway path.
func BenchmarkGatewayResult(b *testing.B) {
	u := gatewayUpstream{"mcpx", "2026-07-28", blobUpstream}
	for _, p := range pipedPaths(b, u) {
		tool := strings.Replace(p.tool, "echo", "blob", 1)
		b.Run("1MB/"+p.name, func(b *testing.B) {
			s := connectVia(b, "http://127.0.0.1/mcp", u.rev, p.rt)
			if err := callBlob(s, tool, 1); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetBytes(resultSize)
			for i := range b.N {
				if err := callBlob(s, tool, int64(i+2)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestPayloadBenchmarksCallThrough checks that the large-payload paths
// carry the whole payload both ways.
func TestPayloadBenchmarksCallThrough(t *testing.T) {
	text := strings.Repeat("x", largeArgs)
	for _, p := range gatewayPaths(t, gatewayUpstreams[0], true) {
		if err := callEchoText(connect(t, p.url, gatewayUpstreams[0].rev), p.tool, 1, text); err != nil {
			t.Errorf("64 kB, %s: %.300v", p.name, err)
		}
	}
	for _, p := range pipedPaths(t, gatewayUpstream{"mcpx", "2026-07-28", blobUpstream}) {
		if err := callBlob(connectVia(t, "http://127.0.0.1/mcp", "2026-07-28", p.rt), strings.Replace(p.tool, "echo", "blob", 1), 1); err != nil {
			t.Errorf("1 MB, %s: %v", p.name, err)
		}
	}
}

// pipedPaths are workPaths with each handler reached through piped.
func pipedPaths(tb testing.TB, u gatewayUpstream) []workPath {
	return pathsVia(tb, u, func(h http.Handler) http.RoundTripper { return piped{h} })
}

// piped is a RoundTripper that serves each request with h in a goroutine
// of its own, the answer's body written into a pipe the response reads:
// unlike httptest.ResponseRecorder it holds no copy of the body.
type piped struct{ h http.Handler }

func (t piped) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body == nil {
		r.Body = http.NoBody
	}
	r.Host, r.RequestURI = r.URL.Host, r.URL.RequestURI()
	pr, pw := io.Pipe()
	w := &pipeWriter{header: http.Header{}, pw: pw, ready: make(chan struct{})}
	go func() {
		t.h.ServeHTTP(w, r)
		w.WriteHeader(http.StatusOK) // if the handler wrote nothing
		pw.Close()
	}()
	<-w.ready
	resp := &http.Response{StatusCode: w.status, Header: w.sent, Body: pr, ContentLength: -1, Request: r, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
	if n, err := strconv.ParseInt(w.sent.Get("Content-Length"), 10, 64); err == nil {
		resp.ContentLength = n
	}
	return resp, nil
}

type pipeWriter struct {
	header, sent http.Header
	pw           *io.PipeWriter
	status       int
	ready        chan struct{}
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) WriteHeader(code int) {
	if w.sent != nil {
		return
	}
	w.status, w.sent = code, w.header.Clone()
	close(w.ready)
}

func (w *pipeWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.pw.Write(b)
}

func (w *pipeWriter) Flush() {}
