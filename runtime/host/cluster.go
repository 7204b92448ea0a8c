package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/auth"
	"github.com/mcpx-dev/mcpx/runtime/cluster"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/tasks"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
)

// Replicas (issue 19): with Config.Cluster shared (Redis), the HTTP
// endpoint's legacy sessions live in the cluster's records, list changes
// cross the bus, and a parked call's retry is relayed to its replica.

const (
	topicChanges = "changes"
	topicTasks   = "tasks.changed" // a task's record, as its runner changed it
	relayName    = "edge.relay"
)

// withCluster wires e and opt to c (nil, or not shared: nothing) until
// ctx ends.
func withCluster(ctx context.Context, c *cluster.Cluster, e *edge.Edge, opt *streamhttp.Options, log *slog.Logger) {
	if c == nil || !c.Shared {
		return
	}
	opt.Shared = &streamhttp.Shared{Records: c.Records, Bus: c.Bus}
	e.Peers = newPeers(ctx, c.Bus, log)
	c.Bus.Handle(relayName, func(ctx context.Context, _ string, data []byte) ([]byte, error) {
		return serveRelay(ctx, c.Bus, log, data, e.ServeRelayed)
	})
}

// serveRelay answers a relayed request (data, a relayed) with serve (the
// edge's ServeRelayed), its notifications published on the request's
// topic when it has one.
func serveRelay(ctx context.Context, bus cluster.Bus, log *slog.Logger, data []byte, serve func(context.Context, []byte, func([]byte)) ([]byte, int, error)) ([]byte, error) {
	var r relayed
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("a relayed request that does not decode: %v", err)
	}
	if r.Principal != nil {
		ctx = auth.With(ctx, r.Principal)
	}
	if r.Topic == "" { // the asker's client has no stream for notifications
		resp, st, err := serve(ctx, r.Request, nil)
		if err != nil || !r.Status {
			return resp, err // an asker from before the status crossed reads the response alone
		}
		return json.Marshal(relayAnswer{Response: resp, Status: st})
	}
	pub := newNotePublisher(bus, r.Topic, log)
	resp, st, err := serve(ctx, r.Request, pub.add)
	sent := pub.close()
	if err != nil {
		return nil, err
	}
	return json.Marshal(relayAnswer{Response: resp, Notes: sent, Status: st})
}

// relayed is a request relayed to the replica that must serve it, with
// the principal the first replica authenticated (the holder checks the
// state's owner against it, as for a request of its own), and the topic
// its notifications go on, when the client has a stream for them. Status
// asks for a relayAnswer with the HTTP status even without a topic (a
// replica from before the status crossed leaves it out, and is answered
// the response alone).
type relayed struct {
	Principal *auth.Principal `json:"principal,omitempty"`
	Request   json.RawMessage `json:"request"`
	Topic     string          `json:"topic,omitempty"`
	Status    bool            `json:"status,omitempty"`
}

// relayAnswer is the answer to a relayed request that had a topic: the
// response, and how many notifications were published on the topic
// before it (numbered from 0), for the asker to wait for those it has not
// heard yet, and the HTTP status the holder gave the response (a client
// of its own would have had it). A request without a topic or status is
// answered the response alone, as a replica before notifications crossed
// answers every one.
type relayAnswer struct {
	Response json.RawMessage `json:"response"`
	Notes    int             `json:"notes"`
	Status   int             `json:"status,omitempty"`
}

// relayNote is one notification of a relayed request, on its topic.
type relayNote struct {
	Seq int             `json:"s"`
	Msg json.RawMessage `json:"m"`
}

const (
	relayTopicPrefix = "edge.relay." // and a random nonce, per relayed request
	// noteQueue is how many of a relayed request's notifications may wait
	// to be published; one more is dropped.
	noteQueue = 128
	// notePublish bounds one notification's publishing.
	notePublish = time.Second
	// noteDrain bounds how long the answer waits for the notifications
	// still queued; those not published by then are dropped.
	noteDrain = 2 * time.Second
	// noteWait bounds how long the asker waits, once it has the answer,
	// for the notifications published before it that it has not heard.
	noteWait = time.Second
)

// notePublisher publishes a relayed request's notifications on its topic,
// in order, from a goroutine of its own: the call never waits for the
// bus. Each published is numbered from 0, a number used only once the bus
// took the notification, so the asker hears numbers without gaps but for
// a notification lost on the way.
type notePublisher struct {
	bus   cluster.Bus
	topic string
	log   *slog.Logger
	queue chan []byte
	ctx   context.Context
	stop  context.CancelFunc
	done  chan struct{}
	sent  int // the goroutine's; read once done is closed

	mu     sync.Mutex
	closed bool
}

func newNotePublisher(bus cluster.Bus, topic string, log *slog.Logger) *notePublisher {
	ctx, stop := context.WithCancel(context.Background())
	p := &notePublisher{bus: bus, topic: topic, log: log, queue: make(chan []byte, noteQueue), ctx: ctx, stop: stop, done: make(chan struct{})}
	go p.run()
	return p
}

// add queues one notification; it never waits. One that finds the queue
// full, or comes after the answer, is dropped.
func (p *notePublisher) add(msg []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		p.log.Debug("a relayed request's notification after its answer was dropped", "topic", p.topic)
		return
	}
	select {
	case p.queue <- msg:
	default:
		p.log.Debug("a relayed request's notification was dropped: too many wait to be published", "topic", p.topic)
	}
}

func (p *notePublisher) run() {
	defer close(p.done)
	for msg := range p.queue {
		if p.ctx.Err() != nil {
			p.log.Debug("a relayed request's notification was not published in time; dropped", "topic", p.topic)
			continue
		}
		data, err := json.Marshal(relayNote{Seq: p.sent, Msg: msg})
		if err == nil {
			ctx, cancel := context.WithTimeout(p.ctx, notePublish)
			err = p.bus.Publish(ctx, p.topic, data)
			cancel()
		}
		if err != nil {
			p.log.Debug("a relayed request's notification could not be published; dropped", "topic", p.topic, "err", err)
			continue
		}
		p.sent++
	}
}

// close takes no more notifications, waits (at most noteDrain) for those
// queued to be published, and returns how many were.
func (p *notePublisher) close() int {
	p.mu.Lock()
	p.closed = true
	close(p.queue)
	p.mu.Unlock()
	t := time.NewTimer(noteDrain)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		p.stop()
		<-p.done
	}
	p.stop()
	return p.sent
}

// peers is edge.Peers (and edge.TaskPeers) over a cluster bus.
type peers struct {
	bus     cluster.Bus
	log     *slog.Logger
	changes chan string // heard from the others
	out     chan string // to tell the others
	// Task changes (edge.TaskPeers), the same way.
	tasks    chan *tasks.Record
	outTasks chan *tasks.Record
}

func newPeers(ctx context.Context, bus cluster.Bus, log *slog.Logger) *peers {
	p := &peers{bus: bus, log: log, changes: make(chan string, 64), out: make(chan string, 64),
		tasks: make(chan *tasks.Record, 256), outTasks: make(chan *tasks.Record, 256)}
	events, stop := bus.Subscribe(topicChanges)
	taskEvents, stopTasks := bus.Subscribe(topicTasks)
	go func() {
		defer stop()
		defer stopTasks()
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-events:
				if ev.From == bus.ID() {
					continue // this replica's own: its clients were told
				}
				select {
				case p.changes <- string(ev.Data):
				default: // a burst: the ones waiting re-list anyway
				}
			case m := <-p.out:
				if err := bus.Publish(ctx, topicChanges, []byte(m)); err != nil {
					log.Warn("a list change was not told to the other replicas", "method", m, "err", err)
				}
			case ev := <-taskEvents:
				var rec tasks.Record
				if ev.From == bus.ID() || json.Unmarshal(ev.Data, &rec) != nil || rec.ID == "" {
					continue // its own (told here already), or not a record
				}
				select {
				case p.tasks <- &rec:
				default:
					log.Warn("a task change heard from another replica was dropped: too many are waiting", "task", rec.ID)
				}
			case rec := <-p.outTasks:
				data, err := json.Marshal(rec)
				if err == nil {
					err = bus.Publish(ctx, topicTasks, data)
				}
				if err != nil {
					log.Warn("a task change was not told to the other replicas", "task", rec.ID, "err", err)
				}
			}
		}
	}()
	return p
}

func (p *peers) PublishChange(method string) {
	select {
	case p.out <- method:
	default:
		p.log.Warn("a list change was not told to the other replicas: too many are waiting", "method", method)
	}
}

func (p *peers) PeerChanges() <-chan string { return p.changes }

func (p *peers) PublishTask(rec *tasks.Record) {
	select {
	case p.outTasks <- rec:
	default:
		p.log.Warn("a task change was not told to the other replicas: too many are waiting", "task", rec.ID)
	}
}

func (p *peers) PeerTasks() <-chan *tasks.Record { return p.tasks }

// Relay sends req to replica; with notify, the notifications it sends
// come back on a topic of the relay's own (a random nonce), subscribed
// before the request is sent (a Redis subscription is confirmed when
// Subscribe returns) and unsubscribed when Relay returns.
func (p *peers) Relay(ctx context.Context, replica string, req []byte, notify func([]byte)) ([]byte, int, error) {
	r := relayed{Principal: auth.From(ctx), Request: req, Status: true}
	var events <-chan cluster.Event
	if notify != nil {
		r.Topic = relayTopicPrefix + nonce()
		ev, stop := p.bus.Subscribe(r.Topic)
		defer stop()
		events = ev
	}
	data, err := json.Marshal(r)
	if err != nil {
		return nil, 0, err
	}
	if notify == nil {
		out, err := p.request(ctx, replica, data)
		if err != nil {
			return nil, 0, err
		}
		var ans relayAnswer
		if json.Unmarshal(out, &ans) != nil || len(ans.Response) == 0 {
			return out, 0, nil // a replica that answers the response alone
		}
		return ans.Response, ans.Status, nil
	}
	type answer struct {
		out []byte
		err error
	}
	answered := make(chan answer, 1)
	go func() {
		out, err := p.request(ctx, replica, data)
		answered <- answer{out, err}
	}()
	n := &noteOrder{from: replica, notify: notify, pending: map[int]json.RawMessage{}}
	for {
		select {
		case ev := <-events:
			n.heard(ev)
		case a := <-answered:
			if a.err != nil {
				return nil, 0, a.err
			}
			var ans relayAnswer
			if json.Unmarshal(a.out, &ans) != nil || len(ans.Response) == 0 {
				return a.out, 0, nil // a replica that sends no notifications back
			}
			// Those published before the answer are on their way, or
			// here already: over Redis, the one connection hears them
			// before it; waited for a little, in case.
			if n.next < ans.Notes {
				t := time.NewTimer(noteWait)
			wait:
				for n.next < ans.Notes {
					select {
					case ev := <-events:
						n.heard(ev)
					case <-t.C:
						break wait
					}
				}
				t.Stop()
			}
			n.flush(ans.Notes)
			return ans.Response, ans.Status, nil
		}
	}
}

func (p *peers) request(ctx context.Context, replica string, data []byte) ([]byte, error) {
	out, err := p.bus.Request(ctx, replica, relayName, data)
	if errors.Is(err, cluster.ErrGone) {
		return nil, fmt.Errorf("%w: %v", edge.ErrPeerGone, err)
	}
	return out, err
}

// noteOrder passes a relay's notifications on in their order: each as
// soon as those before it were, the rest held until then.
type noteOrder struct {
	from    string
	notify  func([]byte)
	next    int
	pending map[int]json.RawMessage
}

func (n *noteOrder) heard(ev cluster.Event) {
	var note relayNote
	if ev.From != n.from || json.Unmarshal(ev.Data, &note) != nil || note.Seq < n.next || len(n.pending) >= noteQueue {
		return // not the replica's, heard already, or too far ahead
	}
	n.pending[note.Seq] = note.Msg
	for {
		msg, ok := n.pending[n.next]
		if !ok {
			return
		}
		delete(n.pending, n.next)
		n.next++
		n.notify(msg)
	}
}

// flush passes on, in order, those held that were published before the
// answer (count of them), past any lost on the way.
func (n *noteOrder) flush(count int) {
	for ; n.next < count; n.next++ {
		if msg, ok := n.pending[n.next]; ok {
			n.notify(msg)
		}
	}
}

// nonce is a fresh random relay topic's name.
func nonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
