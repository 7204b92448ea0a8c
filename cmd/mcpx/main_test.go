package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/testkit/revs"
)

// mcpx runs the command in-process and returns its exit code and output.
func mcpx(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// section returns the lines printed under the "from -> to" heading.
func section(t *testing.T, out, heading string) string {
	t.Helper()
	_, rest, ok := strings.Cut(out, heading+"\n")
	if !ok {
		t.Fatalf("no %q section in:\n%s", heading, out)
	}
	if i := strings.Index(rest, "\n\n"); i >= 0 {
		rest = rest[:i+1]
	}
	return rest
}

// hasLine reports whether text has a line equal to line.
func hasLine(text, line string) bool {
	for _, l := range strings.Split(text, "\n") {
		if l == line {
			return true
		}
	}
	return false
}

// typeLine returns the "  Name: ..." line of text, or "".
func typeLine(text, name string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "  "+name+": ") {
			return l
		}
	}
	return ""
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"help"}, {"--help"}} {
		code, out, _ := mcpx(t, args...)
		if code != 0 {
			t.Errorf("mcpx %v: exit %d, want 0", args, code)
		}
		for _, want := range []string{"revisions", "serve", "stdio"} {
			if !strings.Contains(out, want) {
				t.Errorf("mcpx %v: usage does not mention %q:\n%s", args, want, out)
			}
		}
	}
	code, _, errOut := mcpx(t, "frobnicate")
	if code != 2 || !strings.Contains(errOut, "unknown command") {
		t.Errorf("unknown command: exit %d, stderr %q; want 2 and an error", code, errOut)
	}
}

func TestRevisionsAllPairs(t *testing.T) {
	code, out, errOut := mcpx(t, "revisions")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// Consecutive pairs of the tables' revisions, oldest to newest, in order.
	var headings []string
	all := revs.OldestFirst(revs.All())
	for i := 1; i < len(all); i++ {
		headings = append(headings, string(all[i-1])+" -> "+string(all[i]))
	}
	last := -1
	for _, h := range headings {
		i := strings.Index(out, h+"\n")
		if i < 0 || i < last {
			t.Fatalf("heading %q missing or out of order in:\n%s", h, out)
		}
		last = i
	}

	s := section(t, out, "2024-11-05 -> 2025-03-26")
	if l := typeLine(s, "ContentBlock"); !strings.Contains(l, "+ variant audio") {
		t.Errorf("2024-11-05 -> 2025-03-26: ContentBlock line %q lacks \"+ variant audio\"", l)
	}
	if l := typeLine(s, "Tool"); !strings.Contains(l, "+ annotations") {
		t.Errorf("2024-11-05 -> 2025-03-26: Tool line %q lacks \"+ annotations\"", l)
	}
	if !hasLine(s, "  + server capability completions") {
		t.Errorf("2024-11-05 -> 2025-03-26 lacks the completions server capability:\n%s", s)
	}

	s = section(t, out, "2025-03-26 -> 2025-06-18")
	if !hasLine(s, "  + method elicitation/create (request)") {
		t.Errorf("2025-03-26 -> 2025-06-18 does not add elicitation/create:\n%s", s)
	}
	if l := typeLine(s, "Tool"); l != "  Tool: + _meta, + outputSchema, + title" {
		t.Errorf("2025-03-26 -> 2025-06-18: Tool line %q", l)
	}

	s = section(t, out, "2025-11-25 -> 2026-07-28")
	for _, want := range []string{
		"  era: legacy -> modern",
		"  + method server/discover (request)",
		"  - method initialize",
	} {
		if !hasLine(s, want) {
			t.Errorf("2025-11-25 -> 2026-07-28 lacks %q:\n%s", want, s)
		}
	}

	// Deterministic.
	_, again, _ := mcpx(t, "revisions")
	if again != out {
		t.Error("two runs printed different output")
	}
}

func TestRevisionsFromTo(t *testing.T) {
	// Either order gives the one comparison, older to newer; --to is the
	// newest by default.
	for _, c := range []struct {
		args []string
		to   string
	}{
		{[]string{"revisions", "--from", "2025-11-25", "--to", "2026-07-28"}, "2026-07-28"},
		{[]string{"revisions", "--from", "2026-07-28", "--to", "2025-11-25"}, "2026-07-28"},
		{[]string{"revisions", "-from=2025-11-25"}, string(revs.Newest())},
	} {
		args := c.args
		code, out, errOut := mcpx(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		if !strings.HasPrefix(out, "2025-11-25 -> "+c.to+"\n") || strings.Count(out, "\n2") != 0 { // one heading (renames and the era line also say "->")
			t.Errorf("%v: want the single comparison 2025-11-25 -> %s, got:\n%s", args, c.to, out)
		}
		if !hasLine(out, "  + method server/discover (request)") || !hasLine(out, "  - method initialize") {
			t.Errorf("%v: server/discover added and initialize removed not shown:\n%s", args, out)
		}
	}

	// Only --to: from the oldest.
	_, out, _ := mcpx(t, "revisions", "--to", "2025-03-26")
	if !strings.HasPrefix(out, string(revs.Oldest())+" -> 2025-03-26\n") {
		t.Errorf("--to 2025-03-26: got:\n%s", out)
	}

	// A comparison across several revisions shows the net change.
	_, out, _ = mcpx(t, "revisions", "--from", "2024-11-05", "--to", "2026-07-28")
	if l := typeLine(out, "Tool"); !strings.Contains(l, "+ annotations") || !strings.Contains(l, "+ title") {
		t.Errorf("2024-11-05 -> 2026-07-28: Tool line %q", l)
	}
}

func TestRevisionsType(t *testing.T) {
	code, out, errOut := mcpx(t, "revisions", "--type", "ResourceTemplate")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// The type section is restricted to ResourceTemplate.
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "    ") && strings.Contains(l, ": ") &&
			!strings.HasPrefix(l, "  ResourceTemplate: ") && !strings.HasPrefix(l, "  era: ") && !strings.HasPrefix(l, "  20") {
			t.Errorf("line for another type: %q", l)
		}
	}
	_, byRev, ok := strings.Cut(out, "\nResourceTemplate by revision:\n")
	if !ok {
		t.Fatalf("no per-revision section:\n%s", out)
	}
	for _, rev := range revs.Strings(revs.All()) {
		_, rest, ok := strings.Cut(byRev, "  "+rev+":\n")
		if !ok {
			t.Errorf("revision %s missing from:\n%s", rev, byRev)
			continue
		}
		fields, _, _ := strings.Cut(rest, "\n")
		if !strings.HasPrefix(fields, "    fields: ") || !strings.Contains(fields, "uriTemplate") {
			t.Errorf("%s: fields line %q lacks uriTemplate", rev, fields)
		}
	}
	// 2024-11-05 lacks title; the hub has it, so the downgrade drops it.
	_, rest, _ := strings.Cut(byRev, "  2024-11-05:\n")
	if dropped, _, _ := strings.Cut(strings.SplitN(rest, "\n", 2)[1], "\n"); !strings.Contains(dropped, "dropped: ") || !strings.Contains(dropped, "title") {
		t.Errorf("2024-11-05 dropped line %q lacks title", dropped)
	}
}

func TestRevisionsErrors(t *testing.T) {
	valid := strings.Join(revs.Strings(revs.OldestFirst(revs.All())), ", ")
	for _, args := range [][]string{
		{"revisions", "--from", "2024-01-01"},
		{"revisions", "--to", "latest"},
	} {
		code, out, errOut := mcpx(t, args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
		if out != "" {
			t.Errorf("%v: printed to stdout: %q", args, out)
		}
		if !strings.Contains(errOut, "unknown revision") || !strings.Contains(errOut, valid) {
			t.Errorf("%v: stderr %q does not name the valid revisions", args, errOut)
		}
	}

	code, out, errOut := mcpx(t, "revisions", "--type", "NoSuchType")
	if code != 2 || out != "" {
		t.Errorf("--type NoSuchType: exit %d, stdout %q; want 2 and nothing", code, out)
	}
	if !strings.Contains(errOut, "unknown type") || !strings.Contains(errOut, "ResourceTemplate") || !strings.Contains(errOut, "Tool,") {
		t.Errorf("--type NoSuchType: stderr %q does not list the valid types", errOut)
	}

	if code, _, _ := mcpx(t, "revisions", "--bogus"); code != 2 {
		t.Errorf("--bogus: exit %d, want 2", code)
	}
	if code, _, _ := mcpx(t, "revisions", "extra"); code != 2 {
		t.Errorf("extra argument: exit %d, want 2", code)
	}
}

// TestCPUProfile: --cpuprofile writes a profile that go tool pprof reads
// (gzip-compressed protobuf), once mcpx ends.
func TestCPUProfile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "cpu.prof")
	stdin = strings.NewReader("") // mcpx stdio ends at once
	t.Cleanup(func() { stdin = os.Stdin })
	if code, _, stderr := mcpx(t, "stdio", "--cpuprofile", file); code != 0 {
		t.Fatalf("mcpx stdio --cpuprofile: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(file)
	if err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("the profile is not gzip data: % x..., %v", b[:min(len(b), 4)], err)
	}
	if code, _, stderr := mcpx(t, "stdio", "--cpuprofile", filepath.Join(file, "nope")); code != 1 || !strings.Contains(stderr, "--cpuprofile") {
		t.Errorf("an unwritable profile: exit %d, %q; want 1 and an error naming the flag", code, stderr)
	}
}

// TestServeLimitFlags: a negative --max-* limit is a usage error.
func TestServeLimitFlags(t *testing.T) {
	for _, flag := range []string{"--max-in-flight", "--max-sessions", "--max-streams", "--max-body"} {
		if code, _, stderr := mcpx(t, "serve", flag, "-1"); code != 2 || !strings.Contains(stderr, "--max-*") {
			t.Errorf("serve %s -1: exit %d, %q; want 2 and a message naming the limits", flag, code, stderr)
		}
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, out, _ := mcpx(t, args...)
		if code != 0 || !strings.HasPrefix(out, "mcpx "+version) || !strings.Contains(out, " go1.") {
			t.Errorf("mcpx %v: exit %d, %q; want 0 and \"mcpx %s ... goX\"", args, code, out, version)
		}
	}
}

// A newcomer asking a command for help gets a description and its flags,
// and exit 0: help is not a usage error.
func TestCommandHelp(t *testing.T) {
	for _, cmd := range []string{"serve", "stdio", "revisions"} {
		for _, h := range []string{"-h", "--help"} {
			code, _, errOut := mcpx(t, cmd, h)
			if code != 0 || !strings.Contains(errOut, "Usage: mcpx "+cmd) || !strings.Contains(errOut, "-builtin") && cmd != "revisions" {
				t.Errorf("mcpx %s %s: exit %d, help %q; want 0, a description and the flags", cmd, h, code, errOut)
			}
		}
	}
}

// --config and --builtin name two namespaces; mcpx does not pick one
// silently.
func TestConfigAndBuiltinTogether(t *testing.T) {
	for _, cmd := range []string{"serve", "stdio"} {
		code, _, errOut := mcpx(t, cmd, "--config", "../../examples/mcpx.json", "--builtin", "demo")
		if code != 2 || !strings.Contains(errOut, "--config and --builtin") {
			t.Errorf("mcpx %s --config --builtin: exit %d, %q; want 2 and an error naming both", cmd, code, errOut)
		}
	}
}

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 upstream servers", 1: "1 upstream server", 2: "2 upstream servers"} {
		if got := plural(n, "upstream server"); got != want {
			t.Errorf("plural(%d) = %q, want %q", n, got, want)
		}
	}
}

// A negative limit is a usage error, said before anything starts.
func TestNegativeLimits(t *testing.T) {
	for _, flag := range []string{"--max-in-flight=-1", "--max-sessions=-1", "--max-streams=-1", "--max-body=-1", "--session-idle=-1s", "--body-timeout=-1s", "--write-timeout=-1s", "--large-budget=-1", "--gc-floor=-1"} {
		code, _, errOut := mcpx(t, "serve", flag)
		if code != 2 || !strings.Contains(errOut, "positive") {
			t.Errorf("mcpx serve %s: exit %d, %q; want 2 and a usage error", flag, code, errOut)
		}
	}
}

// TestMemProfileRate: allocations are sampled only where a heap profile
// can be read (the admin listener), or where GODEBUG asks for a rate.
func TestMemProfileRate(t *testing.T) {
	for _, c := range []struct {
		admin, godebug string
		want           int
	}{
		{"", "", 0},
		{"", "gctrace=1", 0},
		{"127.0.0.1:9090", "", 512 << 10},
		{"", "memprofilerate=1", 512 << 10},
	} {
		if got := memProfileRate(c.admin, c.godebug, 512<<10); got != c.want {
			t.Errorf("memProfileRate(%q, %q) = %d, want %d", c.admin, c.godebug, got, c.want)
		}
	}
}
