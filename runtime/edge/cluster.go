package edge

import (
	"cmp"
	"context"
	"errors"
	"net/http"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// Peers are the other replicas behind the same load balancer (package
// cluster, wired by package host): list changes cross to them, and a
// request another replica must serve is relayed to it.
type Peers interface {
	// PublishChange tells the other replicas of a list change this one
	// heard from its upstreams; it must not wait (a sink's rule).
	PublishChange(method string)
	// PeerChanges are the list changes the other replicas heard.
	PeerChanges() <-chan string
	// Relay sends req (a JSON-RPC request, as the client sent it) to
	// replica, which serves it with ServeRelayed, and returns its answer
	// and the HTTP status the replica gave it (0 from a replica that does
	// not say: one from before the status crossed). notify, when not nil, is given each notification (one encoded
	// JSON-RPC message) the replica's serving sends, in the order it sent
	// them, all before Relay returns; nil when the client's transport has
	// no stream for them, and the replica then serves req without one.
	// ctx ending cancels the request on the replica.
	Relay(ctx context.Context, replica string, req []byte, notify func([]byte)) (resp []byte, status int, err error)
}

// ErrPeerGone is what Relay's error wraps when the replica is not there.
var ErrPeerGone = errors.New("the replica is gone")

// publishChange passes a list change the upstreams made here on to the
// other replicas.
func (e *Edge) publishChange(method string) {
	if e.Peers != nil {
		e.Peers.PublishChange(method)
	}
}

// watchPeers tells this replica's clients of the list changes other
// replicas heard, until ctx ends: the namespace reads the list again
// first (a Refresher), so that a client re-listing at once sees it, and
// the edge's list cache follows the namespace's version.
func (e *Edge) watchPeers(ctx context.Context) {
	if e.Peers == nil {
		return
	}
	go e.watchPeerTasks(ctx) // and their task changes (clustertasks.go)
	ch := e.Peers.PeerChanges()
	for {
		select {
		case <-ctx.Done():
			return
		case method, ok := <-ch:
			if !ok {
				return
			}
			if r, ok := e.Server.NS.(server.Refresher); ok {
				if err := r.Refresh(ctx, method); err != nil {
					e.log().Info("a list change on another replica: the list could not be read again here", "method", method, "err", err)
				}
			}
			e.lists.clear()
			e.broadcast(method)
		}
	}
}

// relayElsewhere answers a request the namespace said another replica
// must serve (err is a *server.Elsewhere) with that replica's answer,
// the notifications it sent meanwhile on sink first (nil: none); ok is
// false for any other error.
func (e *Edge) relayElsewhere(ctx context.Context, m *jsonrpc.Message, rev mcp.Revision, err error, sink Sink) (_ Reply, ok bool) {
	var el *server.Elsewhere
	if !errors.As(err, &el) {
		return Reply{}, false
	}
	if e.Peers == nil {
		return Reply{}, false
	}
	req, encErr := jsonrpc.Encode(m)
	if encErr != nil {
		return Reply{}, false
	}
	var notify func([]byte)
	if sink != nil {
		notify = func(raw []byte) {
			// Only notifications: a 2026-07-28 request's stream carries
			// no request of the server's (the MRTR page).
			msgs, errs, _ := jsonrpc.Decode(raw, false)
			if len(msgs) != 1 || errs[0] != nil || msgs[0] == nil || !msgs[0].IsNotification() {
				e.log().Debug("a relayed request's notification from another replica is not one; dropped", "replica", el.Replica)
				return
			}
			sink(msgs[0])
		}
	}
	raw, st, rerr := e.Peers.Relay(ctx, el.Replica, req, notify)
	if rerr != nil {
		return Reply{Msg: jsonrpc.ErrorResponse(m.ID, relayError(el.Replica, rerr)), Status: http.StatusOK}, true
	}
	msgs, errs, _ := jsonrpc.Decode(raw, false)
	if len(msgs) != 1 || errs[0] != nil || msgs[0] == nil {
		return Reply{Msg: jsonrpc.ErrorResponse(m.ID, &jsonrpc.Error{Code: jsonrpc.InternalError, Message: "replica " + el.Replica + " answered the relayed request with no JSON-RPC response"}), Status: http.StatusOK}, true
	}
	if st == 0 { // a holder that does not say: read from the answer, without the error's causes
		st = http.StatusOK
		if je := msgs[0].Error; je != nil {
			st = status(rev, je, nil)
		}
	}
	return Reply{Msg: msgs[0], Status: st}, true
}

func relayError(replica string, err error) *jsonrpc.Error {
	if errors.Is(err, ErrPeerGone) {
		// The call parked there is lost with it: the client starts over.
		return &jsonrpc.Error{Code: jsonrpc.InvalidParams, Message: "requestState names a call parked on replica " + replica + ", which is gone (" + err.Error() + "); send the request again without requestState"}
	}
	return &jsonrpc.Error{Code: jsonrpc.InternalError, Message: "the request could not be relayed to replica " + replica + ", which holds its parked call: " + err.Error()}
}

// ServeRelayed serves a request another replica relayed here (Peers.Relay)
// and returns the response to send back and its HTTP status (the one a
// client of this replica would get: a 503 for a store unavailable here is
// the asker's client's too): a 2026-07-28 request, served on
// its own, ctx carrying the client's principal. notify, when not nil, is
// given each notification the request sends (one encoded JSON-RPC
// message), as a stream of the client's here would be: the same
// messages, filtered the same way (progress for the request's token, logs
// at its level); it must not wait (a sink's rule). nil: the request has
// no stream, as when the client's has none.
func (e *Edge) ServeRelayed(ctx context.Context, req []byte, notify func([]byte)) ([]byte, int, error) {
	msgs, errs, _ := jsonrpc.Decode(req, false)
	if len(msgs) != 1 || errs[0] != nil || msgs[0] == nil || !msgs[0].IsRequest() {
		return nil, 0, errors.New("a relayed message is one JSON-RPC request")
	}
	m := msgs[0]
	cl := Classify(m, Seen{})
	if !cl.Modern() {
		return nil, 0, errors.New("only 2026-07-28 requests are relayed")
	}
	var sink Sink
	if notify != nil {
		sink = func(n *jsonrpc.Message) {
			raw, err := jsonrpc.Encode(n)
			if err != nil {
				e.log().Debug("a relayed request's notification does not encode; dropped", "method", n.Method, "err", err)
				return
			}
			notify(raw)
		}
	}
	rep := e.Handle(ctx, new(Session), In{Msg: m, Class: cl}, sink)
	if rep.Msg == nil {
		return nil, 0, errors.New("the relayed request was cancelled")
	}
	raw, err := jsonrpc.Encode(rep.Msg)
	return raw, cmp.Or(rep.Status, http.StatusOK), err
}

// clear drops every cached list (another replica's list changed).
func (c *listCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = nil
}
