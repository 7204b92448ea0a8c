// Package command makes tools of command-line programs: a call runs the
// program (never through a shell) with arguments built from the tool's
// inputs, and its standard output is the result.
package command

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/catalog"
)

// Tool is one program as a tool.
type Tool struct {
	Name, Description string
	// Command is the program; found on PATH unless it has a '/'.
	Command string
	// Args are the arguments; "{name}" is replaced by the input of that
	// name (see [Args]).
	Args []string
	// InputSchema is the tool's inputSchema; nil means no inputs.
	InputSchema json.RawMessage
	// Timeout bounds a run; 0 means 30 s. Past it the process group is
	// killed.
	Timeout time.Duration
	Cwd     string
	// Env is added to mcpx's environment.
	Env map[string]string
	// MaxOutput bounds the standard output kept; 0 means 1 MiB.
	MaxOutput int64
}

// Defaults of Tool.
const (
	DefaultTimeout   = 30 * time.Second
	DefaultMaxOutput = 1 << 20
	// stderrTail is how much of the end of standard error a failed run's
	// result quotes.
	stderrTail = 2048
)

// Catalog returns the tools as a namespace, in the order given.
func Catalog(tools []Tool) (*catalog.Catalog, error) {
	c := catalog.New()
	for _, t := range tools {
		schema := t.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","additionalProperties":false}`)
		}
		def := mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: schema,
			Annotations: &mcp.ToolAnnotations{OpenWorldHint: mcp.Ptr(false)}}
		if def.Description == "" {
			def.Description = "Runs " + t.Command + "."
		}
		if err := c.TryAddTool(def, t.run); err != nil {
			return nil, fmt.Errorf("command tool %q: %w", t.Name, err)
		}
	}
	return c, nil
}

// Args builds a run's arguments from the templates and the inputs: an
// argument that is exactly "{name}" becomes the input as one argument (an
// array: one argument per item; not given: none); "{name}" inside a longer
// argument is replaced by the input's text ("" when not given). A string
// is used as it is, a number or boolean as written; an object is an error.
func Args(templates []string, inputs map[string]json.RawMessage) ([]string, error) {
	var out []string
	for _, a := range templates {
		if name, ok := whole(a); ok {
			raw, given := inputs[name]
			if !given || string(raw) == "null" {
				continue
			}
			var arr []json.RawMessage
			if json.Unmarshal(raw, &arr) == nil {
				for _, item := range arr {
					s, err := scalar(name, item)
					if err != nil {
						return nil, err
					}
					out = append(out, s)
				}
				continue
			}
			s, err := scalar(name, raw)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
			continue
		}
		var b strings.Builder
		for rest := a; ; {
			open := strings.IndexByte(rest, '{')
			end := -1
			if open >= 0 {
				end = strings.IndexByte(rest[open:], '}')
			}
			if open < 0 || end < 0 {
				b.WriteString(rest)
				break
			}
			b.WriteString(rest[:open])
			name := rest[open+1 : open+end]
			if raw, given := inputs[name]; given && string(raw) != "null" {
				s, err := scalar(name, raw)
				if err != nil {
					return nil, err
				}
				b.WriteString(s)
			}
			rest = rest[open+end+1:]
		}
		out = append(out, b.String())
	}
	return out, nil
}

func whole(a string) (string, bool) {
	if len(a) > 2 && a[0] == '{' && a[len(a)-1] == '}' && !strings.ContainsAny(a[1:len(a)-1], "{}") {
		return a[1 : len(a)-1], true
	}
	return "", false
}

func scalar(name string, raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) > 0 && raw[0] == '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case len(raw) > 0 && (raw[0] == '{' || raw[0] == '['):
		return "", fmt.Errorf("input %q is an object or a nested array, which cannot be an argument", name)
	default:
		return string(raw), nil // a number or boolean as written
	}
}

func (t Tool) run(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
	var inputs map[string]json.RawMessage
	if err := json.Unmarshal(args, &inputs); err != nil {
		return catalog.ErrorResult("the arguments are not an object: %v", err), nil
	}
	argv, err := Args(t.Args, inputs)
	if err != nil {
		return catalog.ErrorResult("%v", err), nil
	}
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	max := t.MaxOutput
	if max <= 0 {
		max = DefaultMaxOutput
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(rctx, t.Command, argv...)
	cmd.Dir = t.Cwd
	if len(t.Env) > 0 {
		cmd.Env = os.Environ()
		for k, v := range t.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	stdout := &capped{max: max}
	stderr := &tail{max: stderrTail}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	ownGroup(cmd) // the whole group is killed, not only the program
	// Output still held open by a descendant that outlived the kill does
	// not keep the call waiting.
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	reap(cmd)
	switch {
	case rctx.Err() == context.DeadlineExceeded && ctx.Err() == nil:
		return catalog.ErrorResult("%s did not finish within %s; its process group was killed%s", t.Command, timeout, stderr.quote()), nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return catalog.ErrorResult("%s exited with code %d%s", t.Command, exit.ExitCode(), stderr.quote()), nil
	case errors.Is(err, exec.ErrWaitDelay):
		// Finished; a descendant held its output open and was cut off.
	case err != nil:
		return catalog.ErrorResult("%s could not be run: %v", t.Command, err), nil
	}
	out := stdout.String()
	if stdout.cut {
		out += fmt.Sprintf("\n[output cut at %d bytes (maxOutput)]", max)
	}
	return catalog.TextResult(out), nil
}

// capped keeps the first max bytes written to it. (The buffer is a field,
// not embedded: an embedded bytes.Buffer's ReadFrom would let io.Copy
// past the cap.)
type capped struct {
	buf bytes.Buffer
	max int64
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - int64(c.buf.Len()); int64(len(p)) > room {
		c.cut = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return c.buf.Write(p)
}

func (c *capped) String() string { return c.buf.String() }

// tail keeps the last max bytes written to it.
type tail struct {
	buf []byte
	max int
}

func (t *tail) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) quote() string {
	s := strings.TrimSpace(strings.ToValidUTF8(string(t.buf), "?"))
	if s == "" {
		return ""
	}
	return ": " + s
}
