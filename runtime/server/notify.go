package server

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// Notifier delivers notifications that belong to one request (progress,
// log messages) to the client that made it, in the client's revision. The
// edge installs one in every handler's context.
type Notifier interface {
	// Notify sends a notification; params is a pointer to a hub params type.
	// It reports false when the client cannot receive it (no stream, a
	// revision without the method, a level below the client's).
	Notify(method string, params any) bool
	// ProgressToken is the token the request asked progress for, or nil.
	ProgressToken() json.RawMessage
	// LogLevel is the least severe level the client wants, or "" for none.
	LogLevel() mcp.LoggingLevel
}

type notifierKey struct{}

// WithNotifier returns ctx carrying n.
func WithNotifier(ctx context.Context, n Notifier) context.Context {
	return context.WithValue(ctx, notifierKey{}, n)
}

func notifier(ctx context.Context) Notifier {
	n, _ := ctx.Value(notifierKey{}).(Notifier)
	return n
}

// Progress reports progress on the request ctx belongs to, if the client
// asked for it (a progressToken). progress must increase from call to call.
// It does not wait on the client: a client that is behind gets the latest
// progress (earlier ones still waiting are replaced), or none (see
// the edge's Sink); so it may be called from a goroutine that serves others,
// such as the one reading a shared upstream.
func Progress(ctx context.Context, progress, total float64, message string) {
	n := notifier(ctx)
	if n == nil || n.ProgressToken() == nil {
		return
	}
	p := &mcp.ProgressNotificationParams{ProgressToken: n.ProgressToken(), Progress: progress, Message: message}
	if total > 0 {
		p.Total = &total
	}
	n.Notify(mcp.MethodNotificationsProgress, p)
}

// Log sends a log message about the request ctx belongs to, if the client
// asked for messages of that severity. mcpx's own code never logs to
// clients; this is for namespaces whose tools do (the conformance fixture).
func Log(ctx context.Context, level mcp.LoggingLevel, logger string, data any) {
	n := notifier(ctx)
	if n == nil || !Wants(n.LogLevel(), level) {
		return
	}
	b, err := json.Marshal(data)
	if err != nil {
		return
	}
	n.Notify(mcp.MethodNotificationsMessage, &mcp.LoggingMessageNotificationParams{Level: level, Logger: logger, Data: b})
}

// severity orders the syslog levels of RFC 5424, least severe first.
var severity = map[mcp.LoggingLevel]int{
	mcp.LoggingLevelDebug: 0, mcp.LoggingLevelInfo: 1, mcp.LoggingLevelNotice: 2, mcp.LoggingLevelWarning: 3,
	mcp.LoggingLevelError: 4, mcp.LoggingLevelCritical: 5, mcp.LoggingLevelAlert: 6, mcp.LoggingLevelEmergency: 7,
}

// ValidLevel reports whether l is one of the eight levels.
func ValidLevel(l mcp.LoggingLevel) bool { _, ok := severity[l]; return ok }

// Wants reports whether a client whose threshold is min wants a message at
// level; an empty threshold wants nothing.
func Wants(min, level mcp.LoggingLevel) bool {
	if min == "" {
		return false
	}
	return severity[level] >= severity[min]
}

type clientCapsKey struct{}

// WithClientCapabilities returns ctx carrying the capabilities the client
// declared (on the request for 2026-07-28, at initialize for the others),
// read by caps the first time a handler asks: most never do. The edge
// installs it in every handler's context.
func WithClientCapabilities(ctx context.Context, caps func() *mcp.ClientCapabilities) context.Context {
	return context.WithValue(ctx, clientCapsKey{}, sync.OnceValue(caps))
}

// ClientCapabilities returns what the client of the request ctx belongs to
// declared; an empty value when nothing is known.
func ClientCapabilities(ctx context.Context) *mcp.ClientCapabilities {
	var c *mcp.ClientCapabilities
	switch v := ctx.Value(clientCapsKey{}).(type) {
	case func() *mcp.ClientCapabilities:
		c = v()
	case *requestCtx:
		c = v.clientCapabilities()
	}
	if c != nil {
		return c
	}
	return &mcp.ClientCapabilities{}
}

// ProgressToken is the progress token of the request ctx belongs to, or
// nil: a gateway asks its upstream for progress only when its client did.
func ProgressToken(ctx context.Context) json.RawMessage {
	if n := notifier(ctx); n != nil {
		return n.ProgressToken()
	}
	return nil
}

// LogLevel is the least severe log level the client of the request ctx
// belongs to wants, or "" for none.
func LogLevel(ctx context.Context) mcp.LoggingLevel {
	if n := notifier(ctx); n != nil {
		return n.LogLevel()
	}
	return ""
}
