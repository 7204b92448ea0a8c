package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// TestStdio talks to the fixture in-process through mcpx's edge and stdio
// transport: a legacy handshake, then one call of each kind the suite
// makes first.
func TestStdio(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int)
	go func() {
		done <- run(context.Background(), nil, inR, outW, io.Discard)
		outW.Close()
	}()
	lines := bufio.NewScanner(outR)
	send := func(msg string) {
		if _, err := io.WriteString(inW, msg+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() map[string]any {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("no answer: %v", lines.Err())
		}
		var m map[string]any
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			t.Fatalf("answer %s: %v", lines.Bytes(), err)
		}
		return m
	}

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	if m := recv(); m["result"].(map[string]any)["serverInfo"].(map[string]any)["name"] != serverName {
		t.Errorf("initialize = %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	tests := []struct {
		name    string
		request string
		want    string // substring of the answer
	}{
		{"a content tool", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_simple_text"}}`,
			`"This is a simple text response for testing."`},
		{"a tool that needs the client", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"hi"}}}`,
			`"isError":true`},
		{"a template read", `{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"test://template/123/data"}}`,
			`Data for ID: 123`},
		{"an unknown tool", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope"}}`,
			`"code":-32602`},
		{"an unknown resource", `{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"test://nope"}}`,
			`"uri":"test://nope"`},
	}
	for _, tt := range tests {
		send(tt.request)
		b, _ := json.Marshal(recv())
		if !strings.Contains(string(b), tt.want) {
			t.Errorf("%s: answer %s, want it to contain %s", tt.name, b, tt.want)
		}
	}
	inW.Close()
	if code := <-done; code != 0 {
		t.Errorf("exit code %d after stdin closed, want 0", code)
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"an unknown flag", []string{"-nope"}},
		{"a stray argument", []string{"serve"}},
		{"the old stdio flag", []string{"-stdio"}},
		{"--listen without an address", []string{"--listen"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := run(context.Background(), tt.args, strings.NewReader(""), io.Discard, &stderr); code != 2 || stderr.Len() == 0 {
				t.Errorf("run(%v) = %d with stderr %q, want 2 and a message", tt.args, code, stderr.String())
			}
		})
	}
}
