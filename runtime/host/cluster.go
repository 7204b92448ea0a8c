package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

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
		var r relayed
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("a relayed request that does not decode: %v", err)
		}
		if r.Principal != nil {
			ctx = auth.With(ctx, r.Principal)
		}
		return e.ServeRelayed(ctx, r.Request)
	})
}

// relayed is a request relayed to the replica that must serve it, with
// the principal the first replica authenticated (the holder checks the
// state's owner against it, as for a request of its own).
type relayed struct {
	Principal *auth.Principal `json:"principal,omitempty"`
	Request   json.RawMessage `json:"request"`
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

func (p *peers) Relay(ctx context.Context, replica string, req []byte) ([]byte, error) {
	data, err := json.Marshal(relayed{Principal: auth.From(ctx), Request: req})
	if err != nil {
		return nil, err
	}
	out, err := p.bus.Request(ctx, replica, relayName, data)
	if errors.Is(err, cluster.ErrGone) {
		return nil, fmt.Errorf("%w: %v", edge.ErrPeerGone, err)
	}
	return out, err
}
