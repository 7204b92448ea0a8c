package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/mcpx-dev/mcpx/runtime/cluster"
	"github.com/mcpx-dev/mcpx/runtime/internal/redistest"
)

// TestRelayTopic: a relay's notifications come back in order before its
// answer, however many; its topic is unsubscribed when the relay ends,
// answered, failed or given up; an answer without the count (a holder
// that publishes no notifications) is taken as the response.
func TestRelayTopic(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	type pair struct {
		a, b cluster.Bus
		// relayTopics lists the relay topics subscribed on Redis (nil on
		// the memory hub, which cannot say).
		relayTopics func() []string
	}
	redisPair := func(t *testing.T, addr string) pair {
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		a := cluster.NewRedis(redis.NewClient(&redis.Options{Addr: addr}), "a", cluster.Options{Timeout: 10 * time.Second, Log: log})
		b := cluster.NewRedis(redis.NewClient(&redis.Options{Addr: addr}), "b", cluster.Options{Timeout: 10 * time.Second, Log: log})
		t.Cleanup(func() { a.Close(); b.Close(); rdb.Close() })
		return pair{a, b, func() []string {
			chs, err := rdb.PubSubChannels(context.Background(), "mcpx:ev:"+relayTopicPrefix+"*").Result()
			if err != nil {
				t.Fatal(err)
			}
			return chs
		}}
	}
	for _, bk := range []struct {
		name string
		new  func(t *testing.T) pair
	}{
		{"memory", func(t *testing.T) pair {
			h := cluster.NewHub()
			return pair{h.Join("a", 10*time.Second), h.Join("b", 10*time.Second), nil}
		}},
		{"miniredis", func(t *testing.T) pair { return redisPair(t, miniredis.RunT(t).Addr()) }},
		{"redis-server", func(t *testing.T) pair { return redisPair(t, redistest.Server(t)) }},
	} {
		t.Run(bk.name, func(t *testing.T) {
			bs := bk.new(t)
			var serve func(ctx context.Context, req []byte, notify func([]byte)) ([]byte, int, error)
			bs.a.Handle(relayName, func(ctx context.Context, _ string, data []byte) ([]byte, error) {
				return serveRelay(ctx, bs.a, log, data, serve)
			})
			p := &peers{bus: bs.b, log: log}
			unsubscribed := func(t *testing.T) {
				t.Helper()
				if bs.relayTopics == nil {
					return
				}
				// Redis confirms an unsubscribe asynchronously.
				deadline := time.Now().Add(5 * time.Second)
				for chs := bs.relayTopics(); len(chs) > 0; chs = bs.relayTopics() {
					if time.Now().After(deadline) {
						t.Fatalf("still subscribed: %v", chs)
					}
					time.Sleep(10 * time.Millisecond)
				}
			}

			const n = 100
			serve = func(_ context.Context, req []byte, notify func([]byte)) ([]byte, int, error) {
				for i := range n {
					notify(fmt.Appendf(nil, `{"n":%d}`, i))
				}
				return fmt.Appendf(nil, `{"answer to":%s}`, req), http.StatusServiceUnavailable, nil
			}
			var heard []string
			out, st, err := p.Relay(context.Background(), "a", []byte(`"q"`), func(b []byte) { heard = append(heard, string(b)) })
			if err != nil || string(out) != `{"answer to":"q"}` || st != http.StatusServiceUnavailable {
				t.Fatalf("relay: %q, HTTP %d, %v; want the holder's 503", out, st, err)
			}
			if len(heard) != n {
				t.Fatalf("heard %d notifications, want %d: %v", len(heard), n, heard)
			}
			for i, h := range heard {
				if h != fmt.Sprintf(`{"n":%d}`, i) {
					t.Fatalf("notification %d is %s", i, h)
				}
			}
			unsubscribed(t)

			// Without notify, the holder serves it without a stream, and
			// its status comes back all the same.
			serve = func(_ context.Context, _ []byte, notify func([]byte)) ([]byte, int, error) {
				return fmt.Appendf(nil, `{"stream":%v}`, notify != nil), http.StatusBadRequest, nil
			}
			if out, st, err := p.Relay(context.Background(), "a", []byte(`"q"`), nil); err != nil || string(out) != `{"stream":false}` || st != http.StatusBadRequest {
				t.Fatalf("relay without notify: %q, HTTP %d, %v; want the holder's 400", out, st, err)
			}
			// An asker from before the status crossed (no "status" asked)
			// and without a topic is answered the response alone.
			old, _ := json.Marshal(relayed{Request: json.RawMessage(`"q"`)})
			if out, err := bs.b.Request(context.Background(), "a", relayName, old); err != nil || string(out) != `{"stream":false}` {
				t.Fatalf("an older asker's relay: %q, %v", out, err)
			}

			serve = func(context.Context, []byte, func([]byte)) ([]byte, int, error) {
				return nil, 0, errors.New("no such call")
			}
			_, _, err = p.Relay(context.Background(), "a", []byte(`"q"`), func([]byte) {})
			if re := (*cluster.RemoteError)(nil); !errors.As(err, &re) || !strings.Contains(err.Error(), "no such call") {
				t.Fatalf("a failed relay: %v", err)
			}
			unsubscribed(t)

			started, cancelled := make(chan struct{}), make(chan error, 1)
			serve = func(ctx context.Context, _ []byte, notify func([]byte)) ([]byte, int, error) {
				notify([]byte(`{"n":0}`))
				close(started)
				<-ctx.Done()
				cancelled <- ctx.Err()
				return nil, 0, ctx.Err()
			}
			ctx, cancel := context.WithCancel(context.Background())
			relayed := make(chan error, 1)
			go func() {
				_, _, err := p.Relay(ctx, "a", []byte(`"q"`), func([]byte) {})
				relayed <- err
			}()
			<-started
			cancel()
			if err := <-relayed; !errors.Is(err, context.Canceled) {
				t.Fatalf("a relay given up: %v", err)
			}
			if err := <-cancelled; !errors.Is(err, context.Canceled) {
				t.Fatalf("the holder's serving ended by %v", err)
			}
			unsubscribed(t)

			// A holder that sends the response alone.
			bs.a.Handle(relayName, func(context.Context, string, []byte) ([]byte, error) {
				return []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), nil
			})
			for _, notify := range []func([]byte){func([]byte) {}, nil} {
				if out, st, err := p.Relay(context.Background(), "a", []byte(`"q"`), notify); err != nil || string(out) != `{"jsonrpc":"2.0","id":1,"result":{}}` || st != 0 {
					t.Fatalf("a bare answer: %q, HTTP %d, %v; want no status", out, st, err)
				}
			}
			unsubscribed(t)
		})
	}
}

// lateBus is a bus whose subscribers hear the events published during a
// request only once its answer is back: the reordering between pub/sub
// and a request's reply that Redis could show.
type lateBus struct {
	cluster.Bus
	answered chan struct{}
}

func (b *lateBus) Subscribe(topic string) (<-chan cluster.Event, func()) {
	in, cancel := b.Bus.Subscribe(topic)
	out := make(chan cluster.Event, 256)
	go func() {
		<-b.answered
		for ev := range in {
			out <- ev
		}
	}()
	return out, cancel
}

func (b *lateBus) Request(ctx context.Context, replica, name string, data []byte) ([]byte, error) {
	out, err := b.Bus.Request(ctx, replica, name, data)
	close(b.answered)
	return out, err
}

// TestRelayWaitsForLateNotifications: notifications published before the
// answer but heard after it are waited for, and passed on, in order,
// before the answer.
func TestRelayWaitsForLateNotifications(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	h := cluster.NewHub()
	a := h.Join("a", 10*time.Second)
	a.Handle(relayName, func(ctx context.Context, _ string, data []byte) ([]byte, error) {
		return serveRelay(ctx, a, log, data, func(_ context.Context, _ []byte, notify func([]byte)) ([]byte, int, error) {
			for i := range 50 {
				notify(fmt.Appendf(nil, `{"n":%d}`, i))
			}
			return []byte(`{}`), http.StatusOK, nil
		})
	})
	p := &peers{bus: &lateBus{Bus: h.Join("b", 10*time.Second), answered: make(chan struct{})}, log: log}
	var heard []string
	if _, _, err := p.Relay(context.Background(), "a", []byte(`"q"`), func(b []byte) { heard = append(heard, string(b)) }); err != nil {
		t.Fatal(err)
	}
	if len(heard) != 50 || heard[0] != `{"n":0}` || heard[49] != `{"n":49}` {
		t.Fatalf("heard %d: %v", len(heard), heard)
	}
}
