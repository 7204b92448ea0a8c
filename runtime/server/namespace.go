// Package server serves MCP methods in hub types: it knows what a tools/list
// or a resources/read means and asks a [Namespace] for the content. It never
// sees a revision: package edge upgrades every request to the hub shape
// before it arrives here and downgrades every result after it leaves.
package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// Namespace is a source of tools, resources, prompts and completions in hub
// types: the built-in demo, the conformance fixture, and (later) each
// upstream server. A method a namespace does not support returns
// [ErrUnsupported]; [Server] then leaves its capability undeclared.
//
// Lists are returned whole; the server paginates them. A namespace may
// return a list it shares between calls: callers only read it. Handlers may call
// [Progress] and [Log] with the context they are given, and must stop when
// it is cancelled.
//
// A request the interface does not name (one a new revision adds) reaches
// a namespace that implements its generated mcp.<Method>Handler, or a
// [Forwarder]; for any other it is method not found (see [Server.Handle]).
type Namespace interface {
	// Capabilities reports which features the namespace has; a nil member
	// is a feature it lacks.
	Capabilities() mcp.ServerCapabilities

	// Lists are whole; the server paginates them. The other methods are
	// the generated handler interfaces of their requests (mcp.Dispatch).
	ListTools(ctx context.Context) ([]mcp.Tool, error)
	mcp.CallToolHandler

	ListResources(ctx context.Context) ([]mcp.Resource, error)
	ListResourceTemplates(ctx context.Context) ([]mcp.ResourceTemplate, error)
	mcp.ReadResourceHandler

	ListPrompts(ctx context.Context) ([]mcp.Prompt, error)
	mcp.GetPromptHandler

	mcp.CompleteHandler
}

// Versioned is implemented by a namespace that can tell when its lists
// change: Version returns a number that changes whenever ListTools,
// ListResources, ListResourceTemplates or ListPrompts would answer
// differently. While it stays the same, the edge answers list requests from
// the encoding it made for each revision, instead of encoding 50 tools again.
type Versioned interface {
	Version() uint64
}

// Errors a namespace returns; the edge turns them into the JSON-RPC error
// each revision expects.
var (
	// ErrUnsupported: the namespace has no such feature (method not found).
	ErrUnsupported = errors.New("not supported by this namespace")
	// ErrUnknownTool, ErrUnknownPrompt: no such name (invalid params).
	ErrUnknownTool   = errors.New("unknown tool")
	ErrUnknownPrompt = errors.New("unknown prompt")
)

// ResourceNotFoundError says a resource does not exist. Revisions disagree
// on its code (-32002 before 2026-07-28, -32602 from it), so it is a type
// the edge recognises, not a code.
type ResourceNotFoundError struct{ URI string }

func (e *ResourceNotFoundError) Error() string { return fmt.Sprintf("resource not found: %s", e.URI) }

// InvalidParamsError is a request the namespace cannot serve as given: a
// missing prompt argument, a bad completion reference. It becomes -32602.
type InvalidParamsError struct{ Reason string }

func (e *InvalidParamsError) Error() string { return e.Reason }

// InvalidParams returns an [InvalidParamsError] with a formatted reason.
func InvalidParams(format string, args ...any) error {
	return &InvalidParamsError{Reason: fmt.Sprintf(format, args...)}
}

// MissingCapabilityError says the request needs a client capability the
// client did not declare: sampling for a tool that samples, say. The edge
// answers a 2026-07-28 client -32021 with data.requiredCapabilities (HTTP
// 400); legacy revisions define no such error, and get -32600.
type MissingCapabilityError struct{ Required mcp.ClientCapabilities }

func (e *MissingCapabilityError) Error() string {
	return "the request needs a client capability the client did not declare"
}

// Changer is implemented by a namespace whose lists change: Changes
// delivers the list_changed notification method for each change
// ("notifications/tools/list_changed", ...), coalesced as it likes. The
// edge then declares listChanged and tells the clients that can hear it.
type Changer interface {
	Changes() <-chan string
}
