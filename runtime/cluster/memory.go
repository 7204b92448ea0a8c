package cluster

import (
	"context"
	"sync"
	"time"
)

// Hub is an in-memory bus that replicas in one process join: the default
// for one replica ([Local]), and how tests run several.
type Hub struct {
	mu    sync.Mutex
	buses map[string]*memBus
	subs  map[string]map[*memSub]bool // by topic
}

// NewHub returns an empty hub.
func NewHub() *Hub {
	return &Hub{buses: map[string]*memBus{}, subs: map[string]map[*memSub]bool{}}
}

// Local is a bus of one replica, with a fresh id.
func Local() Bus { return NewHub().Join(NewID(), 0) }

// Join adds the replica id to the hub; timeout bounds its requests (0:
// DefaultTimeout).
func (h *Hub) Join(id string, timeout time.Duration) Bus {
	b := &memBus{hub: h, id: id, timeout: timeoutOf(timeout), handlers: map[string]Handler{}}
	h.mu.Lock()
	h.buses[id] = b
	h.mu.Unlock()
	return b
}

type memBus struct {
	hub     *Hub
	id      string
	timeout time.Duration

	mu       sync.Mutex
	handlers map[string]Handler
	closed   bool
}

type memSub struct {
	ch  chan Event
	bus *memBus
}

func (b *memBus) ID() string { return b.id }

func (b *memBus) Publish(ctx context.Context, topic string, data []byte) error {
	b.hub.mu.Lock()
	defer b.hub.mu.Unlock()
	ev := Event{From: b.id, Data: append([]byte(nil), data...)}
	for s := range b.hub.subs[topic] {
		select {
		case s.ch <- ev:
		default: // a full subscriber misses it
		}
	}
	return nil
}

func (b *memBus) Subscribe(topic string) (<-chan Event, func()) {
	s := &memSub{ch: make(chan Event, subBuffer), bus: b}
	h := b.hub
	h.mu.Lock()
	if h.subs[topic] == nil {
		h.subs[topic] = map[*memSub]bool{}
	}
	h.subs[topic][s] = true
	h.mu.Unlock()
	var once sync.Once
	return s.ch, func() {
		once.Do(func() {
			h.mu.Lock()
			delete(h.subs[topic], s)
			h.mu.Unlock()
		})
	}
}

func (b *memBus) Handle(name string, h Handler) {
	b.mu.Lock()
	b.handlers[name] = h
	b.mu.Unlock()
}

func (b *memBus) Request(ctx context.Context, replica, name string, data []byte) ([]byte, error) {
	b.hub.mu.Lock()
	to := b.hub.buses[replica]
	b.hub.mu.Unlock()
	if to == nil {
		return nil, gone(replica)
	}
	to.mu.Lock()
	h, closed := to.handlers[name], to.closed
	to.mu.Unlock()
	if h == nil || closed {
		return nil, gone(replica)
	}
	// The handler gets a context of its own, as over Redis: nothing of
	// the asker's (its principal) crosses but what data carries.
	hctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	type reply struct {
		b   []byte
		err error
	}
	out := make(chan reply, 1)
	go func() {
		r, err := h(hctx, b.id, append([]byte(nil), data...))
		out <- reply{r, err}
	}()
	select {
	case r := <-out:
		if r.err != nil {
			return nil, &RemoteError{Replica: replica, Msg: r.err.Error()}
		}
		return r.b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-hctx.Done():
		return nil, gone(replica)
	}
}

// Close leaves the hub: requests to it are ErrGone, its subscriptions end.
func (b *memBus) Close() error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	h := b.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.buses, b.id)
	for _, set := range h.subs {
		for s := range set {
			if s.bus == b {
				delete(set, s)
			}
		}
	}
	return nil
}
