package peertest

import (
	"slices"
	"strings"
	"testing"
)

// What the demo namespace offers (runtime/demo), as a client sees it.
const (
	echoText       = "Hello from a real client: ✓ «quotes» and\nnew lines"
	readmeURI      = "demo://readme"
	readmeHeading  = "# The mcpx demo namespace"
	logoURI        = "demo://logo.png"
	pngSignature   = "\x89PNG\r\n\x1a\n"
	noteTemplate   = "demo://notes/{id}"
	welcomeURI     = "demo://notes/welcome"
	welcomeText    = "Welcome to mcpx!"
	missingNoteURI = "demo://notes/no-such-note"
	summarizeInput = "MCP lets models use tools, read resources and follow prompts."
	summarizeAsk   = "as a short bulleted list of the key points"
)

// transports are the two ways the tests reach mcpx.
var transports = []string{"stdio", "streamable HTTP"}

var (
	wantTools     = []string{"add", "countdown", "current_time", "echo", "introduce"}
	wantToolTitle = map[string]string{"echo": "Echo", "add": "Add two numbers", "current_time": "Current time", "countdown": "Countdown", "introduce": "Introduce yourself"}
	wantResources = map[string]struct{ mime, title string }{
		readmeURI: {"text/markdown", "About the demo namespace"},
		logoURI:   {"image/png", "Demo logo"},
	}
	wantPrompts     = []string{"greeting", "summarize"}
	wantPromptTitle = map[string]string{"greeting": "Greeting", "summarize": "Summarize text"}
	// completing summarize's style from "b", and a note id from "s".
	wantStyles  = []string{"brief", "bullet-points"}
	wantNoteIDs = []string{"shopping-list"}
)

// resourceNotFound is the error code for reading a resource that does
// not exist: -32002 until 2026-07-28 moved it to -32602 (Invalid Params).
func resourceNotFound(rev string) int64 {
	if rev >= "2026-07-28" {
		return -32602
	}
	return -32002
}

// title checks a title that rev has (2025-06-18 on) or must not carry.
func checkTitle(t *testing.T, rev, what, got, want string) {
	t.Helper()
	if !hasTitles(rev) {
		want = ""
	}
	if got != want {
		t.Errorf("%s: title %q, want %q at %s", what, got, want, rev)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func checkNames(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(sorted(got), sorted(want)) {
		t.Errorf("%s: %q, want %q", what, got, want)
	}
}

func checkContains(t *testing.T, what, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s: %q does not contain %q", what, got, w)
		}
	}
}
