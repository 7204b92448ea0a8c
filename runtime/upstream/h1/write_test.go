package h1

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
)

// TestWriteRequestAsNetHTTP: writeRequest writes every request as
// http.Request.Write does, byte for byte, whether it writes the head
// itself or hands the request over, and closes the body either way.
func TestWriteRequestAsNetHTTP(t *testing.T) {
	body := func(s string) func() (io.Reader, int64) {
		return func() (io.Reader, int64) { return strings.NewReader(s), int64(len(s)) }
	}
	mcpHeaders := http.Header{
		"Content-Type":         {"application/json"},
		"Accept":               {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {"2026-07-28"},
		"Mcp-Method":           {"tools/call"},
		"Mcp-Name":             {"echo"},
		"Traceparent":          {"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
	}
	cases := []struct {
		name   string
		method string
		url    string
		host   string
		header http.Header
		body   func() (io.Reader, int64)
		close  bool
		te     []string
		plain  bool // writeRequest writes the head itself
	}{
		{name: "mcp post", method: "POST", url: "http://127.0.0.1:8080/mcp", header: mcpHeaders, body: body(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`), plain: true},
		{name: "get, no body", method: "GET", url: "http://example.com/mcp?x=1&y=%20", header: http.Header{"Accept": {"text/event-stream"}}, plain: true},
		{name: "empty method", url: "http://example.com/", plain: true},
		{name: "delete, no body", method: "DELETE", url: "http://example.com/mcp", header: http.Header{"Mcp-Session-Id": {"abc"}}, plain: true},
		{name: "post, no body", method: "POST", url: "http://example.com/mcp", plain: true},
		{name: "put, no body", method: "PUT", url: "http://example.com/mcp", plain: true},
		{name: "several values, sorted names", method: "POST", url: "http://example.com/", header: http.Header{"Zed": {"1", "2"}, "Alpha": {"a"}, "Empty": {""}, "None": {}}, body: body("x"), plain: true},
		{name: "own user agent", method: "POST", url: "http://example.com/", header: http.Header{"User-Agent": {"mcpx/1", "second"}}, body: body("x"), plain: true},
		{name: "blank user agent", method: "POST", url: "http://example.com/", header: http.Header{"User-Agent": {""}}, body: body("x"), plain: true},
		{name: "no user agent values", method: "POST", url: "http://example.com/", header: http.Header{"User-Agent": nil}, body: body("x"), plain: true},
		{name: "excluded names", method: "POST", url: "http://example.com/", header: http.Header{"Host": {"other"}, "Content-Length": {"99"}, "Transfer-Encoding": {"gzip"}, "Trailer": {"X"}, "X": {"y"}}, body: body("abc"), plain: true},
		{name: "invalid name dropped", method: "POST", url: "http://example.com/", header: http.Header{"Bad Name": {"v"}, "Bad:Name": {"v"}, "Good": {"v"}}, body: body("abc"), plain: true},
		{name: "host override", method: "POST", url: "http://127.0.0.1:9/mcp", host: "upstream.internal:9", body: body("abc"), plain: true},
		{name: "ipv6 literal", method: "POST", url: "http://[::1]:8080/mcp", body: body("abc"), plain: true},
		{name: "value with newline", method: "POST", url: "http://example.com/", header: http.Header{"X": {"a\r\nInjected: 1"}}, body: body("abc")},
		{name: "value with spaces around", method: "POST", url: "http://example.com/", header: http.Header{"X": {" a\t"}}, body: body("abc")},
		{name: "user agent with newline", method: "POST", url: "http://example.com/", header: http.Header{"User-Agent": {"a\nb"}}, body: body("abc")},
		{name: "ipv6 zone", method: "POST", url: "http://[fe80::1%25eth0]:8080/mcp", body: body("abc")},
		{name: "unicode host", method: "POST", url: "http://bücher.example/", body: body("abc")},
		{name: "invalid host", method: "POST", url: "http://example.com/", host: "a b", body: body("abc")},
		{name: "connection close", method: "POST", url: "http://example.com/", close: true, body: body("abc")},
		{name: "chunked", method: "POST", url: "http://example.com/", te: []string{"chunked"}, body: func() (io.Reader, int64) { return strings.NewReader("abc"), -1 }},
		{name: "unknown length", method: "POST", url: "http://example.com/", body: func() (io.Reader, int64) { return strings.NewReader("abc"), -1 }},
		{name: "many headers", method: "POST", url: "http://example.com/", header: manyHeaders(maxPlainHeaders + 1), body: body("abc")},
		{name: "as many headers as fit", method: "POST", url: "http://example.com/", header: manyHeaders(maxPlainHeaders), body: body("abc"), plain: true},
		{name: "long body", method: "POST", url: "http://example.com/", header: mcpHeaders, body: body(strings.Repeat("0123456789", 20000)), plain: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			make := func() (*http.Request, *closeCount) {
				req, err := http.NewRequest(tc.method, tc.url, nil)
				if err != nil {
					t.Fatal(err)
				}
				if tc.method == "" {
					req.Method = ""
				}
				req.Host = tc.host
				req.Header = tc.header.Clone()
				req.Close = tc.close
				req.TransferEncoding = tc.te
				cc := &closeCount{}
				if tc.body != nil {
					r, n := tc.body()
					cc.Reader = r
					req.Body, req.ContentLength = cc, n
				}
				return req, cc
			}
			want := new(bytes.Buffer)
			req, _ := make()
			wantErr := req.Write(want)

			got := new(bytes.Buffer)
			bw := bufio.NewWriterSize(got, bufferSize)
			req, cc := make()
			if tc.body != nil && cc.n != 0 {
				t.Fatal("the body was closed before")
			}
			_, _, plain := plainRequest(req)
			var keys [maxPlainHeaders]string
			if _, ok := plainHeader(req.Header, keys[:0]); !ok {
				plain = false
			}
			if plain != tc.plain {
				t.Errorf("head written by writeRequest itself: %v, want %v", plain, tc.plain)
			}
			err := writeRequest(bw, req)
			if ferr := bw.Flush(); err == nil {
				err = ferr
			}
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("error %v, net/http's %v", err, wantErr)
			}
			if got.String() != want.String() {
				t.Errorf("wrote\n%q\nnet/http writes\n%q", clip(got.String()), clip(want.String()))
			}
			if tc.body != nil && cc.n != 1 {
				t.Errorf("the body was closed %d times, want 1", cc.n)
			}
		})
	}
}

// TestWriteRequestBodyLength: a body shorter or longer than its
// ContentLength fails as with net/http, and one that fails to read fails
// the write with its error.
func TestWriteRequestBodyLength(t *testing.T) {
	for _, tc := range []struct {
		body    io.Reader
		length  int64
		wantErr string
	}{
		{strings.NewReader("abc"), 4, "http: ContentLength=4 with Body length 3"},
		{strings.NewReader("abcde"), 4, "http: ContentLength=4 with Body length 5"},
		{iotest.ErrReader(errors.New("disk on fire")), 4, "disk on fire"},
		{strings.NewReader("abcd"), 4, ""},
	} {
		req, _ := http.NewRequest(http.MethodPost, "http://example.com/", nil)
		req.Body, req.ContentLength = io.NopCloser(tc.body), tc.length
		err := writeRequest(bufio.NewWriter(io.Discard), req)
		if got := errString(err); got != tc.wantErr {
			t.Errorf("body length %d: error %q, want %q", tc.length, got, tc.wantErr)
		}
	}
}

// BenchmarkWriteRequest: the head of a request as mcpx sends one, by
// writeRequest and by http.Request.Write.
func BenchmarkWriteRequest(b *testing.B) {
	payload := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", nil)
	req.Header = http.Header{
		"Content-Type":         {"application/json"},
		"Accept":               {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {"2026-07-28"},
		"Mcp-Method":           {"tools/call"},
		"Mcp-Name":             {"echo"},
	}
	bw := bufio.NewWriterSize(io.Discard, bufferSize)
	r := bytes.NewReader(payload)
	for _, bc := range []struct {
		name  string
		write func(*http.Request) error
	}{
		{"h1", func(req *http.Request) error { return writeRequest(bw, req) }},
		{"nethttp", func(req *http.Request) error { return req.Write(bw) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r.Reset(payload)
				req.Body, req.ContentLength = io.NopCloser(r), int64(len(payload))
				if err := bc.write(req); err != nil {
					b.Fatal(err)
				}
				bw.Flush()
			}
		})
	}
}

type closeCount struct {
	io.Reader
	n int
}

func (c *closeCount) Close() error { c.n++; return nil }

func manyHeaders(n int) http.Header {
	h := http.Header{}
	for i := range n {
		h.Set("X-H"+string(rune('a'+i%26))+string(rune('a'+i/26)), "v")
	}
	return h
}

func clip(s string) string {
	if len(s) > 600 {
		return s[:600] + "…"
	}
	return s
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
