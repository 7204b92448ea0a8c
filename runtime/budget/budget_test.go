package budget

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestSmallMessagesAreNotCounted(t *testing.T) {
	b := New(4<<20, 1<<20, time.Second)
	h := b.Hold()
	if err := h.Add(context.Background(), 1<<20); err != nil || b.Used() != 0 {
		t.Fatalf("a message of the threshold's size: %v, %d used", err, b.Used())
	}
	if err := h.Add(context.Background(), 1); err != nil || b.Used() != 1<<20+1 {
		t.Fatalf("one byte over: %v, %d used; want all of it counted", err, b.Used())
	}
	h.Release()
	if b.Used() != 0 {
		t.Fatalf("%d used after Release", b.Used())
	}
}

// TestRefusesThenRecovers: with the budget held, a reservation waits its
// bounded time and is refused with a BusyError; once the holder lets go,
// the same reservation succeeds.
func TestRefusesThenRecovers(t *testing.T) {
	b := New(4<<20, 1<<20, 100*time.Millisecond)
	ctx := context.Background()
	big := b.Hold()
	if err := big.Add(ctx, 3<<20); err != nil {
		t.Fatal(err)
	}
	h := b.Hold()
	start := time.Now()
	err := h.Add(ctx, 2<<20)
	var busy *BusyError
	if !errors.As(err, &busy) || !strings.Contains(err.Error(), "busy with large messages") {
		t.Fatalf("got %v; want a BusyError", err)
	}
	if d := time.Since(start); d < 90*time.Millisecond || d > 5*time.Second {
		t.Errorf("refused after %s; want about the 100ms wait", d)
	}
	if b.Used() != 3<<20 {
		t.Errorf("%d used; the refused hold must hold nothing", b.Used())
	}
	// Room made while waiting is taken.
	go func() { time.Sleep(20 * time.Millisecond); big.Release() }()
	h = b.Hold()
	if err := h.Add(ctx, 2<<20); err != nil {
		t.Fatalf("after the release: %v", err)
	}
	h.Release()
	if b.Used() != 0 {
		t.Fatalf("%d used", b.Used())
	}
}

func TestLargerThanTheBudget(t *testing.T) {
	b := New(4<<20, 1<<20, time.Hour)
	start := time.Now()
	err := b.Hold().Add(context.Background(), 5<<20)
	if !IsBusy(err) || !strings.Contains(err.Error(), "more than it holds at once") || time.Since(start) > time.Second {
		t.Fatalf("got %v after %s; want an immediate refusal", err, time.Since(start))
	}
}

func TestScopeKeepsUntilDone(t *testing.T) {
	b := New(4<<20, 1<<20, time.Second)
	sc := WithScope(context.Background())
	ctx, done := context.Context(sc), sc.Release
	h := b.Hold()
	if err := h.Add(ctx, 2<<20); err != nil {
		t.Fatal(err)
	}
	h.Keep(ctx)
	if b.Used() != 2<<20 {
		t.Fatalf("%d used while kept", b.Used())
	}
	done()
	if b.Used() != 0 {
		t.Fatalf("%d used after done", b.Used())
	}
	h = b.Hold()
	h.Add(ctx, 2<<20)
	h.Keep(ctx) // the scope is over: released now
	h.Keep(context.Background())
	if b.Used() != 0 {
		t.Fatalf("%d used after a Keep with no scope", b.Used())
	}
}

func TestReadLine(t *testing.T) {
	b := New(4<<20, 1<<20, 50*time.Millisecond)
	ctx := context.Background()
	big := strings.Repeat("x", 3<<20)
	large := `{"jsonrpc":"2.0","id":2,"result":{"text":"` + big + `"}}` + "\n"
	in := `{"jsonrpc":"2.0","id":1,"method":"a"}` + "\n" +
		`{"result":{"text":"` + big + `"},"jsonrpc":"2.0","id":"the \"id\""}` + "\n" +
		strings.Repeat("y", 5<<20) + "\n" +
		large + "last"
	br := bufio.NewReaderSize(strings.NewReader(in), 64<<10)

	h := b.Hold()
	line, err := ReadLine(ctx, br, 4<<20, h)
	if err != nil || string(line) != `{"jsonrpc":"2.0","id":1,"method":"a"}`+"\n" || h.Holds() {
		t.Fatalf("small line: %q, %v", line, err)
	}
	// The budget is held elsewhere: the large line is refused, read to
	// its end, and its id (last, as the TypeScript SDK writes it) found.
	other := b.Hold()
	other.Add(ctx, 3<<20)
	h = b.Hold()
	_, err = ReadLine(ctx, br, 4<<20, h)
	var r *Refused
	if !errors.As(err, &r) || !IsBusy(err) || string(r.ID) != `"the \"id\""` {
		t.Fatalf("refused line: %v (id %s)", err, r.ID)
	}
	if b.Used() != 3<<20 {
		t.Fatalf("%d used; the refused line must hold nothing", b.Used())
	}
	other.Release()
	if _, err := ReadLine(ctx, br, 4<<20, b.Hold()); !errors.Is(err, ErrTooLong) {
		t.Fatalf("line over the limit: %v", err)
	}
	h = b.Hold()
	line, err = ReadLine(ctx, br, 4<<20, h)
	if err != nil || string(line) != large || !h.Holds() || b.Used() != int64(cap(line)) {
		t.Fatalf("large line: %d bytes, %v, %d used for a buffer of %d", len(line), err, b.Used(), cap(line))
	}
	h.Release()
	line, err = ReadLine(ctx, br, 4<<20, b.Hold())
	if string(line) != "last" || err != io.EOF {
		t.Fatalf("last line: %q, %v", line, err)
	}
}

func TestIDScanner(t *testing.T) {
	for in, want := range map[string]string{
		`{"jsonrpc":"2.0","id":7,"result":{}}`:               `7`,
		`{"result":{"id":"inner","x":[{"id":1}]},"id": -3 }`: `-3`,
		`{"method":"x","params":{"id":"no"}}`:                ``,
		`{"a":"\"id\":5","id":"ok"}`:                         `"ok"`,
		`{"id":{"not":"an id"},"result":1}`:                  ``,
		`{"id":null,"error":{}}`:                             ``,
		`["id",1]`:                                           ``,
		`{"i\u0064":1}`:                                      ``,
	} {
		var s idScanner
		for i := range len(in) { // a byte at a time: chunks end anywhere
			s.write([]byte{in[i]})
		}
		if got := string(s.id()); got != want {
			t.Errorf("%s: id %q, want %q", in, got, want)
		}
	}
}

// TestIsBusyNil: IsBusy of no error, asked of every answer read, costs
// nothing (errors.As's target was allocated before it looked).
func TestIsBusyNil(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() {
		if IsBusy(nil) {
			t.Fatal("no error is busy")
		}
	}); n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
}
