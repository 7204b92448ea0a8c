package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpx-dev/mcpx/generated/convert"
	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// Questions to a legacy client: a server-to-client JSON-RPC request
// (sampling/createMessage, elicitation/create, roots/list) sent on the
// stream of the client request it belongs to (the call's SSE response
// over Streamable HTTP, stdout on stdio) with an id of mcpx's own, and the
// client's response, which the transport hands to Handle like any other
// message, matched back by that id within the same session only.

// DefaultAskTimeout is how long a question waits for the client's answer
// when Edge.AskTimeout is 0. A person may be answering; the call that
// asked is bounded by its own deadline too (an upstream's Timeout).
const DefaultAskTimeout = 10 * time.Minute

// MaxPendingAsks is how many questions one session may have waiting for
// answers at once; one more fails at once with -32603 and is not sent.
// It bounds what a client that never answers can make mcpx hold.
const MaxPendingAsks = 16

func (e *Edge) askTimeout() time.Duration {
	if e.AskTimeout > 0 {
		return e.AskTimeout
	}
	return DefaultAskTimeout
}

// asker is server.Asker for one call.
type asker struct {
	e *Edge
	c *call
}

// Ask puts method to the client of a.c, in its revision, and waits for
// the answer, upgraded to the hub type of the method's result.
func (a *asker) Ask(ctx context.Context, method string, params any) (any, error) {
	c, e := a.c, a.e
	if IsModern(c.rev) {
		// 2026-07-28 has no server-to-client requests (MRTR page): its
		// questions go as input_required, which this path does not make.
		return nil, jsonrpc.Errorf(jsonrpc.InternalError, nil, "%s cannot be sent to a %s client as a request; mcpx does not relay it as input_required yet", method, c.rev)
	}
	m, params, who, err := a.fit(method, params)
	if err != nil {
		return nil, err
	}
	if c.sink == nil {
		return nil, jsonrpc.Errorf(jsonrpc.InternalError, nil, "the client (%s) cannot be asked %s: its request has no stream a request can go on (over HTTP it must accept text/event-stream)", who, method)
	}
	if u, ok := params.(*mcp.ElicitRequestParams); ok {
		if p, ok := u.Value.(*mcp.ElicitRequestURLParams); ok && p.ElicitationID == "" && hasField(revision.Lookup(c.rev), "ElicitRequestURLParams", "elicitationId") {
			// 2025-11-25 requires one; an upstream of another revision
			// may not have given one.
			cp := *p
			cp.ElicitationID = "mcpx-" + strconv.FormatUint(e.nextElicitation(), 10)
			params = &mcp.ElicitRequestParams{Value: &cp}
		}
	}
	wire, err := a.downgrade(method, who, params)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(wire)
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.InvalidParams, nil, "%s cannot be put to the client (%s) in protocol revision %s: %v", method, who, c.rev, err)
	}

	if !c.asks.begin() {
		return nil, jsonrpc.Errorf(jsonrpc.InternalError, nil, "the client's (%s) request that %s belonged to has ended", who, method)
	}
	defer c.asks.end()
	id, answer, err := c.sess.expect()
	if err != nil {
		return nil, err
	}
	defer c.sess.forget(id)
	c.sink(jsonrpc.Request(id, method, raw))

	t := time.NewTimer(e.askTimeout())
	defer t.Stop()
	var resp *jsonrpc.Message
	select {
	case resp = <-answer:
	case <-ctx.Done():
		c.sink(cancelled(id, "the request that asked ended"))
		return nil, ctx.Err()
	case <-t.C:
		c.sink(cancelled(id, "no answer in time"))
		return nil, jsonrpc.Errorf(jsonrpc.InternalError, nil, "the client (%s) did not answer %s within %s", who, method, e.askTimeout())
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	res, err := decodeParams(c.rev, m.Result, resp.Result)
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.InternalError, nil, "the client's (%s) answer to %s does not decode in %s: %v", who, method, c.rev, err)
	}
	return res, nil
}

// fit is the question as a.c's legacy client may be asked it: m its
// method in the client's revision, fitted its params (see mayAsk), who the
// client for messages; or the refusal Ask and check both give: a method
// the revision lacks (-32601), a capability not declared, content the
// revision cannot carry.
func (a *asker) fit(method string, params any) (m revision.Method, fitted any, who string, err error) {
	c := a.c
	c.sess.mu.Lock()
	caps, client := c.sess.caps, c.sess.client
	c.sess.mu.Unlock()
	who = clientName(client, c.rev)
	m, ok := revision.Lookup(c.rev).Method(method)
	if !ok || !m.FromServer || m.Notification {
		return m, nil, who, jsonrpc.Errorf(jsonrpc.MethodNotFound, nil, "the client (%s) speaks %s, which has no %s", who, c.rev, method)
	}
	fitted, err = mayAsk(revision.Lookup(c.rev), &caps, method, params, who)
	return m, fitted, who, err
}

// downgrade is the question's params in the client's revision, or -32602
// saying they cannot be put there.
func (a *asker) downgrade(method, who string, params any) (any, error) {
	wire, err := convert.Downgrade(a.c.rev, params)
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.InvalidParams, nil, "%s cannot be put to the client (%s) in protocol revision %s: %v", method, who, a.c.rev, err)
	}
	return wire, nil
}

// mayAsk refuses a question the client did not declare it can take, with
// the code its page gives: roots -32601 (roots page, "Client does not
// support roots"); an elicitation mode not declared -32602 (2025-11-25
// elicitation page); tool-enabled sampling without sampling.tools -32602
// (the client MUST return an error; invalid params is the one that fits).
// A capability missing altogether is the method not existing for that
// client: -32601. Sampling content the client's revision cannot carry
// (tool blocks, audio; samplingCarried) is -32602. A form the client's
// revision (tab) cannot carry as
// written is fitted to it (fitForm), or refused -32602; the params to
// send are returned.
func mayAsk(tab *revision.Table, caps *mcp.ClientCapabilities, method string, params any, who string) (any, error) {
	missing := func(what string) error {
		return jsonrpc.Errorf(jsonrpc.MethodNotFound, nil, "the client (%s) did not declare the %s capability", who, what)
	}
	switch method {
	case mcp.MethodRootsList:
		if len(caps.Roots) == 0 {
			return nil, missing("roots")
		}
	case mcp.MethodSamplingCreateMessage:
		if caps.Sampling == nil {
			return nil, missing("sampling")
		}
		if p, ok := params.(*mcp.CreateMessageRequestParams); ok && (len(p.Tools) > 0 || p.ToolChoice != nil) && len(caps.Sampling.Tools) == 0 {
			return nil, jsonrpc.Errorf(jsonrpc.InvalidParams, nil, "the client (%s) did not declare sampling.tools; a sampling request with tools cannot be sent to it", who)
		}
		if p, ok := params.(*mcp.CreateMessageRequestParams); ok {
			if err := samplingCarried(tab, p, who); err != nil {
				return nil, err
			}
		}
	case mcp.MethodElicitationCreate:
		el := caps.Elicitation
		if el == nil {
			return nil, missing("elicitation")
		}
		u, _ := params.(*mcp.ElicitRequestParams)
		if u == nil {
			return nil, jsonrpc.Errorf(jsonrpc.InvalidParams, nil, "elicitation/create without params")
		}
		// An empty elicitation object declares form mode only.
		form := len(el.Form) > 0 || (len(el.Form) == 0 && len(el.URL) == 0)
		switch p := u.Value.(type) {
		case *mcp.ElicitRequestURLParams:
			if len(el.URL) == 0 {
				return nil, jsonrpc.Errorf(jsonrpc.InvalidParams, nil, "the client (%s) did not declare elicitation.url; a URL-mode elicitation cannot be sent to it", who)
			}
		case *mcp.ElicitRequestFormParams:
			if !form {
				return nil, jsonrpc.Errorf(jsonrpc.InvalidParams, nil, "the client (%s) did not declare elicitation.form; a form-mode elicitation cannot be sent to it", who)
			}
			schema, err := fitForm(tab, p.RequestedSchema, who)
			if err != nil {
				return nil, err
			}
			if !bytes.Equal(schema, p.RequestedSchema) {
				cp := *p
				cp.RequestedSchema = schema
				return &mcp.ElicitRequestParams{Value: &cp}, nil
			}
		default:
			if !form {
				return nil, jsonrpc.Errorf(jsonrpc.InvalidParams, nil, "the client (%s) did not declare elicitation.form; a form-mode elicitation cannot be sent to it", who)
			}
		}
	case mcp.MethodPing:
	default:
		return nil, jsonrpc.Errorf(jsonrpc.MethodNotFound, nil, "mcpx does not relay %s to clients", method)
	}
	return params, nil
}

func clientName(info mcp.Implementation, rev mcp.Revision) string {
	name := info.Name
	if name == "" {
		name = "unnamed"
	}
	if info.Version != "" {
		name += " " + info.Version
	}
	return name + ", " + string(rev)
}

func cancelled(id json.RawMessage, reason string) *jsonrpc.Message {
	raw, _ := json.Marshal(map[string]any{"requestId": id, "reason": reason})
	return jsonrpc.Notification(mcp.MethodNotificationsCancelled, raw)
}

var errTooManyAsks = jsonrpc.Errorf(jsonrpc.InternalError, nil, "too many questions are waiting for this client's answers (limit %d)", MaxPendingAsks)

// expect registers a question about to be sent: its fresh id (a string
// no client request id of mcpx's own could be confused with) and where
// the answer will arrive.
func (s *Session) expect() (json.RawMessage, chan *jsonrpc.Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.asks) >= MaxPendingAsks {
		return nil, nil, errTooManyAsks
	}
	if s.asks == nil {
		s.asks = map[string]chan *jsonrpc.Message{}
	}
	s.askSeq++
	id := json.RawMessage(strconv.Quote("mcpx-q-" + strconv.FormatUint(s.askSeq, 10)))
	ch := make(chan *jsonrpc.Message, 1)
	s.asks[string(id)] = ch
	return id, ch, nil
}

// forget drops a question that was answered, cancelled or timed out.
func (s *Session) forget(id json.RawMessage) {
	s.mu.Lock()
	delete(s.asks, string(id))
	s.mu.Unlock()
}

// answered hands a client's response to the question that waits for it.
// One nobody waits for (an unknown id, a second answer, an answer after
// the question was given up) is logged and otherwise ignored: the
// transport answers 202 all the same, as for any response it accepts.
func (e *Edge) answered(sess *Session, m *jsonrpc.Message) {
	sess.mu.Lock()
	ch := sess.asks[string(m.ID)]
	delete(sess.asks, string(m.ID))
	sess.mu.Unlock()
	if ch == nil {
		e.log().Info("a client's response answers no question mcpx is waiting for; ignored", "id", jsonrpc.Clip(string(m.ID)))
		return
	}
	ch <- m // buffered, and only the one taken from the map sends
}

// elicitationSeq numbers the elicitationIds mcpx makes up.
var elicitationSeq atomic.Uint64

func (e *Edge) nextElicitation() uint64 { return elicitationSeq.Add(1) }

// askSettle bounds how long a cancelled call waits for its questions to
// end (each sends notifications/cancelled as it does, see Ask): they see
// the same cancelled context, so this is a bound, not a delay.
const askSettle = time.Second

// askCount counts a call's questions in flight: a question asked in a
// goroutine of its own (an upstream's, relayed) may still be sending its
// notifications/cancelled on the call's stream when the call itself
// returns; the transport ends the stream with the call.
type askCount struct {
	mu    sync.Mutex
	n     int
	ended bool
	idle  chan struct{} // closed when n drops to 0 after settle began
}

// begin counts one more question, or reports false once the call settled.
func (a *askCount) begin() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ended {
		return false
	}
	a.n++
	return true
}

func (a *askCount) end() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.n--
	if a.n == 0 && a.idle != nil {
		close(a.idle)
		a.idle = nil
	}
}

// settleAsks waits, at most askSettle, for the questions of the cancelled
// call c to have ended (their notifications/cancelled given to its sink);
// none begins after.
func (c *call) settleAsks() {
	a := &c.asks
	a.mu.Lock()
	a.ended = true
	if a.n == 0 {
		a.mu.Unlock()
		return
	}
	idle := make(chan struct{})
	a.idle = idle
	a.mu.Unlock()
	t := time.NewTimer(askSettle)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	}
}
