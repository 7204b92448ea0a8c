package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Options configure a Redis bus.
type Options struct {
	// Timeout bounds a request to another replica; 0 is DefaultTimeout.
	Timeout time.Duration
	// AckTimeout is how soon the replica must say it has the request (it
	// does before handling it); 0 is DefaultAckTimeout. A replica that
	// does not is taken to be gone.
	AckTimeout time.Duration
	// Log receives the bus's own log lines; nil is slog.Default().
	Log *slog.Logger
}

// The Redis channels: events on "mcpx:ev:<topic>", requests to a replica
// on "mcpx:rq:<id>", their answers on "mcpx:rp:<id>" (the asker's).
const (
	evPrefix = "mcpx:ev:"
	rqPrefix = "mcpx:rq:"
	rpPrefix = "mcpx:rp:"
)

// envelope is a request or its answer on the wire.
type envelope struct {
	From string `json:"f"`
	Seq  uint64 `json:"s"`
	Name string `json:"n,omitempty"` // a request's handler
	Data []byte `json:"d,omitempty"`
	Err  string `json:"e,omitempty"` // an answer's handler error
	Ack  bool   `json:"a,omitempty"` // the replica has the request; its answer follows
	// Cancel: the asker no longer waits for request Seq (its ctx ended);
	// the handler's ctx ends.
	Cancel bool `json:"c,omitempty"`
}

// served names a request being served: its asker and its Seq there.
type served struct {
	from string
	seq  uint64
}

// DefaultAckTimeout is how soon a replica must acknowledge a request when
// Options.AckTimeout is 0.
const DefaultAckTimeout = 2 * time.Second

// redisBus is the Bus over Redis pub/sub: one subscriber connection per
// replica (go-redis reconnects it and subscribes again after an outage).
type redisBus struct {
	rdb     *redis.Client
	id      string
	timeout time.Duration
	ack     time.Duration
	log     *slog.Logger
	ps      *redis.PubSub
	done    chan struct{}

	mu       sync.Mutex
	subs     map[string]map[*redisSub]bool // by topic
	handlers map[string]Handler
	waiting  map[uint64]chan envelope // requests sent, by Seq
	serving  map[served]context.CancelFunc
	// confirming are the Subscribes waiting for Redis to confirm their
	// channel, closed when it does.
	confirming map[string][]chan struct{}
	seq        atomic.Uint64
	// topicLocks order the SUBSCRIBE and UNSUBSCRIBE of one topic (by a
	// hash of its name) as their decisions were made: without, a last
	// subscriber's UNSUBSCRIBE could reach Redis after a new first
	// subscriber's SUBSCRIBE, leaving it deaf.
	topicLocks [32]sync.Mutex
}

// testHookUnsubscribing runs between a last subscriber's decision to
// UNSUBSCRIBE and the command (TestResubscribeRace).
var testHookUnsubscribing func()

// topicLock is topic's lock of topicLocks.
func (b *redisBus) topicLock(topic string) *sync.Mutex {
	h := fnv.New32a()
	h.Write([]byte(topic))
	return &b.topicLocks[h.Sum32()%uint32(len(b.topicLocks))]
}

type redisSub struct{ ch chan Event }

// NewRedis joins the bus on rdb as replica id. A Redis that does not
// answer now is no error: publishing fails with ErrUnavailable until it
// does, and the subscriptions resume once it is back.
func NewRedis(rdb *redis.Client, id string, opt Options) Bus {
	b := &redisBus{rdb: rdb, id: id, timeout: timeoutOf(opt.Timeout), ack: opt.AckTimeout, log: opt.Log,
		subs: map[string]map[*redisSub]bool{}, handlers: map[string]Handler{}, waiting: map[uint64]chan envelope{},
		serving:    map[served]context.CancelFunc{},
		confirming: map[string][]chan struct{}{},
		done:       make(chan struct{})}
	if b.log == nil {
		b.log = slog.Default()
	}
	if b.ack <= 0 {
		b.ack = DefaultAckTimeout
	}
	b.ps = rdb.Subscribe(context.Background())
	go b.read()
	b.subscribe(rqPrefix+id, rpPrefix+id)
	return b
}

func (b *redisBus) ID() string { return b.id }

func (b *redisBus) read() {
	defer close(b.done)
	for v := range b.ps.ChannelWithSubscriptions(redis.WithChannelSize(1024)) {
		if sub, ok := v.(*redis.Subscription); ok {
			if sub.Kind == "subscribe" {
				b.confirmed(sub.Channel)
			}
			continue
		}
		m, ok := v.(*redis.Message)
		if !ok {
			continue
		}
		switch {
		case len(m.Channel) > len(evPrefix) && m.Channel[:len(evPrefix)] == evPrefix:
			b.deliver(m.Channel[len(evPrefix):], []byte(m.Payload))
		case m.Channel == rqPrefix+b.id:
			var env envelope
			if json.Unmarshal([]byte(m.Payload), &env) != nil {
				continue
			}
			// The request's context is registered here, in the order
			// Redis delivers: its cancel, published after it, finds it.
			key := served{env.From, env.Seq}
			if env.Cancel {
				b.mu.Lock()
				cancel := b.serving[key]
				delete(b.serving, key)
				b.mu.Unlock()
				if cancel != nil {
					cancel()
				}
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
			b.mu.Lock()
			b.serving[key] = cancel
			b.mu.Unlock()
			go b.serve(ctx, env, func() {
				b.mu.Lock()
				delete(b.serving, key)
				b.mu.Unlock()
				cancel()
			})
		case m.Channel == rpPrefix+b.id:
			var env envelope
			if json.Unmarshal([]byte(m.Payload), &env) != nil {
				continue
			}
			b.mu.Lock()
			ch := b.waiting[env.Seq]
			if !env.Ack {
				delete(b.waiting, env.Seq)
			}
			b.mu.Unlock()
			if ch != nil {
				select {
				case ch <- env: // room for the ack and the answer
				default:
				}
			}
		}
	}
}

func (b *redisBus) deliver(topic string, payload []byte) {
	var ev struct {
		From string `json:"f"`
		Data []byte `json:"d"`
	}
	if json.Unmarshal(payload, &ev) != nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs[topic] {
		select {
		case s.ch <- Event{From: ev.From, Data: ev.Data}:
		default:
		}
	}
}

// serve answers one request with its handler, acknowledged first; ctx
// ends with the bus's timeout or the asker's cancel, and done is called
// when the handler returned.
func (b *redisBus) serve(ctx context.Context, env envelope, done func()) {
	b.reply(envelope{From: b.id, Seq: env.Seq, Ack: true}, env.From)
	b.mu.Lock()
	h := b.handlers[env.Name]
	b.mu.Unlock()
	out := envelope{From: b.id, Seq: env.Seq}
	if h == nil {
		done()
		out.Err = fmt.Sprintf("no handler for %q", env.Name)
	} else {
		data, err := h(ctx, env.From, env.Data)
		done()
		out.Data = data
		if err != nil {
			out.Err = err.Error()
		}
	}
	b.reply(out, env.From)
}

func (b *redisBus) reply(out envelope, to string) {
	raw, _ := json.Marshal(out)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := b.rdb.Publish(ctx, rpPrefix+to, raw).Err(); err != nil {
		b.log.Warn("cluster: an answer to another replica was lost", "replica", to, "err", err)
	}
}

func (b *redisBus) Publish(ctx context.Context, topic string, data []byte) error {
	raw, _ := json.Marshal(struct {
		From string `json:"f"`
		Data []byte `json:"d"`
	}{b.id, data})
	if err := b.rdb.Publish(ctx, evPrefix+topic, raw).Err(); err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return nil
}

func (b *redisBus) Subscribe(topic string) (<-chan Event, func()) {
	s := &redisSub{ch: make(chan Event, subBuffer)}
	tl := b.topicLock(topic)
	tl.Lock()
	defer tl.Unlock()
	b.mu.Lock()
	first := b.subs[topic] == nil
	if first {
		b.subs[topic] = map[*redisSub]bool{}
	}
	b.subs[topic][s] = true
	b.mu.Unlock()
	if first {
		b.subscribe(evPrefix + topic)
	}
	var once sync.Once
	return s.ch, func() {
		once.Do(func() {
			tl.Lock()
			defer tl.Unlock()
			b.mu.Lock()
			delete(b.subs[topic], s)
			last := len(b.subs[topic]) == 0
			if last {
				delete(b.subs, topic)
			}
			b.mu.Unlock()
			if last {
				if testHookUnsubscribing != nil {
					testHookUnsubscribing()
				}
				_ = b.ps.Unsubscribe(context.Background(), evPrefix+topic)
			}
		})
	}
}

func (b *redisBus) Handle(name string, h Handler) {
	b.mu.Lock()
	b.handlers[name] = h
	b.mu.Unlock()
}

func (b *redisBus) Request(ctx context.Context, replica, name string, data []byte) ([]byte, error) {
	seq := b.seq.Add(1)
	ch := make(chan envelope, 2)
	b.mu.Lock()
	b.waiting[seq] = ch
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.waiting, seq)
		b.mu.Unlock()
	}()
	raw, _ := json.Marshal(envelope{From: b.id, Seq: seq, Name: name, Data: data})
	n, err := b.rdb.Publish(ctx, rqPrefix+replica, raw).Result()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if n == 0 { // nobody subscribed to the replica's channel: it is not running
		return nil, gone(replica)
	}
	// A subscriber counted is not yet a replica alive (a server that has
	// not noticed a connection gone): the request must be acknowledged.
	ack := time.NewTimer(b.ack)
	defer ack.Stop()
	t := time.NewTimer(b.timeout)
	defer t.Stop()
	for {
		select {
		case env := <-ch:
			if env.Ack {
				ack.Stop()
				continue
			}
			if env.Err != "" {
				return nil, &RemoteError{Replica: replica, Msg: env.Err}
			}
			return env.Data, nil
		case <-ack.C:
			return nil, fmt.Errorf("%w: replica %s did not acknowledge the request within %s", ErrGone, replica, b.ack)
		case <-t.C:
			return nil, fmt.Errorf("%w: replica %s did not answer within %s", ErrGone, replica, b.timeout)
		case <-ctx.Done():
			b.cancelRequest(replica, seq)
			return nil, ctx.Err()
		}
	}
}

// cancelRequest tells replica that request seq is no longer waited for,
// so that its handler's ctx ends (as the memory hub's does); a cancel
// that cannot be published is logged, and the handler runs on to the
// bus's timeout.
func (b *redisBus) cancelRequest(replica string, seq uint64) {
	raw, _ := json.Marshal(envelope{From: b.id, Seq: seq, Cancel: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := b.rdb.Publish(ctx, rqPrefix+replica, raw).Err(); err != nil {
		b.log.Debug("cluster: a request's cancel was not sent to its replica", "replica", replica, "err", err)
	}
}

func (b *redisBus) Close() error {
	err := b.ps.Close()
	<-b.done
	return err
}

// subscribe subscribes to channels and returns once Redis confirmed them,
// so that what is published after it is heard; a Redis that does not
// confirm soon (down) is waited for no longer: go-redis subscribes again
// when the connection is back.
func (b *redisBus) subscribe(channels ...string) {
	var dones []chan struct{}
	b.mu.Lock()
	for _, c := range channels {
		done := make(chan struct{})
		b.confirming[c] = append(b.confirming[c], done)
		dones = append(dones, done)
	}
	b.mu.Unlock()
	if b.ps.Subscribe(context.Background(), channels...) != nil {
		return
	}
	timeout := time.After(confirmWait)
	for _, done := range dones {
		select {
		case <-done:
		case <-timeout:
			return
		}
	}
}

// confirmWait bounds how long Subscribe waits for Redis's confirmation.
const confirmWait = 2 * time.Second

// confirmed wakes the Subscribes waiting for channel.
func (b *redisBus) confirmed(channel string) {
	b.mu.Lock()
	waiting := b.confirming[channel]
	delete(b.confirming, channel)
	b.mu.Unlock()
	for _, ch := range waiting {
		close(ch)
	}
}
