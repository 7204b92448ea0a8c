package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpx-dev/mcpx/generated/convert"
	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
)

// The upstream side of the edge: mcpx as a client of an upstream server.
// The same generated tables convert in the mirror direction: requests are
// downgraded to the upstream's revision, results upgraded to the hub.

// RoundTrip sends one request to an upstream and returns its response.
// Notifications the upstream sends while the request runs go to the
// transport's own handler, not here.
type RoundTrip func(ctx context.Context, m *jsonrpc.Message) (*jsonrpc.Message, error)

// Dialect is how mcpx speaks to one upstream: the revision it found and
// what the upstream declared. Build it with [Negotiate].
type Dialect struct {
	rev          mcp.Revision
	Capabilities mcp.ServerCapabilities
	ServerInfo   mcp.Implementation
	Instructions string
	client       mcp.Implementation
	clientRaw    json.RawMessage // client, encoded once
	revRaw       json.RawMessage // rev, encoded once (a modern request's _meta names it)
	// capsSpelled: rev spells clientCapabilities as the hub does, so that
	// capabilities in its shape can be set after the downgrade (wireCaps).
	capsSpelled  bool
	wireCapsSeen atomic.Pointer[[]wireCapsEntry]
}

// Revision names the upstream's revision, for logs.
func (d *Dialect) Revision() mcp.Revision { return d.rev }

// Modern reports whether requests carry their revision in _meta and there
// is no session (a transport question: HTTP headers, sessions).
func (d *Dialect) Modern() bool { return IsModern(d.rev) }

// CancelsByNotification reports whether a request cancelled over
// Streamable HTTP needs notifications/cancelled: a modern server takes the
// closed response stream as the cancellation (cancellation page).
func (d *Dialect) CancelsByNotification() bool { return !d.Modern() }

// AsksByRequest reports whether the upstream puts its questions to its
// client as requests (elicitation/create, sampling/createMessage,
// roots/list) rather than in input_required results (MRTR, a modern
// server).
func (d *Dialect) AsksByRequest() bool { return !d.Modern() }

// DiscoverTimeout bounds the server/discover probe on stdio: a legacy
// server may ignore a method it does not know before initialize (stdio
// transport page: anything else, or no answer, means legacy). A modern
// server that was merely slow to start refuses the initialize that
// follows, and is probed once more.
const DiscoverTimeout = 3 * time.Second

// Negotiate finds the upstream's revision the way the specification tells
// a client to: a server/discover request first (stdio.mdx, "era probe";
// streamable-http.mdx: a modern request, whose 400 answer names the
// versions), in the newest modern revision mcpx has. From the versions the
// upstream lists (in a DiscoverResult, or in -32022's data.supported) mcpx
// takes the newest it speaks too ([Pick]): a modern one is used per
// request (after a probe in it, when the first one was refused); a legacy
// one is offered in initialize. An error only a modern server sends fails
// the handshake (see [probeRefused]); anything else means legacy, and an
// initialize for the newest legacy revision follows, answered with the
// revision the upstream picks.
func Negotiate(ctx context.Context, rt RoundTrip, client mcp.Implementation) (*Dialect, error) {
	d := &Dialect{client: client, clientRaw: mustJSON(client)}
	// ids 0-2 are the probe's, initialize's and logging/setLevel's; 3 the
	// second probe's; 4 and 5 the probes repeated in the revision a -32022
	// named.
	p := d.discover(ctx, rt, NewestModern, `0`, `4`)
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case p.modern:
		return d, nil
	case p.err != nil:
		return nil, p.err
	}
	ierr := d.initialize(ctx, rt, p.offer)
	var refused *jsonrpc.Error
	if ierr != nil && p.unanswered && errors.As(ierr, &refused) {
		// The probe went unanswered and initialize was refused: a modern
		// server slow to start (npx fetching its package, say) is
		// listening now, so it is asked once more.
		switch p := d.discover(ctx, rt, NewestModern, `3`, `5`); {
		case p.modern:
			return d, nil
		case p.err != nil:
			return nil, p.err
		}
	}
	if ierr != nil {
		return nil, ierr
	}
	return d, nil
}

// probe is what the server/discover probe found out.
type probe struct {
	modern     bool         // d now holds a modern revision and the upstream's declarations
	offer      mcp.Revision // else: the legacy revision initialize offers
	unanswered bool         // the probe timed out
	err        error        // a refusal only a modern server sends
}

// discover sends the server/discover probe, each attempt bounded by
// DiscoverTimeout: first in revision first (the newest modern one mcpx
// has), then (with the next id) once more in the modern revision a -32022
// named as shared.
func (d *Dialect) discover(ctx context.Context, rt RoundTrip, first mcp.Revision, ids ...string) probe {
	rev := first
	for i, id := range ids {
		params, err := d.discoverParams(rev)
		if err != nil {
			return probe{err: fmt.Errorf("server/discover: %w", err)}
		}
		pctx, cancel := context.WithTimeout(ctx, DiscoverTimeout)
		resp, err := rt(pctx, jsonrpc.Request(json.RawMessage(id), mcp.MethodServerDiscover, params))
		timedOut := errors.Is(pctx.Err(), context.DeadlineExceeded)
		cancel()
		switch {
		case err != nil:
			return probe{offer: LatestLegacy, unanswered: timedOut}
		case resp.Error == nil:
			return d.discovered(resp.Result)
		}
		retry, p := probeRefused(rev, resp.Error)
		switch {
		case retry == "":
			return p
		case i == len(ids)-1:
			return probe{err: fmt.Errorf("server/discover: the upstream refused %s, then %s: %w", first, rev, resp.Error)}
		}
		rev = retry
	}
	panic("edge: discover without an id")
}

// discovered reads a DiscoverResult: the newest revision both sides speak
// is the upstream's when it is modern, and offered in initialize when it
// is legacy; none shared fails the handshake. A result that is no
// DiscoverResult (no supportedVersions, or not decoding as one in the
// picked revision) means legacy.
func (d *Dialect) discovered(raw json.RawMessage) probe {
	var head struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	if mcpjson.Unmarshal(raw, &head) != nil || len(head.SupportedVersions) == 0 {
		return probe{offer: LatestLegacy}
	}
	rev, ok := Pick(mcp.Revisions, head.SupportedVersions)
	switch {
	case !ok:
		return probe{err: fmt.Errorf("server/discover: the upstream supports %s; mcpx speaks %s", strings.Join(head.SupportedVersions, ", "), strings.Join(supportedVersions(), ", "))}
	case !IsModern(rev):
		return probe{offer: rev}
	}
	res, err := d.decode(rev, "DiscoverResult", raw)
	if err != nil {
		return probe{offer: LatestLegacy}
	}
	r := res.(*mcp.DiscoverResult)
	d.setRevision(rev)
	d.Capabilities, d.Instructions = r.Capabilities, r.Instructions
	if info, ok := r.Meta[mcp.MetaKeyServerInfo]; ok {
		_ = mcpjson.Unmarshal(info, &d.ServerInfo)
	}
	return probe{modern: true}
}

// probeRefused reads the error answering a probe sent in sent. Errors only
// a modern server sends mean it wants the request corrected, not a legacy
// handshake (streamable-http.mdx, Backward Compatibility): -32020 and
// -32021 fail the handshake, and -32022 names the versions it speaks, of
// which the newest mcpx speaks too is tried: a modern one by probing again
// in it (retry), a legacy one by initialize. -32022 listing none of mcpx's
// fails; listing none at all, and any other error, mean legacy.
func probeRefused(sent mcp.Revision, e *jsonrpc.Error) (retry mcp.Revision, p probe) {
	p.offer = LatestLegacy
	switch e.Code {
	case jsonrpc.HeaderMismatch, jsonrpc.MissingRequiredClientCapability:
		p.err = fmt.Errorf("server/discover: the upstream speaks a modern revision and refused mcpx's request: %w", e)
	case jsonrpc.UnsupportedProtocolVersion:
		var data struct {
			Supported []string `json:"supported"`
		}
		if mcpjson.Unmarshal(e.Data, &data) != nil || len(data.Supported) == 0 {
			return "", p
		}
		rev, ok := Pick(mcp.Revisions, data.Supported)
		switch {
		case !ok:
			p.err = fmt.Errorf("server/discover: the upstream supports %s; mcpx speaks %s", strings.Join(data.Supported, ", "), strings.Join(supportedVersions(), ", "))
		case !IsModern(rev):
			p.offer = rev
		case rev == sent:
			p.err = fmt.Errorf("server/discover: the upstream refused %s, which it lists as supported: %w", sent, e)
		default:
			return rev, p
		}
	}
	return "", p
}

// initialize runs the legacy handshake, offering offer; any legacy
// revision mcpx serves is accepted in answer (the lifecycle pages: a
// server that does not support the offered version answers with another).
func (d *Dialect) initialize(ctx context.Context, rt RoundTrip, offer mcp.Revision) error {
	p := &mcp.InitializeRequestParams{ProtocolVersion: string(offer), ClientInfo: d.client, Capabilities: relayCapabilities(offer)}
	raw, err := d.encode(offer, p)
	if err != nil {
		return err
	}
	resp, err := rt(ctx, jsonrpc.Request(json.RawMessage(`1`), mcp.MethodInitialize, raw))
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	if resp.Error != nil {
		return fmt.Errorf("initialize: %w", resp.Error)
	}
	var probe struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = mcpjson.Unmarshal(resp.Result, &probe)
	rev, ok := Pick(LegacyRevisions, []string{probe.ProtocolVersion})
	if !ok {
		return fmt.Errorf("initialize: the server answered protocol version %s; mcpx initializes with %s", jsonrpc.Quote(probe.ProtocolVersion), strings.Join(versions(LegacyRevisions), ", "))
	}
	res, err := d.decode(rev, "InitializeResult", resp.Result)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	r := res.(*mcp.InitializeResult)
	d.setRevision(rev)
	d.Capabilities, d.ServerInfo, d.Instructions = r.Capabilities, r.ServerInfo, r.Instructions
	return nil
}

// setRevision settles the upstream's revision.
func (d *Dialect) setRevision(rev mcp.Revision) {
	d.rev, d.revRaw = rev, mustJSON(string(rev))
	d.capsSpelled = revision.Lookup(rev).MetaKey(clientCapabilitiesKey) == clientCapabilitiesKey
}

// Initialized is the notification a legacy upstream expects after
// initialize, or nil for a modern one.
func (d *Dialect) Initialized() *jsonrpc.Message {
	if d.Modern() {
		return nil
	}
	return jsonrpc.Notification(mcp.MethodNotificationsInitialized, nil)
}

// Has reports whether the upstream's revision has method from the client.
func (d *Dialect) Has(method string) bool {
	m, ok := revision.Lookup(d.rev).Method(method)
	return ok && m.FromClient
}

// Request encodes a request's hub params in the upstream's revision; a
// modern upstream also gets the _meta every request carries, declaring no
// client capabilities (mcpx's own requests). See [Dialect.RequestFor].
func (d *Dialect) Request(method string, params any, progress json.RawMessage, logLevel mcp.LoggingLevel) (json.RawMessage, error) {
	return d.RequestFor(method, params, progress, logLevel, nil)
}

// RequestFor is [Dialect.Request] for a request mcpx forwards for a
// client: caps, when not nil, is the clientCapabilities a modern upstream
// is told (what mcpx can relay to that client, server.RelayedCapabilities);
// nil declares none. progress, if not nil, is the progress token to ask
// for; logLevel, if not "", the log messages to ask for (per request for a
// modern upstream; a legacy one is set once, see SetLevel). params must
// not be in use by another goroutine meanwhile, nor its _meta map be
// shared with other params: the request's members are set in that map and
// taken out again once encoded.
func (d *Dialect) RequestFor(method string, params any, progress json.RawMessage, logLevel mcp.LoggingLevel, caps *mcp.ClientCapabilities) (json.RawMessage, error) {
	if !d.Has(method) {
		return nil, jsonrpc.Errorf(jsonrpc.MethodNotFound, nil, "the upstream speaks %s, which has no %s", d.rev, method)
	}
	// The _meta members are set in the hub params' own _meta before
	// encoding once (patching encoded JSON cost a decode and an encode
	// each), and the map put back as it was after: copying it cost a map
	// per request.
	if env, ok := params.(mcp.Enveloped); ok && env.Envelope().Meta != nil {
		p := metaPatch{meta: env.Envelope().Meta}
		defer p.undo()
		if progress != nil {
			p.set("progressToken", progress)
		}
		if d.Modern() {
			// Capabilities already in the upstream's shape (encoded once,
			// wireCaps) are set after the downgrade, which passes the {}
			// held for them as it is; any others are hub JSON it converts.
			c, late := emptyObject, json.RawMessage(nil)
			if !noCaps(caps) {
				if raw, ok := d.wireCaps(caps); ok {
					late = raw
				} else {
					c = mustJSON(caps)
				}
			}
			p.set(protocolVersionKey, d.revRaw)
			p.set(clientCapabilitiesKey, c)
			p.set(mcp.MetaKeyClientInfo, d.clientJSON())
			if logLevel != "" {
				p.set(logLevelKey, levelJSON(logLevel))
			}
			if late != nil {
				wire, err := convert.Downgrade(d.rev, params)
				if err != nil {
					return nil, err
				}
				wm := wireMeta(wire)
				switch {
				case wm == nil: // not a type with a _meta: converted as hub JSON
					p.set(clientCapabilitiesKey, mustJSON(caps))
					return d.encode(d.rev, params)
				case sameMap(*wm, *p.meta): // the downgrade shared the params' map
					p.set(clientCapabilitiesKey, late)
				default: // a copy of the downgrade's own
					(*wm)[clientCapabilitiesKey] = late
				}
				return marshalWire(params, wire)
			}
		}
	}
	return d.encode(d.rev, params)
}

// metaPatch sets members of a _meta in place and puts back what was there.
type metaPatch struct {
	meta  *mcp.Meta
	made  bool // *meta was nil: the map is the patch's
	n     int
	saved [6]struct {
		key string
		old json.RawMessage
		had bool
	}
}

func (p *metaPatch) set(k string, v json.RawMessage) {
	if *p.meta == nil {
		*p.meta, p.made = make(mcp.Meta, len(p.saved)), true
	}
	s := &p.saved[p.n]
	p.n++
	s.key = k
	s.old, s.had = (*p.meta)[k]
	(*p.meta)[k] = v
}

func (p *metaPatch) undo() {
	if p.made {
		*p.meta = nil
		return
	}
	m := *p.meta
	for i := p.n - 1; i >= 0; i-- {
		if s := &p.saved[i]; s.had {
			m[s.key] = s.old
		} else {
			delete(m, s.key)
		}
	}
}

// wireCapsEntry is client capabilities and their JSON in the upstream's
// revision: the clientCapabilities mcpx declares for most calls are one of
// a few, encoded and converted once.
type wireCapsEntry struct {
	caps *mcp.ClientCapabilities // a copy of their own
	raw  json.RawMessage
}

// wireCapsKept is how many capabilities a dialect keeps encoded.
const wireCapsKept = 4

// wireCaps is caps (not nil) as the upstream's revision writes them, what
// the generated downgrade of their hub JSON gives, encoded once for equal
// capabilities; ok is false for those not kept (2025-11-25's tasks, an
// upstream spelling the key otherwise).
func (d *Dialect) wireCaps(caps *mcp.ClientCapabilities) (raw json.RawMessage, ok bool) {
	if !d.capsSpelled || caps.Tasks != nil {
		return nil, false
	}
	seen := d.wireCapsSeen.Load()
	if seen != nil {
		for _, e := range *seen {
			if sameCaps(e.caps, caps) {
				return e.raw, true
			}
		}
	}
	// Decoding the hub JSON gives a copy that shares nothing with caps
	// (whose members may be slices of a request's buffer) and is what the
	// downgrade converted.
	own := new(mcp.ClientCapabilities)
	if err := mcpjson.Unmarshal(mustJSON(caps), own); err != nil {
		return nil, false
	}
	wire, err := convert.Downgrade(d.rev, own)
	if err != nil {
		return nil, false
	}
	if raw, err = json.Marshal(wire); err != nil {
		return nil, false
	}
	kept := []wireCapsEntry{{own, raw}}
	if seen != nil {
		kept = append(kept, (*seen)[:min(len(*seen), wireCapsKept-1)]...)
	}
	d.wireCapsSeen.Store(&kept) // a race lost costs an encoding, no more
	return raw, true
}

// sameCaps reports whether a and b are the same capabilities, member by
// member (TestSameCapsComparesEveryMember); tasks (2025-11-25) are never
// relayed and not compared.
func sameCaps(a, b *mcp.ClientCapabilities) bool {
	ae, be, as, bs := a.Elicitation, b.Elicitation, a.Sampling, b.Sampling
	return bytes.Equal(a.Experimental, b.Experimental) && bytes.Equal(a.Extensions, b.Extensions) && bytes.Equal(a.Roots, b.Roots) &&
		(ae == nil) == (be == nil) && (ae == nil || bytes.Equal(ae.Form, be.Form) && bytes.Equal(ae.URL, be.URL)) &&
		(as == nil) == (bs == nil) && (as == nil || bytes.Equal(as.Context, bs.Context) && bytes.Equal(as.Tools, bs.Tools))
}

// wireMeta points at the _meta of v, a pointer to a revision's type, or is
// nil when the type has none; each type's field is looked up once.
func wireMeta(v any) *mcp.Meta {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		return nil
	}
	i, ok := metaFields.Load(rv.Type())
	if !ok {
		i = -1
		if f, found := rv.Type().Elem().FieldByName("Meta"); found && f.Type == reflect.TypeFor[mcp.Meta]() && len(f.Index) == 1 {
			i = f.Index[0]
		}
		metaFields.Store(rv.Type(), i)
	}
	if i.(int) < 0 {
		return nil
	}
	return rv.Elem().Field(i.(int)).Addr().Interface().(*mcp.Meta)
}

var metaFields sync.Map // reflect.Type of a pointer to a struct -> the index of its Meta field, or -1

// sameMap reports whether a and b are the same map.
func sameMap(a, b mcp.Meta) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// capsJSON is the client capabilities caps (nil: none) as a _meta value,
// in the hub's shape: the generated downgrade converts it with the params
// that carry it. The common empty value ({}) is not encoded.
func capsJSON(caps *mcp.ClientCapabilities) json.RawMessage {
	if noCaps(caps) {
		return emptyObject
	}
	return mustJSON(caps)
}

// noCaps reports whether caps declare nothing (nil or the zero value).
func noCaps(caps *mcp.ClientCapabilities) bool {
	return caps == nil || reflect.ValueOf(caps).Elem().IsZero()
}

// levelJSON is log level l as a _meta value, the known levels encoded once.
func levelJSON(l mcp.LoggingLevel) json.RawMessage {
	if raw, ok := levelsJSON[l]; ok {
		return raw
	}
	return mustJSON(l)
}

var levelsJSON = func() map[mcp.LoggingLevel]json.RawMessage {
	m := map[mcp.LoggingLevel]json.RawMessage{}
	for _, l := range levels() {
		m[mcp.LoggingLevel(l)] = mustJSON(l)
	}
	return m
}()

// modernMeta sets the members of hub _meta m every request to a modern
// upstream carries: the revision (rev, encoded), the client capabilities
// caps (nil: none) and mcpx's clientInfo. They are hub values, converted
// to the upstream's revision with the params that carry them (the
// generated downgrade converts reserved _meta keys like any member).
func (d *Dialect) modernMeta(m mcp.Meta, rev json.RawMessage, caps *mcp.ClientCapabilities) {
	m[protocolVersionKey], m[clientCapabilitiesKey], m[mcp.MetaKeyClientInfo] = rev, capsJSON(caps), d.clientJSON()
}

var emptyObject = json.RawMessage(`{}`)

func (d *Dialect) clientJSON() json.RawMessage {
	if d.clientRaw == nil {
		return mustJSON(d.client)
	}
	return d.clientRaw
}

// SetLevel is the logging/setLevel request that makes a legacy upstream
// that logs send everything (mcpx filters per client), or nil when the
// upstream does not log or sets levels per request.
func (d *Dialect) SetLevel() *jsonrpc.Message {
	if d.Modern() || d.Capabilities.Logging == nil || !d.Has(mcp.MethodLoggingSetLevel) {
		return nil
	}
	raw, err := d.encode(d.rev, &mcp.SetLevelRequestParams{Level: mcp.LoggingLevelDebug})
	if err != nil {
		return nil
	}
	return jsonrpc.Request(json.RawMessage(`2`), mcp.MethodLoggingSetLevel, raw)
}

// Result decodes an upstream's result for method into a new hub value. A
// result of a kind that hub type does not describe (an input_required
// result, a task handle) is an [*UnrelayedResultError], never decoded as
// an empty result.
func (d *Dialect) Result(method string, raw json.RawMessage) (any, error) {
	t := revision.Lookup(d.rev)
	m, ok := t.Method(method)
	if !ok || m.Result == "" {
		return nil, fmt.Errorf("%s has no result for %s", d.rev, method)
	}
	if err := unrelayed(t, method, m.Result, raw); err != nil {
		return nil, d.readInput(err)
	}
	return d.decode(d.rev, m.Result, raw)
}

// Notification decodes the params of a notification from the upstream
// into a new hub value, or nil for a method the revision does not have.
func (d *Dialect) Notification(method string, raw json.RawMessage) (any, error) {
	m, ok := revision.Lookup(d.rev).Method(method)
	if !ok || !m.FromServer || !m.Notification || m.Params == "" {
		return nil, nil
	}
	return d.decode(d.rev, m.Params, raw)
}

// Cancel is the notification that cancels request id upstream. Over HTTP a
// modern upstream takes the closed stream as the cancellation instead; the
// transport decides whether to send it.
func (d *Dialect) Cancel(id json.RawMessage, reason string) *jsonrpc.Message {
	raw, _ := json.Marshal(map[string]any{"requestId": id, "reason": reason})
	return jsonrpc.Notification(mcp.MethodNotificationsCancelled, raw)
}

func (d *Dialect) encode(rev mcp.Revision, params any) (json.RawMessage, error) {
	if params == nil {
		return nil, nil
	}
	if p, ok := params.(*mcp.CallToolRequestParams); ok {
		if raw, ok := writeCallParams(rev, p); ok {
			return raw, nil
		}
	}
	wire, err := convert.Downgrade(rev, params)
	if err != nil {
		return nil, err
	}
	return marshalWire(params, wire) // as encodeResult
}

// marshalWire is mcpjson.Marshal of wire, the downgrade of params. A
// tools/call's long arguments go by mcpjson.MarshalLong (the same bytes
// and errors), which copies them in as they are when they are already
// what the encoder writes, instead of the encoder compacting them again
// a byte at a time; a small request keeps Marshal (MarshalLong costs more
// on one).
func marshalWire(params, wire any) (json.RawMessage, error) {
	if p, ok := params.(*mcp.CallToolRequestParams); ok && len(p.Arguments) >= mcpjson.SplicedMin {
		return mcpjson.MarshalLong(wire)
	}
	return mcpjson.Marshal(wire)
}

func (d *Dialect) decode(rev mcp.Revision, hubName string, raw json.RawMessage) (any, error) {
	wire := convert.New(rev, hubName)
	if wire == nil {
		return nil, fmt.Errorf("%s has no %s", rev, hubName)
	}
	if len(raw) > 0 {
		// raw is a slice of the answer's own buffer (jsonrpc.Decode).
		if err := mcpjson.UnmarshalShared(raw, wire); err != nil {
			return nil, fmt.Errorf("the upstream's %s does not decode: %w", hubName, err)
		}
	}
	return convert.Upgrade(rev, wire)
}

// discoverParams are the params of a server/discover probe in modern
// revision rev: the _meta every modern request carries, declaring no
// client capabilities (mcpx asks for itself), converted to rev like any
// request's.
// A revision mcpx has no tables for (probing as a newer mcpx would) is
// spelled as the newest modern one it has.
func (d *Dialect) discoverParams(rev mcp.Revision) (json.RawMessage, error) {
	p := &mcp.RequestParams{Meta: mcp.Meta{}}
	d.modernMeta(p.Meta, mustJSON(string(rev)), nil)
	if !slices.Contains(mcp.Revisions, rev) {
		return d.encode(NewestModern, p)
	}
	return d.encode(rev, p)
}

// VersionHeader is the MCP-Protocol-Version an HTTP request m to an
// upstream carries, and whether the request is a modern one (which also
// needs Mcp-Method and Mcp-Name); m is nil for the GET stream. d is nil
// while negotiating: then only the server/discover probe is modern, in the
// revision its _meta names, and initialize names no version.
func VersionHeader(d *Dialect, m *jsonrpc.Message) (version string, modern bool) {
	switch {
	case d == nil && m != nil && m.Method == mcp.MethodServerDiscover:
		meta, _ := readMeta(m.Params)
		v, _ := meta.protocolVersion()
		return v, true
	case d == nil:
		return "", false
	}
	return string(d.rev), d.Modern()
}

// ListenFilter is what to ask a modern upstream's subscriptions/listen
// for: the list changes it declares; ok is false when there is nothing to
// listen for, or the upstream is legacy (it sends them unasked).
func (d *Dialect) ListenFilter() (f mcp.SubscriptionFilter, ok bool) {
	if !d.Modern() || !d.Has(mcp.MethodSubscriptionsListen) {
		return f, false
	}
	caps, yes := d.Capabilities, mcp.Ptr(true)
	if caps.Tools != nil && caps.Tools.ListChanged != nil && *caps.Tools.ListChanged {
		f.ToolsListChanged = yes
	}
	if caps.Prompts != nil && caps.Prompts.ListChanged != nil && *caps.Prompts.ListChanged {
		f.PromptsListChanged = yes
	}
	if caps.Resources != nil && caps.Resources.ListChanged != nil && *caps.Resources.ListChanged {
		f.ResourcesListChanged = yes
	}
	return f, f.ToolsListChanged != nil || f.PromptsListChanged != nil || f.ResourcesListChanged != nil
}
