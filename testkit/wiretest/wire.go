// Package wiretest records and checks what mcpx says on the wire, for the
// test packages that run real MCP clients against it (runtime/peertest,
// runtime/gatewaytest): the framing of JSON-RPC lines and SSE bodies,
// recorders of both directions of a stdio connection ([StdioWire]) and of
// every exchange with a Streamable HTTP endpoint ([HTTPWire]), and the
// closed-world check (testkit/closedworld) of every message mcpx sent a
// client ([Validate]); and the plumbing both packages share to run mcpx
// under test ([ServeHTTP], [CheckLog], [Pipe], [TeeWriter]). Like
// net/http/httptest it is a helper for tests.
package wiretest

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/testkit/closedworld"
)

// Frame is one JSON-RPC message as it crossed the wire, cut into its
// members (a member that is absent stays nil).
type Frame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// IsRequest reports whether f is a request: a method and an id.
func (f *Frame) IsRequest() bool { return f.Method != "" && f.ID != nil }

// IsNotification reports whether f is a notification: a method and no id.
func (f *Frame) IsNotification() bool { return f.Method != "" && f.ID == nil }

// IDKey is a request id in a form that compares equal however the peer
// spaced it.
func IDKey(id json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, id) != nil {
		return string(id)
	}
	return b.String()
}

// messages splits one JSON text into its messages: a JSON-RPC batch (an
// array, 2025-03-26 only) is several.
func messages(text []byte) ([][]byte, error) {
	text = bytes.TrimSpace(text)
	if len(text) > 0 && text[0] == '[' {
		var batch []json.RawMessage
		if err := json.Unmarshal(text, &batch); err != nil {
			return nil, err
		}
		out := make([][]byte, len(batch))
		for i, m := range batch {
			out[i] = m
		}
		return out, nil
	}
	if !json.Valid(text) {
		return nil, fmt.Errorf("not JSON: %.200q", text)
	}
	return [][]byte{text}, nil
}

// MetaVersion is the protocol version a request names in
// params._meta (a 2026-07-28 request), or "".
func MetaVersion(params json.RawMessage) string {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return ""
	}
	var v string
	json.Unmarshal(p.Meta[mcp.MetaKeyProtocolVersion], &v)
	return v
}

// negotiated is the protocolVersion of an initialize result, or "".
func negotiated(result json.RawMessage) string {
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	json.Unmarshal(result, &r)
	return r.ProtocolVersion
}

// Sent is one message mcpx sent, with what validating it needs.
type Sent struct {
	Raw       []byte
	Method    string // for a response: the method of the request it answers
	Rev       string // the revision it was sent to
	Where     string // where it was on the wire
	Cancelled bool   // a response to a request the client cancelled
}

// cancelledIDs are the requests the client cancelled with
// notifications/cancelled.
func cancelledIDs(fromClient [][]byte) map[string]bool {
	ids := map[string]bool{}
	for _, m := range fromClient {
		var f Frame
		json.Unmarshal(m, &f)
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if f.Method == mcp.MethodNotificationsCancelled && json.Unmarshal(f.Params, &p) == nil && p.RequestID != nil {
			ids[IDKey(p.RequestID)] = true
		}
	}
	return ids
}

// request is what is remembered of a client request to read its response.
type request struct {
	method string
	rev    string
}

// Validate checks every message mcpx sent against the closed-world
// validator for the revision it was sent to, and that it was sent to the
// revision the client was pinned to.
func Validate(t *testing.T, pinned string, msgs []Sent) {
	t.Helper()
	v, err := closedworld.Default()
	if err != nil {
		t.Fatalf("closed-world validator: %v (run `make schemas`)", err)
	}
	if len(msgs) == 0 {
		t.Errorf("no message from mcpx was recorded")
	}
	kinds := map[string]int{}
	for _, m := range msgs {
		kinds[kind(m)]++
		if err := checkSent(v, m); err != nil {
			t.Errorf("mcpx sent, at %s (revision %s, answering %q):\n%s\nclosed-world validator: %v", m.Where, m.Rev, m.Method, m.Raw, err)
		}
		if m.Cancelled {
			t.Errorf("mcpx answered, at %s, a request the client had cancelled (cancellation: the receiver SHOULD NOT send a response; the request was still running):\n%s", m.Where, m.Raw)
		}
		if m.Rev != pinned {
			t.Errorf("mcpx sent at %s a message in revision %s to a client pinned to %s:\n%s", m.Where, m.Rev, pinned, m.Raw)
		}
	}
	t.Logf("validated %d messages from mcpx at %s: %v", len(msgs), pinned, kinds)
}

// kind names what a message is, for the log: "result of tools/list",
// "notifications/progress", "error".
func kind(m Sent) string {
	var f Frame
	json.Unmarshal(m.Raw, &f)
	switch {
	case f.Method != "":
		return f.Method
	case f.Result != nil:
		return "result of " + m.Method
	default:
		return "error"
	}
}

// checkSent validates one message: its envelope against JSONRPCMessage,
// then a result against its method's result definition, a notification
// against ServerNotification, a request against ServerRequest.
func checkSent(v *closedworld.Validator, m Sent) error {
	if err := v.Validate(m.Rev, "JSONRPCMessage", m.Raw); err != nil {
		return fmt.Errorf("envelope: %w", err)
	}
	var f Frame
	if err := json.Unmarshal(m.Raw, &f); err != nil {
		return err
	}
	switch {
	case f.IsNotification():
		return CheckFramed(v, m.Rev, "ServerNotification", &f)
	case f.IsRequest():
		if !v.Has(m.Rev, "ServerRequest") {
			return fmt.Errorf("a server request, which revision %s does not have", m.Rev)
		}
		return CheckFramed(v, m.Rev, "ServerRequest", &f)
	case f.Result != nil:
		if m.Method == "" {
			return fmt.Errorf("a result for no request the client sent")
		}
		tab := revision.Lookup(mcp.Revision(m.Rev))
		if tab == nil {
			return fmt.Errorf("unknown revision %q", m.Rev)
		}
		meth, ok := tab.Method(m.Method)
		if !ok || meth.Result == "" {
			return fmt.Errorf("a result for %s, which revision %s does not define", m.Method, m.Rev)
		}
		def := meth.Result
		if def == "Result" && v.Has(m.Rev, "EmptyResult") {
			def = "EmptyResult"
		}
		var head struct {
			ResultType string          `json:"resultType"`
			Task       json.RawMessage `json:"task"`
		}
		_ = json.Unmarshal(f.Result, &head)
		if m.Method == mcp.MethodToolsCall && (head.Task != nil || head.ResultType == "task") && v.Has(m.Rev, "CreateTaskResult") {
			// A task-augmented call is answered with the task: the
			// 2025-11-25 utility's {task}, the extension's flat handle.
			def = "CreateTaskResult"
		}
		if head.ResultType == "input_required" {
			// The other member of the response's anyOf, on the requests
			// the MRTR page allows it on (and only in a revision with it).
			if !inputRequiredOn[m.Method] || !v.Has(m.Rev, "InputRequiredResult") {
				return fmt.Errorf("an input_required result for %s, which may not have one in revision %s", m.Method, m.Rev)
			}
			def = "InputRequiredResult"
		}
		return v.Validate(m.Rev, def, f.Result)
	}
	return nil // an error response: the envelope is all there is to check
}

// CheckFramed validates a notification or request against a union
// definition: up to 2025-06-18 its variants hold only method and params,
// from 2025-11-25 the whole frame. Both shapes are tried; the error is the
// one of the shape the revision uses.
func CheckFramed(v *closedworld.Validator, rev, def string, f *Frame) error {
	bare := map[string]any{"method": f.Method}
	if f.Params != nil {
		bare["params"] = f.Params
	}
	framed := map[string]any{"jsonrpc": "2.0", "method": f.Method}
	if f.Params != nil {
		framed["params"] = f.Params
	}
	if f.ID != nil {
		framed["id"] = f.ID
	}
	b, _ := json.Marshal(bare)
	fr, _ := json.Marshal(framed)
	errBare, errFramed := v.Validate(rev, def, b), v.Validate(rev, def, fr)
	switch {
	case errBare == nil || errFramed == nil:
		return nil
	case rev >= string(mcp.Rev20251125):
		return errFramed
	default:
		return errBare
	}
}

// LockedBuffer is a bytes.Buffer safe for concurrent use, whose readers
// can wait for what they expect to be written.
type LockedBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // closed by the next Write
}

// Write appends p to the buffer and wakes the readers waiting in Await.
func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
	return l.b.Write(p)
}

// Bytes is a copy of what has been written.
func (l *LockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.b.Bytes())
}

// String is what has been written, as a string.
func (l *LockedBuffer) String() string { return string(l.Bytes()) }

// Await reports whether what has been written satisfies ok, waiting for
// further writes until timeout.
func (l *LockedBuffer) Await(ok func([]byte) bool, timeout time.Duration) bool {
	deadline := time.After(timeout)
	for {
		l.mu.Lock()
		if ok(l.b.Bytes()) {
			l.mu.Unlock()
			return true
		}
		if l.changed == nil {
			l.changed = make(chan struct{})
		}
		changed := l.changed
		l.mu.Unlock()
		select {
		case <-changed:
		case <-deadline:
			return false
		}
	}
}

// StdioWire is both directions of one stdio connection, byte for byte:
// the test writes what the client sends mcpx into FromClient and what mcpx
// answers into FromServer.
type StdioWire struct {
	FromClient, FromServer LockedBuffer
}

// lines splits newline-delimited JSON into numbered messages.
func lines(b []byte) (out []struct {
	n   int
	msg []byte
}, err error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		msgs, err := messages(bytes.Clone(sc.Bytes()))
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		for _, m := range msgs {
			out = append(out, struct {
				n   int
				msg []byte
			}{n, m})
		}
	}
	return out, sc.Err()
}

// Sent reads what mcpx wrote on stdout. A response is matched to its
// request by id. Its revision is what the request named in _meta, else what
// initialize negotiated on the connection, else the revision mcpx answers a
// stdio client that declared nothing in (edge.Oldest). A notification's is
// the connection's: what initialize negotiated, else what the requests name.
func (w *StdioWire) Sent() ([]Sent, error) {
	in, err := lines(w.FromClient.Bytes())
	if err != nil {
		return nil, fmt.Errorf("client to mcpx: %w", err)
	}
	out, err := lines(w.FromServer.Bytes())
	if err != nil {
		return nil, fmt.Errorf("mcpx to client: %w", err)
	}
	var fromClient [][]byte
	for _, l := range in {
		fromClient = append(fromClient, l.msg)
	}
	cancelled := cancelledIDs(fromClient)
	reqs := map[string]*request{}
	named := "" // a version some request names in _meta
	for _, l := range in {
		var f Frame
		if json.Unmarshal(l.msg, &f) != nil || !f.IsRequest() {
			continue
		}
		r := &request{method: f.Method, rev: MetaVersion(f.Params)}
		reqs[IDKey(f.ID)] = r
		if named == "" {
			named = r.rev
		}
	}
	initRev := "" // what initialize negotiated
	for _, l := range out {
		var f Frame
		json.Unmarshal(l.msg, &f)
		if r := reqs[IDKey(f.ID)]; f.ID != nil && r != nil && r.method == mcp.MethodInitialize && f.Result != nil {
			initRev = negotiated(f.Result)
			r.rev = initRev
		}
	}
	declared := cmp.Or(initRev, string(edge.Oldest))
	connRev := cmp.Or(initRev, named, string(edge.Oldest))
	var msgs []Sent
	for _, l := range out {
		var f Frame
		json.Unmarshal(l.msg, &f)
		s := Sent{Raw: l.msg, Rev: connRev, Where: fmt.Sprintf("stdout line %d", l.n)}
		if !f.IsRequest() && !f.IsNotification() {
			if r := reqs[IDKey(f.ID)]; f.ID != nil && r != nil {
				s.Method, s.Rev = r.method, cmp.Or(r.rev, declared)
			}
			s.Cancelled = f.ID != nil && cancelled[IDKey(f.ID)]
		}
		msgs = append(msgs, s)
	}
	return msgs, nil
}

// Exchange is one HTTP request to the MCP endpoint and its response. Its
// exported fields are set before [HTTPWire.Exchanges] returns it and do not
// change; the response, still being written while the handler runs, is read
// with [Exchange.Response].
type Exchange struct {
	N         int    // its place among the endpoint's exchanges, from 1
	Method    string // GET, POST, DELETE
	ReqHeader http.Header
	ReqBody   []byte

	mu         sync.Mutex
	status     int
	respHeader http.Header
	body       bytes.Buffer
	// lost is what was written after the client had gone (its request
	// context was done): no client can have read it.
	lost bytes.Buffer
	done chan struct{} // closed when the handler has returned
}

// Response is what has been written so far in answer: the status, the
// header as it was sent, the body a client can have read, and what was
// written after the client had gone (its request context was done), which
// no client can have read.
func (ex *Exchange) Response() (status int, header http.Header, body, lost []byte) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return ex.status, ex.respHeader, bytes.Clone(ex.body.Bytes()), bytes.Clone(ex.lost.Bytes())
}

// Done is closed when the handler has returned.
func (ex *Exchange) Done() <-chan struct{} { return ex.done }

// HTTPWire records every exchange with the endpoint. Its zero value is
// ready to use.
type HTTPWire struct {
	mu        sync.Mutex
	exchanges []*Exchange
}

// Exchanges are the exchanges recorded so far, in the order they began.
func (w *HTTPWire) Exchanges() []*Exchange {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]*Exchange(nil), w.exchanges...)
}

// recorder is an http.ResponseWriter that keeps a copy of what is written.
// Flush reaches the underlying writer through Unwrap.
type recorder struct {
	http.ResponseWriter
	ex  *Exchange
	ctx context.Context // the request's
}

func (r *recorder) snapshot(status int) {
	if r.ex.status == 0 {
		r.ex.status = status
		r.ex.respHeader = r.ResponseWriter.Header().Clone()
	}
}

func (r *recorder) WriteHeader(status int) {
	r.ex.mu.Lock()
	r.snapshot(status)
	r.ex.mu.Unlock()
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(p []byte) (int, error) {
	r.ex.mu.Lock()
	r.snapshot(http.StatusOK)
	if r.ctx.Err() != nil {
		r.ex.lost.Write(p)
	} else {
		r.ex.body.Write(p)
	}
	r.ex.mu.Unlock()
	return r.ResponseWriter.Write(p)
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// closer is the recording handler; Close reaches the wrapped handler's, so
// that streamhttp.ListenAndServe still ends held streams on shutdown.
type closer struct {
	http.Handler
	close func()
}

func (c closer) Close() { c.close() }

// Wrap records every exchange with h. The handler it returns has a Close
// method that calls closeHandler, so that streamhttp.ListenAndServe still
// ends h's held streams on shutdown.
func (w *HTTPWire) Wrap(h http.Handler, closeHandler func()) http.Handler {
	return closer{http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Body != nil {
			var b bytes.Buffer
			b.ReadFrom(r.Body)
			body = b.Bytes()
			r.Body.Close()
		}
		r.Body = readCloser{bytes.NewReader(body)}
		ex := &Exchange{Method: r.Method, ReqHeader: r.Header.Clone(), ReqBody: body, done: make(chan struct{})}
		defer close(ex.done)
		w.mu.Lock()
		ex.N = len(w.exchanges) + 1
		w.exchanges = append(w.exchanges, ex)
		w.mu.Unlock()
		h.ServeHTTP(&recorder{ResponseWriter: rw, ex: ex, ctx: r.Context()}, r)
	}), closeHandler}
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// events reads an SSE body: the data of each event (data lines joined by
// newlines); comments and other fields are skipped.
func events(body []byte) [][]byte {
	var out [][]byte
	var data []string
	flush := func() {
		if data != nil {
			out = append(out, []byte(strings.Join(data, "\n")))
			data = nil
		}
	}
	for _, line := range strings.Split(strings.ReplaceAll(string(body), "\r\n", "\n"), "\n") {
		switch {
		case line == "":
			flush()
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	flush()
	return out
}

// bodyMessages reads the messages of a response body: JSON, or SSE events.
func bodyMessages(contentType string, body []byte) ([][]byte, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	if !strings.HasPrefix(contentType, "text/event-stream") {
		ms, err := messages(body)
		if err != nil {
			return nil, fmt.Errorf("response body (Content-Type %q): %w", contentType, err)
		}
		return ms, nil
	}
	var out [][]byte
	for _, data := range events(body) {
		ms, err := messages(data)
		if err != nil {
			return nil, fmt.Errorf("SSE event: %w", err)
		}
		out = append(out, ms...)
	}
	return out, nil
}

// Sent reads what mcpx answered on every exchange. A POST's response
// messages are matched by id to the messages of its body; a request's
// revision is what it named in _meta, else the revision its session
// negotiated (initialize: the one negotiated now), else the
// MCP-Protocol-Version header, else the revision assumed without one.
func (w *HTTPWire) Sent() ([]Sent, error) {
	exs := w.Exchanges()
	var fromClient [][]byte
	for _, ex := range exs {
		if ms, err := messages(ex.ReqBody); err == nil && ex.Method == http.MethodPost {
			fromClient = append(fromClient, ms...)
		}
	}
	cancelled := cancelledIDs(fromClient)
	sessions := map[string]string{} // Mcp-Session-Id -> negotiated revision
	var msgs []Sent
	for _, ex := range exs {
		status, hdr, body, lost := ex.Response()
		where := fmt.Sprintf("HTTP exchange %d (%s, status %d)", ex.N, ex.Method, status)

		exRev := sessions[ex.ReqHeader.Get("Mcp-Session-Id")]
		if exRev == "" {
			exRev = ex.ReqHeader.Get("MCP-Protocol-Version")
		}
		reqs := map[string]*request{}
		if ex.Method == http.MethodPost {
			in, err := messages(ex.ReqBody)
			if err != nil {
				return nil, fmt.Errorf("%s: request body: %w", where, err)
			}
			for _, m := range in {
				var f Frame
				json.Unmarshal(m, &f)
				r := &request{method: f.Method, rev: MetaVersion(f.Params)}
				if r.rev == "" {
					r.rev = exRev
				}
				if f.IsRequest() {
					reqs[IDKey(f.ID)] = r
				}
				if len(in) == 1 && r.rev != "" {
					exRev = r.rev
				}
			}
		}
		out, err := bodyMessages(hdr.Get("Content-Type"), body)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		nRead := len(out)
		lostMsgs, err := bodyMessages(hdr.Get("Content-Type"), lost)
		if err != nil {
			return nil, fmt.Errorf("%s, after the client had gone: %w", where, err)
		}
		out = append(out, lostMsgs...)
		for i, m := range out {
			var f Frame
			json.Unmarshal(m, &f)
			s := Sent{Raw: m, Rev: exRev, Where: where}
			if i >= nRead {
				s.Where += ", written after the client had gone"
			}
			if !f.IsRequest() && !f.IsNotification() && f.ID != nil {
				s.Cancelled = i < nRead && cancelled[IDKey(f.ID)]
				if r := reqs[IDKey(f.ID)]; r != nil {
					s.Method, s.Rev = r.method, r.rev
					if r.method == mcp.MethodInitialize && f.Result != nil {
						s.Rev = negotiated(f.Result)
						if sid := hdr.Get("Mcp-Session-Id"); sid != "" {
							sessions[sid] = s.Rev
						}
					}
				}
			}
			if s.Rev == "" {
				s.Rev = string(edge.Headerless)
			}
			msgs = append(msgs, s)
		}
	}
	return msgs, nil
}

// inputRequiredOn are the requests an InputRequiredResult may answer (the
// MRTR page's "Supported Requests").
var inputRequiredOn = map[string]bool{mcp.MethodToolsCall: true, mcp.MethodPromptsGet: true, mcp.MethodResourcesRead: true}
