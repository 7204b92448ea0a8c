package upstream

// rawServer, the upstream of the stderr, log flood and cause tests: a
// hand-written stdio server (2025-06-18, one tool) whose misbehaviour is
// chosen by its mode's argument, and logCapture, which keeps what the
// client logged.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
)

// rawServer serves in and stdout. arg is a comma-separated list of:
//
//	exit=N       exit with status N at once, after a line on stderr
//	longstderr   first a stderr line of 1 MiB + 1 byte, then 320 kB more
//	             stderr (far beyond a pipe's buffer), then "after the long line"
//	stderr=N     first N lines on stderr
//	logs=N       N notifications/message before each tools/call answer
//	             (not before: mcpx ignores them until the handshake ends)
//	pings=N      N ping requests before each tools/call answer, written
//	             without reading stdin meanwhile (the replies are read
//	             after the answer, and not answered)
//
// tools/call "echo" answers "echo: <text>"; "bigline" writes a stdout line
// over maxLine instead of an answer; "big" answers bigAnswer bytes of text.
func rawServer(in io.Reader, arg string) int {
	opts := map[string]string{}
	for _, kv := range strings.Split(arg, ",") {
		k, v, _ := strings.Cut(kv, "=")
		opts[k] = v
	}
	if v, ok := opts["exit"]; ok {
		n, _ := strconv.Atoi(v)
		fmt.Fprintln(os.Stderr, "raw: exiting as asked")
		return n
	}
	errw := bufio.NewWriter(os.Stderr)
	if _, ok := opts["longstderr"]; ok {
		errw.WriteString(strings.Repeat("x", 1<<20+1) + "\n")
		for i := range 80 {
			fmt.Fprintf(errw, "filler %02d %s\n", i, strings.Repeat("y", 4000))
		}
		errw.WriteString("after the long line\n")
	}
	if v, ok := opts["stderr"]; ok {
		n, _ := strconv.Atoi(v)
		for i := range n {
			fmt.Fprintf(errw, "stderr line %d\n", i)
		}
	}
	if err := errw.Flush(); err != nil {
		return 1
	}
	logs, _ := strconv.Atoi(opts["logs"])
	pings, _ := strconv.Atoi(opts["pings"])

	out := bufio.NewWriter(os.Stdout)
	send := func(v any) {
		b, _ := json.Marshal(v)
		out.Write(b)
		out.WriteByte('\n')
	}
	answer := func(id json.RawMessage, result any) {
		send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	}
	s := bufio.NewScanner(in)
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string `json:"name"`
				Arguments struct {
					Text string `json:"text"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(s.Bytes(), &m) != nil {
			continue
		}
		switch m.Method {
		case "initialize":
			answer(m.ID, map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "raw", "version": "1"}})
		case "tools/list":
			answer(m.ID, map[string]any{"tools": []any{map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"}}}})
		case "tools/call":
			for i := range logs {
				send(map[string]any{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"level": "info", "data": "log line " + strconv.Itoa(i)}})
			}
			for i := range pings {
				send(map[string]any{"jsonrpc": "2.0", "id": "srv-" + strconv.Itoa(i), "method": "ping"})
			}
			if m.Params.Name == "bigline" {
				out.WriteString(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"content":[{"type":"text","text":"`)
				out.WriteString(strings.Repeat("z", maxLine))
				out.WriteString("\"}]}}\n")
				break
			}
			if m.Params.Name == "big" {
				answer(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": strings.Repeat("b", bigAnswer)}}})
				break
			}
			answer(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "echo: " + m.Params.Arguments.Text}}})
		case "ping":
			answer(m.ID, map[string]any{})
		default:
			if m.ID != nil && m.Method != "" { // a request, not a reply to one
				send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
			}
		}
		if out.Flush() != nil {
			return 1
		}
	}
	return 0
}

// logCapture is a slog.Handler that keeps every record, flattened to its
// message and attributes.
type logCapture struct {
	mu   *sync.Mutex
	recs *[]logRecord
	pre  []slog.Attr
}

type logRecord struct {
	msg   string
	attrs map[string]slog.Value
}

func newLogCapture() (*slog.Logger, *logCapture) {
	h := &logCapture{mu: &sync.Mutex{}, recs: &[]logRecord{}}
	return slog.New(h), h
}

func (h *logCapture) Enabled(context.Context, slog.Level) bool { return true }

func (h *logCapture) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{msg: r.Message, attrs: map[string]slog.Value{}}
	for _, a := range h.pre {
		rec.attrs[a.Key] = a.Value
	}
	r.Attrs(func(a slog.Attr) bool { rec.attrs[a.Key] = a.Value; return true })
	h.mu.Lock()
	*h.recs = append(*h.recs, rec)
	h.mu.Unlock()
	return nil
}

func (h *logCapture) WithAttrs(as []slog.Attr) slog.Handler {
	return &logCapture{mu: h.mu, recs: h.recs, pre: append(append([]slog.Attr(nil), h.pre...), as...)}
}

func (h *logCapture) WithGroup(string) slog.Handler { return h } // mcpx logs no groups

// records are the records so far whose message is msg.
func (h *logCapture) records(msg string) []logRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []logRecord
	for _, r := range *h.recs {
		if r.msg == msg {
			out = append(out, r)
		}
	}
	return out
}
