package edge

import (
	"context"
	"errors"
	"net/http"

	"encoding/json"
	"github.com/mcpx-dev/mcpx/generated/convert"
	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/tasks"
)

// fail turns err into the error response rev expects, with the HTTP status
// 2026-07-28 requires for it.
func (e *Edge) fail(id json.RawMessage, rev mcp.Revision, err error) Reply {
	je := e.rpcError(rev, err)
	return Reply{Msg: jsonrpc.ErrorResponse(id, je), Status: status(rev, je, err), Rev: rev}
}

// status is the HTTP status of error je (from err) answered in rev.
func status(rev mcp.Revision, je *jsonrpc.Error, err error) int {
	if je.Code == jsonrpc.ParseError || je.Code == jsonrpc.InvalidRequest {
		return http.StatusBadRequest
	}
	if IsModern(rev) {
		switch {
		case errors.Is(err, tasks.ErrUnavailable):
			// A 2026-07-28 request stands alone: 503 (Retry-After, set by
			// the transport) tells the client and any load balancer to
			// try it again. A legacy session's client reads the JSON-RPC
			// error instead (SDKs turn a non-2xx into a bare transport
			// failure), so it gets -32603 with 200.
			return http.StatusServiceUnavailable
		case je.Code == jsonrpc.MethodNotFound:
			return http.StatusNotFound
		case je.Code == jsonrpc.HeaderMismatch, je.Code == jsonrpc.MissingRequiredClientCapability, je.Code == jsonrpc.UnsupportedProtocolVersion:
			return http.StatusBadRequest
		case je.Code == jsonrpc.InvalidParams && errors.As(err, new(*metaError)):
			return http.StatusBadRequest
		}
	}
	return http.StatusOK
}

// metaError marks a missing or malformed required _meta member: HTTP 400.
type metaError struct{ rpc *jsonrpc.Error }

func (e *metaError) Error() string { return e.rpc.Error() }

func (e *Edge) rpcError(rev mcp.Revision, err error) *jsonrpc.Error {
	var (
		missing  *server.MissingCapabilityError
		je       *jsonrpc.Error
		me       *metaError
		notFound *server.ResourceNotFoundError
		invalid  *server.InvalidParamsError
	)
	switch {
	case errors.As(err, &me):
		return me.rpc
	case errors.As(err, &je):
		return je
	case errors.As(err, &missing):
		if !IsModern(rev) {
			return jsonrpc.Errorf(jsonrpc.InvalidRequest, nil, "%s", missing.Error())
		}
		caps, err := convert.Downgrade(rev, &missing.Required)
		if err != nil {
			caps = json.RawMessage(`{}`)
		}
		return jsonrpc.Errorf(jsonrpc.MissingRequiredClientCapability, map[string]any{"requiredCapabilities": caps}, "%s", missing.Error())
	case errors.As(err, &notFound):
		// 2026-07-28 moved resource not found to -32602 and forbids -32002;
		// every earlier revision SHOULD use -32002. Both carry data.uri.
		code := int64(jsonrpc.ResourceNotFound)
		if IsModern(rev) {
			code = jsonrpc.InvalidParams
		}
		return jsonrpc.Errorf(code, map[string]string{"uri": notFound.URI}, "resource not found: %s", jsonrpc.Clip(notFound.URI))
	case errors.As(err, &invalid), errors.Is(err, server.ErrUnknownTool), errors.Is(err, server.ErrUnknownPrompt):
		return jsonrpc.Errorf(jsonrpc.InvalidParams, nil, "%s", err.Error())
	case errors.Is(err, server.ErrUnsupported):
		return jsonrpc.Errorf(jsonrpc.MethodNotFound, nil, "%s", err.Error())
	case errors.Is(err, tasks.ErrUnavailable):
		e.log().Warn("the task store is unavailable; a request that needs it failed", "err", err)
		return jsonrpc.Errorf(jsonrpc.InternalError, nil, "%s; try again later", err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return jsonrpc.Errorf(jsonrpc.InternalError, nil, "the request timed out")
	case errors.Is(err, context.Canceled):
		// The client went away or the server is closing: usually nobody
		// reads this, and it is no failure worth a log line.
		return jsonrpc.Errorf(jsonrpc.InternalError, nil, "the request was cancelled before it finished")
	}
	e.log().Warn("request failed", "revision", rev, "err", err)
	return jsonrpc.Errorf(jsonrpc.InternalError, nil, "%s", err.Error())
}
