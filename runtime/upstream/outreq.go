package upstream

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// mcpx's POST to an HTTP upstream, without what net/http's Client and
// NewRequestWithContext allocate on every request for what mcpx never
// needs on the first hop: the URL parsed again, the Client's copy of the
// headers and of the URL kept for a redirect that almost never comes
// (BENCHMARKS.md, "fourth round"). The request is the same: the same
// fields, the body an io.NopCloser over a *bytes.Reader (net/http writes
// the headers and such a body in one write), GetBody for the Transport's
// retry of a request it could not write and for a 307/308. What the
// Client does is kept too: a redirect is handed to the Client as if it
// had made the first hop (replayFirst), and an error is the Client's
// *url.Error.

// directPost is the request every POST to rawURL copies and the transport
// it is sent with, or nils when the Client must make every hop itself: a
// URL it cannot parse (NewRequest's error is then each request's, as
// before), one with user information (the Client adds Authorization),
// a cookie jar or a Client timeout.
func directPost(c *http.Client, rawURL string) (*http.Request, http.RoundTripper) {
	tmpl, err := http.NewRequest(http.MethodPost, rawURL, nil)
	if err != nil || tmpl.URL.User != nil || c.Jar != nil || c.Timeout != 0 {
		return nil, nil
	}
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	return tmpl, rt
}

// outPost is what a POST allocates besides its http.Request, in one: its
// URL (a copy of the template's: a transport may change it) and its body.
type outPost struct {
	url  url.URL
	body bytes.Reader
}

// newPost is the POST of body to the upstream, as
// http.NewRequestWithContext makes it; its Header is the caller's to set.
func (h *httpConn) newPost(ctx context.Context, body []byte) (*http.Request, error) {
	if h.tmpl == nil || ctx == nil {
		return http.NewRequestWithContext(ctx, http.MethodPost, h.spec.URL, bytes.NewReader(body))
	}
	o := &outPost{url: *h.tmpl.URL}
	o.body.Reset(body)
	req := h.tmpl.WithContext(ctx)
	req.URL = &o.url
	req.ContentLength = int64(len(body))
	if len(body) == 0 {
		req.Body, req.GetBody = http.NoBody, noBody
		return req, nil
	}
	req.Body = io.NopCloser(&o.body)
	req.GetBody = func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(body)), nil
	}
	return req, nil
}

func noBody() (io.ReadCloser, error) { return http.NoBody, nil }

// framedMin is the params length from which a request goes to the
// upstream in its three pieces (jsonrpc.FramedRequest) instead of copied
// into one buffer: below it the copy costs less than the headers' write
// of their own that net/http makes before a body it does not know to be
// in memory.
const framedMin = 16 << 10

// newFramedPost is newPost of the body head, params, tail, read in turn
// from where they are.
func (h *httpConn) newFramedPost(ctx context.Context, head, params, tail []byte) (*http.Request, error) {
	open := func() io.ReadCloser { return io.NopCloser(&pieces{head, params, tail}) }
	var req *http.Request
	if h.tmpl == nil || ctx == nil {
		r, err := http.NewRequestWithContext(ctx, http.MethodPost, h.spec.URL, nil)
		if err != nil {
			return nil, err
		}
		req = r
	} else {
		u := *h.tmpl.URL
		req = h.tmpl.WithContext(ctx)
		req.URL = &u
	}
	req.ContentLength = int64(len(head) + len(params) + len(tail))
	req.Body = open()
	req.GetBody = func() (io.ReadCloser, error) { return open(), nil }
	return req, nil
}

// pieces is a body of slices read one after the other.
type pieces [3][]byte

func (p *pieces) Read(dst []byte) (int, error) {
	n := 0
	for i := range p {
		c := copy(dst[n:], p[i])
		p[i] = p[i][c:]
		if n += c; n == len(dst) {
			return n, nil
		}
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// do sends req as h.client.Do does: the first hop straight to the
// transport, with what Client.send checks of its answer; a redirect is
// then the Client's to follow.
func (h *httpConn) do(req *http.Request) (*http.Response, error) {
	if h.rt == nil || req.URL.User != nil {
		return h.client.Do(req)
	}
	resp, err := h.rt.RoundTrip(req)
	if err != nil {
		if tlsErr, ok := err.(tls.RecordHeaderError); ok && string(tlsErr.RecordHeader[:]) == "HTTP/" {
			err = http.ErrSchemeMismatch
		}
		return nil, &url.Error{Op: urlErrorOp(req.Method), URL: req.URL.String(), Err: err}
	}
	if resp == nil {
		return nil, &url.Error{Op: urlErrorOp(req.Method), URL: req.URL.String(), Err: fmt.Errorf("http: RoundTripper implementation (%T) returned a nil *Response with a nil error", h.rt)}
	}
	if resp.Body == nil {
		if resp.ContentLength > 0 && req.Method != http.MethodHead {
			return nil, &url.Error{Op: urlErrorOp(req.Method), URL: req.URL.String(), Err: fmt.Errorf("http: RoundTripper implementation (%T) returned a *Response with content length %d but a nil Body", h.rt, resp.ContentLength)}
		}
		resp.Body = io.NopCloser(strings.NewReader(""))
	}
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		// The Client follows it (or not) as it would have: its first
		// hop is answered with this response.
		c := *h.client
		c.Transport = &replayFirst{req: req, resp: resp, rt: h.rt}
		req.RequestURI = "" // a transport may have set it (an in-memory one)
		return c.Do(req)
	}
	return resp, nil
}

// urlErrorOp is the Op of the Client's *url.Error for method.
func urlErrorOp(method string) string {
	if method == "" {
		return "Get"
	}
	return method[:1] + strings.ToLower(method[1:])
}

// replayFirst answers the Client's first hop, req, with resp, already
// received, and sends every later one with rt.
type replayFirst struct {
	req  *http.Request
	resp *http.Response
	rt   http.RoundTripper
}

func (t *replayFirst) RoundTrip(r *http.Request) (*http.Response, error) {
	if r == t.req && t.resp != nil {
		resp := t.resp
		t.resp = nil
		return resp, nil
	}
	return t.rt.RoundTrip(r)
}
