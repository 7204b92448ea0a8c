package gateway

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"github.com/mcpx-dev/mcpx/runtime/auth"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/requeststate"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// Bridge 2 (issue 12): a legacy upstream asks (elicitation/create,
// sampling/createMessage, roots/list) during the call of a 2026-07-28
// client, which takes questions only inside an input_required result. The
// upstream's call runs in a goroutine of its own (parkable); when its
// question comes, the client's request is answered at once with it, under
// a key of mcpx's, and a requestState sealed for the request that names
// the call, which stays parked: its goroutine keeps waiting for the
// upstream, and the upstream's question for its answer. The client's retry
// (the same params, inputResponses and that state) finds the call, hands
// the answer to the upstream under the upstream's id (the relay writes it
// in the upstream's revision), and waits for the call's next event:
// another question (another round) or the result, which answers the
// retry. Each round's state resumes the call once; a call parked longer
// than ParkTimeout is given up: its question is answered with an error and
// the call cancelled.

// DefaultParkTimeout is how long a parked call waits for the client's
// retry when Gateway.ParkTimeout is 0: a person may be answering.
const DefaultParkTimeout = 5 * time.Minute

// DefaultMaxParked is how many calls may be parked at once when
// Gateway.MaxParked is 0; a question past it fails -32603 to the upstream.
const DefaultMaxParked = 256

// expiredKept is how long, after a parked call expired, a retry is told
// so (rather than that mcpx does not hold it): its deadline again, at
// least a minute.
func (g *Gateway) expiredKept() time.Duration {
	return max(g.parkTimeout(), time.Minute)
}

func (g *Gateway) parkTimeout() time.Duration {
	if g.ParkTimeout > 0 {
		return g.ParkTimeout
	}
	return DefaultParkTimeout
}

// parkedCalls is g.Parked, or an in-memory store of MaxParked calls,
// which tells a late retry its call expired for expiredKept after.
func (g *Gateway) parkedCalls() ParkedCalls {
	g.parkOnce.Do(func() {
		if g.Parked == nil {
			n := g.MaxParked
			if n <= 0 {
				n = DefaultMaxParked
			}
			g.Parked = NewMemoryParked(n, g.expiredKept())
		}
	})
	return g.Parked
}

// parkedCall is a parked call's live side, in this process.
type parkedCall struct {
	id     string
	m      *member
	method string
	owner  string // the principal of the request that started it (auth.Owner)

	questions chan *question // the upstream's questions, one round each
	done      chan struct{}  // closed when the upstream answered the call
	res       any
	err       error
	cancel    context.CancelFunc

	mu      sync.Mutex
	cur     *driver   // the client request waiting on the call; nil while parked
	waiting *question // the question parked for the client's answer
	timer   *time.Timer
	rounds  int // the last round's number
}

// driver is the client request a call's events go to: the first, then
// each retry.
type driver struct {
	asker  server.ResultAsker
	n      server.Notifier // nil when the edge gave none
	client any             // the client's params
}

type question struct {
	method string
	params any
	answer chan answer // buffered: whoever answers never waits
}

type answer struct {
	res any
	err error
}

// call runs method on m for the client's params (up: the upstream's
// copy). A retry whose state names a parked call (parked, from resume)
// resumes it; a 2026-07-28 client's call that may be answered
// input_required is parkable; any other goes straight to the upstream.
func (g *Gateway) call(ctx context.Context, m *member, method string, client, up any, parked string) (any, error) {
	id, round, ok, err := parkedCallOf(parked)
	if err != nil {
		return nil, err
	}
	a := server.AsksByResult(ctx)
	if ok {
		if a == nil {
			return nil, server.InvalidParams("requestState names a call parked for a 2026-07-28 client; this request is not one")
		}
		return g.resumeParked(ctx, m, method, id, round, g.driver(ctx, a, client))
	}
	// The edge says whether this request may be answered input_required
	// (a 2026-07-28 client, a method the MRTR page allows it on); only a
	// call to an upstream that asks by request needs parking.
	u, release, err := g.upstream(ctx, m) // perclient.go
	if err != nil {
		return nil, err
	}
	if a == nil || !server.TakesInputRequired(ctx) || !asksByRequest(u) {
		defer release()
		return u.Call(ctx, method, up)
	}
	if asksInTasksOnly(u) {
		// Its questions come only while mcpx follows a task it made of
		// the call: the call is made here, and parked only if a task
		// comes, sparing a plain call the parking's goroutine, contexts
		// and channels.
		tp := &taskPark{g: g, ctx: ctx, m: m, method: method, client: client, a: a, release: release}
		res, err := u.Call(server.WithTaskParker(ctx, tp), method, up)
		if !tp.parked { // else the follow's goroutine releases
			release()
		}
		return res, err
	}
	return g.parkCall(ctx, ctx, m, method, client, a, release, func(pctx context.Context) (any, error) {
		// Its result may answer a later request (a retry), not this one.
		return u.Call(server.WithoutResultLane(pctx), method, up)
	})
}

// parkCall runs run, m's call of method for the client's params, in a
// goroutine of its own as a parked call: its questions come to the
// parked call, its notifications go to whichever client request waits on
// it, and it outlives the request that started it (ctx's), not the
// gateway. Its context has base's values (ctx, or the upstream client's
// context of the call whose task it follows). It returns the request's
// answer: the result, or the first question. release is called when run
// is over.
func (g *Gateway) parkCall(ctx, base context.Context, m *member, method string, client any, a server.ResultAsker, release func(), run func(context.Context) (any, error)) (any, error) {
	pc := &parkedCall{id: g.parkIDFor(), m: m, method: method, owner: auth.Owner(ctx), questions: make(chan *question), done: make(chan struct{})}
	pctx, cancel := context.WithCancel(context.WithoutCancel(base))
	stop := context.AfterFunc(g.ctx, cancel)
	pc.cancel = cancel
	pctx = server.WithNotifier(server.WithAsker(pctx, pc), pc)
	g.live.Store(pc.id, pc)
	// The client request waits on the call before the call starts, so
	// that the upstream request carries its progress token and the
	// upstream's first notifications reach it (await sets it again).
	d := g.driver(ctx, a, client)
	pc.attach(d)
	go func() {
		defer release()
		defer stop()
		defer cancel()
		pc.res, pc.err = run(pctx)
		close(pc.done)
	}()
	return g.await(ctx, pc, d)
}

// taskPark is the server.TaskParker of a call to an upstream that asks
// only within its tasks (asksInTasksOnly): the task's follow is parked as
// a call is (parkCall), and the call's upstream slot (release) is then
// the follow's.
type taskPark struct {
	g       *Gateway
	ctx     context.Context // the client request's, in the gateway
	m       *member
	method  string
	client  any
	a       server.ResultAsker
	release func()
	parked  bool
}

func (p *taskPark) ParkTask(ctx context.Context, follow func(context.Context) (any, error)) (any, error) {
	if p.parked {
		return nil, errors.New("mcpx: a call's task parked twice")
	}
	p.parked = true
	// ctx is the upstream client's for the call (its span, its progress
	// guard), whose values the follow keeps; the request waiting on it is
	// p.ctx's. Nothing under the follow is parked again.
	return p.g.parkCall(p.ctx, ctx, p.m, p.method, p.client, p.a, p.release, func(pctx context.Context) (any, error) {
		return follow(server.WithTaskParker(pctx, nil))
	})
}

// attach makes d the client request waiting on pc: its notifications
// (progress, log messages) go to d's client from now on.
func (pc *parkedCall) attach(d *driver) {
	pc.mu.Lock()
	pc.cur = d
	pc.mu.Unlock()
}

func (g *Gateway) driver(ctx context.Context, a server.ResultAsker, client any) *driver {
	n := server.NotifierOf(ctx)
	return &driver{asker: a, n: n, client: client}
}

// parkedCallOf reads the parked call a requestState named ("id:round",
// resume): its id and round; ok is false for none.
func parkedCallOf(parked string) (id string, round int, ok bool, err error) {
	if parked == "" {
		return "", 0, false, nil
	}
	i := strings.LastIndexByte(parked, ':')
	r, cerr := strconv.Atoi(parked[i+1:])
	if i < 0 || cerr != nil {
		return "", 0, false, server.InvalidParams("requestState names a parked call in a form this mcpx does not read")
	}
	return parked[:i], r, true, nil
}

// await waits, for the client request d, for pc's next event: the result
// (the call is over), or a question, which parks the call and answers d
// with it. A question d's client did not declare it can take is refused
// to the upstream, which goes on. d's client giving up ends the call.
func (g *Gateway) await(ctx context.Context, pc *parkedCall, d *driver) (any, error) {
	pc.attach(d)
	defer pc.attach(nil)
	for {
		select {
		case <-pc.done:
			g.unpark(pc)
			return pc.res, pc.err
		case q := <-pc.questions:
			if err := d.asker.MayAsk(q.method, q.params); err != nil {
				g.log.Info("upstream question refused: the client did not declare it can take it", "upstream", pc.m.name, "method", q.method, "err", err)
				q.answer <- answer{err: err}
				continue
			}
			ir, err := g.park(pc, q, d, 0)
			if err != nil {
				g.log.Warn("upstream question not put to the client", "upstream", pc.m.name, "method", q.method, "err", err)
				q.answer <- answer{err: err}
				continue
			}
			return nil, ir
		case <-ctx.Done():
			pc.cancel()
			g.unpark(pc)
			return nil, ctx.Err()
		}
	}
}

// unpark forgets pc: its call is over.
func (g *Gateway) unpark(pc *parkedCall) {
	g.live.Delete(pc.id)
	g.parkedCalls().Forget(pc.id)
}

// park records q as waiting for d's client in round (0: the round after
// the last) and returns the input_required answer asking it.
func (g *Gateway) park(pc *parkedCall, q *question, d *driver, round int) (*server.InputRequired, error) {
	ask, err := inputRequest(q)
	if err != nil {
		return nil, err
	}
	rec := ParkedCall{ID: pc.id, Namespace: pc.m.name, Method: pc.method, Round: round, Question: q.method, Status: Parked, Deadline: time.Now().Add(g.parkTimeout())}
	if rec.Round == 0 {
		pc.mu.Lock()
		pc.rounds++
		rec.Round = pc.rounds
		pc.mu.Unlock()
	}
	rec.Key = "mcpx-q" + strconv.Itoa(rec.Round)
	b, err := requeststate.BindParams(pc.method, d.client, pc.m.name)
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.InternalError, nil, "mcpx cannot park the call: %v", err)
	}
	b.Owner = pc.owner
	// The state outlives the deadline by as long as the store tells a
	// late retry that its call expired.
	state, err := g.sealer().Seal(b, requeststate.Payload{Parked: pc.id + ":" + strconv.Itoa(rec.Round)}, g.parkTimeout()+g.expiredKept())
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.InternalError, nil, "mcpx cannot park the call: %v", err)
	}
	if err := g.parkedCalls().Park(rec); err != nil {
		if errors.Is(err, ErrParkFull) {
			return nil, jsonrpc.Errorf(jsonrpc.InternalError, nil, "mcpx cannot put %s to its 2026-07-28 client: too many calls are parked waiting for clients' answers", q.method)
		}
		return nil, jsonrpc.Errorf(jsonrpc.InternalError, nil, "mcpx cannot park the call: %v", err)
	}
	g.arm(pc, q, rec)
	res := &mcp.InputRequiredResult{ResultType: "input_required", InputRequests: map[string]mcp.InputRequest{rec.Key: ask}, RequestState: state}
	return &server.InputRequired{Result: res, Err: jsonrpc.Errorf(jsonrpc.InternalError, nil, "%s cannot be asked of this client", q.method)}, nil
}

// arm parks q and starts rec's deadline.
func (g *Gateway) arm(pc *parkedCall, q *question, rec ParkedCall) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	pc.waiting = q
	if pc.timer != nil {
		pc.timer.Stop()
	}
	pc.timer = time.AfterFunc(time.Until(rec.Deadline), func() { g.expire(pc, rec.Round) })
}

// expire gives up pc's round, unless a retry claimed it first: the
// upstream's question is answered with an error, and the call cancelled.
func (g *Gateway) expire(pc *parkedCall, round int) {
	rec, err := g.parkedCalls().Claim(pc.id, round)
	if err != nil {
		return
	}
	g.parkedCalls().Expire(pc.id, time.Now())
	g.live.Delete(pc.id)
	pc.mu.Lock()
	q := pc.waiting
	pc.waiting = nil
	pc.mu.Unlock()
	g.log.Info("a parked call expired: the client did not retry in time; the upstream call is cancelled", "upstream", pc.m.name, "method", pc.method, "question", rec.Question, "after", g.parkTimeout())
	if q != nil {
		q.answer <- answer{err: jsonrpc.Errorf(jsonrpc.InternalError, nil, "the client did not answer %s within %s", rec.Question, g.parkTimeout())}
	}
	pc.cancel()
}

// resumeParked hands the retry's answer to the question of parked call id
// and waits for the call's next event. A response missing is asked again
// (a new round); one that is not the question's result is -32602, and the
// same state may be retried with a valid one.
func (g *Gateway) resumeParked(ctx context.Context, m *member, method, id string, round int, d *driver) (any, error) {
	rec, err := g.parkedCalls().Claim(id, round)
	switch {
	case errors.Is(err, ErrNoParked):
		return nil, server.InvalidParams("requestState names a parked call mcpx no longer holds (it finished, or mcpx restarted); send the request again without requestState")
	case errors.Is(err, ErrParkExpired):
		return nil, server.InvalidParams("requestState names a parked call that expired: no retry came within %s, and its upstream call was cancelled; send the request again without requestState", g.parkTimeout())
	case errors.Is(err, ErrParkUsed):
		return nil, server.InvalidParams("requestState was already used: its answer was delivered to the parked call; use the requestState of the latest answer")
	case err != nil:
		return nil, server.InvalidParams("requestState names a parked call mcpx cannot resume: %v", err)
	}
	v, _ := g.live.Load(id)
	pc, _ := v.(*parkedCall)
	if pc == nil || rec.Namespace != m.name || rec.Method != method {
		g.parkedCalls().Forget(id)
		return nil, server.InvalidParams("requestState names a parked call this mcpx process does not hold; send the request again without requestState")
	}
	pc.mu.Lock()
	q := pc.waiting
	pc.waiting = nil
	if pc.timer != nil {
		pc.timer.Stop()
	}
	pc.mu.Unlock()
	if q == nil { // cannot happen: a Parked record has its question
		g.unpark(pc)
		pc.cancel()
		return nil, server.InvalidParams("requestState names a parked call with no question waiting")
	}
	resp, ok := inputResponses(d.client)[rec.Key]
	if !ok {
		// The MRTR page: ask again what is missing.
		ir, err := g.park(pc, q, d, 0)
		if err != nil {
			g.unpark(pc)
			q.answer <- answer{err: err}
			return nil, err
		}
		return nil, ir
	}
	res, err := answerOf(rec, resp)
	if err != nil {
		// The same round stays open until its deadline.
		rec.Status = Parked
		if perr := g.parkedCalls().Park(rec); perr == nil {
			g.arm(pc, q, rec)
		}
		return nil, err
	}
	// The retry waits on the call before the upstream has the answer, so
	// that what it sends at once (progress) reaches the retry's client.
	pc.attach(d)
	q.answer <- answer{res: res}
	return g.await(ctx, pc, d)
}

// inputRequest is the question q as an inputRequests entry (hub types:
// the edge writes it in the client's revision).
func inputRequest(q *question) (mcp.InputRequest, error) {
	switch p := q.params.(type) {
	case *mcp.ElicitRequestParams:
		return mcp.InputRequest{Value: &mcp.ElicitRequest{Params: *p}}, nil
	case *mcp.CreateMessageRequestParams:
		return mcp.InputRequest{Value: &mcp.CreateMessageRequest{Params: *p}}, nil
	default:
		// roots/list carries nothing but _meta, which is the upstream's
		// about its own request, not the client's. Its params are
		// optional, but the Go SDK's client (v1.8.0) fails on a request
		// without them: an empty object is sent.
		if q.method == mcp.MethodRootsList {
			return mcp.InputRequest{Value: &mcp.ListRootsRequest{Params: &mcp.ListRootsRequestParams{}}}, nil
		}
	}
	return mcp.InputRequest{}, jsonrpc.Errorf(jsonrpc.MethodNotFound, nil, "mcpx does not put %s to a 2026-07-28 client", q.method)
}

// inputResponses is the retry's InputResponses member, by reflection as
// requestState is (every parkable method's params have one).
func inputResponses(client any) map[string]mcp.InputResponse {
	switch p := client.(type) {
	case *mcp.CallToolRequestParams:
		return p.InputResponses
	case *mcp.GetPromptRequestParams:
		return p.InputResponses
	case *mcp.ReadResourceRequestParams:
		return p.InputResponses
	}
	return nil
}

// answerOf is the client's response to rec's question as the hub result
// of its method, or -32602 when it is another kind of result.
func answerOf(rec ParkedCall, resp mcp.InputResponse) (any, error) {
	var ok bool
	switch rec.Question {
	case mcp.MethodElicitationCreate:
		_, ok = resp.Value.(*mcp.ElicitResult)
	case mcp.MethodSamplingCreateMessage:
		_, ok = resp.Value.(*mcp.CreateMessageResult)
	case mcp.MethodRootsList:
		_, ok = resp.Value.(*mcp.ListRootsResult)
	}
	if !ok {
		return nil, server.InvalidParams("inputResponses[%s] does not answer %s: want its result", jsonrpc.Quote(rec.Key), rec.Question)
	}
	return resp.Value, nil
}

// parkID is a fresh random id for a parked call.
func parkID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Ask is the parked call's [server.Asker]: the upstream's question goes
// to whichever client request waits on the call (parking it), and its
// answer comes from the retry.
func (pc *parkedCall) Ask(ctx context.Context, method string, params any) (any, error) {
	q := &question{method: method, params: params, answer: make(chan answer, 1)}
	select {
	case pc.questions <- q:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case a := <-q.answer:
		return a.res, a.err
	case <-ctx.Done():
		// An expired call is answered, then cancelled: the answer wins.
		select {
		case a := <-q.answer:
			return a.res, a.err
		default:
		}
		return nil, ctx.Err()
	}
}

// The parked call's [server.Notifier]: the notifier of the client request
// waiting on it, none while parked.

func (pc *parkedCall) driverNotifier() server.Notifier {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.cur == nil {
		return nil
	}
	return pc.cur.n
}

func (pc *parkedCall) Notify(method string, params any) bool {
	if n := pc.driverNotifier(); n != nil {
		return n.Notify(method, params)
	}
	return false
}

func (pc *parkedCall) ProgressToken() json.RawMessage {
	if n := pc.driverNotifier(); n != nil {
		return n.ProgressToken()
	}
	return nil
}

func (pc *parkedCall) LogLevel() mcp.LoggingLevel {
	if n := pc.driverNotifier(); n != nil {
		return n.LogLevel()
	}
	return ""
}

// asksInTasksOnly reports whether u puts questions to its client only
// while mcpx follows a task it made of a call (a modern upstream that
// declared the tasks extension), so that a call needs parking only once
// its task comes.
func asksInTasksOnly(u Upstream) bool {
	q, ok := u.(interface{ AsksInTasksOnly() bool })
	return ok && q.AsksInTasksOnly()
}

// asksByRequest reports whether u may put a question to its client as a
// request during a call, so that the call must be ready to park: an
// upstream that says it asks through input_required instead (a modern
// one) is called directly, sparing every call the parking's goroutine,
// context and channels. An upstream that cannot say is assumed to ask.
func asksByRequest(u Upstream) bool {
	q, ok := u.(interface{ AsksByRequest() bool })
	return !ok || q.AsksByRequest()
}
