package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"tuttid/agent"
	"tuttid/historyspool"
	"tuttid/jsonrpc"
)

// Start implements agent.Runtime: thread/start.
func (r *Runtime) Start(ctx context.Context, in agent.StartInput) (agent.RuntimeSession, error) {
	if err := checkProvider(in.Provider); err != nil {
		return agent.RuntimeSession{}, err
	}
	s, err := r.ready(ctx, in.Settings)
	if err != nil {
		return agent.RuntimeSession{}, err
	}
	p, err := r.current()
	if err != nil {
		return agent.RuntimeSession{}, err
	}
	var resp wireThreadResponse
	params := threadStartParams{threadParams: buildThreadParams(s, in.Cwd, in.ModelProvider), threadOrigin: newThreadOrigin()}
	if err := r.call(ctx, p, "thread/start", params, &resp); err != nil {
		return agent.RuntimeSession{}, err
	}
	r.markLoaded(p.gen, resp.Thread.ID, loadedFrom(s, resp))
	return sessionOf(resp), nil
}

// SendTurn implements agent.Runtime: turn/start, after thread/resume when
// the running app-server has not loaded the thread (it restarted, or
// tuttid did).
func (r *Runtime) SendTurn(ctx context.Context, in agent.SendTurnInput) (agent.RuntimeTurn, error) {
	if err := checkProvider(in.Provider); err != nil {
		return agent.RuntimeTurn{}, err
	}
	s, err := r.ready(ctx, in.Settings)
	if err != nil {
		return agent.RuntimeTurn{}, err
	}
	p, err := r.current()
	if err != nil {
		return agent.RuntimeTurn{}, err
	}
	var turn agent.RuntimeTurn
	err = r.onThread(ctx, p, in.ThreadID, in.Cwd, in.ModelProvider, s, func(lt loadedThread) error {
		var err error
		turn, err = r.turnStart(ctx, p, in, s, lt)
		return err
	})
	return turn, err
}

// onThread runs call on a thread this app-server has loaded: after
// thread/resume when it has not (it restarted, or tuttid did), and once
// more after a resume when Codex answers that it does not know the thread
// (it unloaded it behind our back).
func (r *Runtime) onThread(ctx context.Context, p *process, threadID, cwd, modelProvider string, s settings, call func(loadedThread) error) error {
	lt, ok := r.loadedIn(p.gen, threadID)
	if !ok {
		var err error
		if lt, err = r.resume(ctx, p, threadID, cwd, modelProvider, s); err != nil {
			return err
		}
	}
	err := call(lt)
	if errors.Is(err, agent.ErrThreadNotFound) {
		if lt, err = r.resume(ctx, p, threadID, cwd, modelProvider, s); err != nil {
			return err
		}
		err = call(lt)
	}
	return err
}

func (r *Runtime) turnStart(ctx context.Context, p *process, in agent.SendTurnInput, s settings, lt loadedThread) (agent.RuntimeTurn, error) {
	params := buildTurnParams(in.ThreadID, in.Text, in.Cwd, s, lt, r.cfg.ExperimentalPlanMode)
	// Approval requests of this turn can arrive before the turn/start reply
	// is read: they must already be answered by the new permission mode.
	prevMode := r.setMode(in.ThreadID, s.mode)
	var resp wireTurnResponse
	if err := r.call(ctx, p, "turn/start", params, &resp); err != nil {
		r.setMode(in.ThreadID, prevMode)
		return agent.RuntimeTurn{}, err
	}
	// The overrides stick for later turns.
	lt.mode = s.mode
	if s.Model != "" {
		lt.model = s.Model
	}
	if s.ReasoningEffort != "" {
		lt.effort = s.ReasoningEffort
	}
	r.markLoaded(p.gen, in.ThreadID, lt)
	r.turnActive(in.ThreadID, resp.Turn.ID)
	return agent.RuntimeTurn{ID: resp.Turn.ID, Status: turnStatus(resp.Turn.Status)}, nil
}

// resume loads a thread into the running app-server with the session's
// settings, the same params thread/start and thread/fork get.
func (r *Runtime) resume(ctx context.Context, p *process, threadID, cwd, modelProvider string, s settings) (loadedThread, error) {
	params := threadResumeParams{ThreadID: threadID, threadParams: buildThreadParams(s, cwd, modelProvider), ExcludeTurns: true}
	var resp wireThreadResponse
	if err := r.call(ctx, p, "thread/resume", params, &resp); err != nil {
		return loadedThread{}, err
	}
	lt := loadedFrom(s, resp)
	r.markLoaded(p.gen, threadID, lt)
	r.log.Info("codex thread resumed", "thread", threadID, "gen", p.gen)
	return lt, nil
}

// Interrupt implements agent.Runtime: turn/interrupt.
func (r *Runtime) Interrupt(ctx context.Context, in agent.InterruptInput) error {
	if err := checkProvider(in.Provider); err != nil {
		return err
	}
	p, err := r.current()
	if err != nil {
		return err
	}
	params := map[string]string{"threadId": in.ThreadID, "turnId": in.TurnID}
	return r.call(ctx, p, "turn/interrupt", params, nil)
}

// History implements agent.Runtime.
func (r *Runtime) History(ctx context.Context, in agent.HistoryInput) ([]agent.RuntimeTurn, error) {
	if err := checkProvider(in.Provider); err != nil {
		return nil, err
	}
	p, err := r.current()
	if err != nil {
		return nil, err
	}
	if len(in.TurnIDs) > 0 {
		return r.someTurns(ctx, p, in.ThreadID, in.TurnIDs)
	}
	return r.history(ctx, p, in.ThreadID)
}

// someTurns reads a thread's pages newest first until it has the turns
// asked for (a turn to settle is among the newest), keeping only those.
func (r *Runtime) someTurns(ctx context.Context, p *process, threadID string, ids []string) ([]agent.RuntimeTurn, error) {
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	h := r.newHistoryStream(ctx, p, threadID)
	h.params.SortDirection = "desc"
	defer h.Close()
	turns := []agent.RuntimeTurn{}
	for len(want) > 0 {
		page, err := h.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		for _, t := range page {
			if want[t.ID] {
				delete(want, t.ID)
				turns = append(turns, t)
			}
		}
	}
	return turns, nil
}

// history reads every turn with thread/turns/list (oldest first, full
// items), or with thread/read on a Codex that lacks turns/list.
func (r *Runtime) history(ctx context.Context, p *process, threadID string) ([]agent.RuntimeTurn, error) {
	turns, err := agent.ReadHistory(ctx, r.newHistoryStream(ctx, p, threadID))
	if err != nil {
		return nil, err
	}
	if turns == nil {
		turns = []agent.RuntimeTurn{}
	}
	return turns, nil
}

// Fork implements agent.Runtime: thread/fork with the same settings-derived
// params as thread/start. A large history (HistoryBytesHint) comes in the
// reply itself, decoded turn by turn into a spool as the line arrives
// (forkreply.go, forkspool.go); a small or unknown one is read after an
// excludeTurns fork in pages with thread/turns/list (a Codex that ignores
// excludeTurns and sends the turns anyway is taken at its word).
func (r *Runtime) Fork(ctx context.Context, in agent.RuntimeForkInput) (agent.RuntimeForkResult, error) {
	if err := checkProvider(in.Provider); err != nil {
		return agent.RuntimeForkResult{}, err
	}
	s, err := r.ready(ctx, in.Settings)
	if err != nil {
		return agent.RuntimeForkResult{}, err
	}
	if in.ParentThreadID == "" {
		return agent.RuntimeForkResult{}, fmt.Errorf("%w: fork needs the source provider session id", agent.ErrThreadNotFound)
	}
	p, err := r.current()
	if err != nil {
		return agent.RuntimeForkResult{}, err
	}
	params := threadForkParams{
		ThreadID:     in.ParentThreadID,
		LastTurnID:   in.LastTurnID,
		threadParams: buildThreadParams(s, in.Cwd, in.ModelProvider),
		threadOrigin: newThreadOrigin(),
		ExcludeTurns: true,
	}
	var late func(json.RawMessage)
	if in.OnLateThread != nil {
		late = func(result json.RawMessage) {
			var resp wireThreadResponse
			if err := json.Unmarshal(result, &resp); err != nil || resp.Thread.ID == "" {
				r.log.Warn("codex: late thread/fork reply without a thread", "thread", in.ParentThreadID, "err", err)
				return
			}
			in.OnLateThread(resp.Thread.ID)
		}
	}
	// A history known to be over forkStreamAboveBytes comes in
	// the fork's own reply, decoded turn by turn into a spool as it
	// arrives: one read of the rollout by Codex, and no line held whole. A
	// small one is read after an excludeTurns fork in one page from both
	// ends at once, which measured as fast or faster there; so is one of
	// unknown size (paged reads suit any size).
	var spool *historyspool.Spool
	var decode jsonrpc.ReplyDecoder
	if in.HistoryBytesHint > r.forkStreamAbove {
		if sp, err := historyspool.New(r.cfg.SpoolDir); err != nil {
			r.log.Warn("codex: cannot spool a fork's history; reading it in pages", "thread", in.ParentThreadID, "err", err)
		} else {
			spool = sp
			defer func() {
				if spool != nil {
					spool.Close()
				}
			}()
			params.ExcludeTurns = false
			decode = func(line io.Reader) (json.RawMessage, error) {
				return decodeForkReply(line, func(t agent.RuntimeTurn) { _ = sp.Add(t) })
			}
		}
	}
	var resp wireThreadResponse
	if err := r.callStreamed(ctx, p, "thread/fork", params, &resp, late, decode); err != nil {
		if errors.Is(err, jsonrpc.ErrReplyUndecodable) {
			err = fmt.Errorf("%w: %w", agent.ErrRequestLost, err)
		}
		// Codex may have made the thread before it died or timed out.
		return agent.RuntimeForkResult{}, lostRequest(err)
	}
	child := resp.Thread.ID
	r.markLoaded(p.gen, child, loadedFrom(s, resp))
	res := agent.RuntimeForkResult{
		Session: sessionOf(resp),
		Fork: agent.RuntimeForkLineage{
			ParentThreadID: in.ParentThreadID,
			ChildThreadID:  child,
			Provider:       agent.ProviderCodex,
			LastTurnID:     in.LastTurnID,
			ForkedAt:       time.Now(),
		},
	}
	if len(resp.Thread.Turns) > 0 {
		res.History = agent.SliceHistory(projectTurns(resp.Thread.Turns), 0)
		return res, nil
	}
	// A failed Add is kept by the spool and answered by Stream.
	if spool != nil && spool.Len() > 0 {
		h, err := spool.Stream(r.pageBytes)
		if err != nil {
			// The turns are lost to tuttid's disk: the service copies the
			// parent's cache instead.
			r.log.Warn("codex: the fork's history could not be spooled", "thread", in.ParentThreadID, "child_thread", child, "err", err)
			res.History = failedHistory{fmt.Errorf("%w: %w", agent.ErrHistoryUnavailable, err)}
			return res, nil
		}
		spool = nil // the stream owns it
		r.streamedForks.Add(1)
		res.History = h
		return res, nil
	}
	// No turns in the reply (or none asked for): the child is read in
	// pages, which also tells an empty history from a missing one.
	// The child is read in pages as the caller stores them. Failure there
	// is not a failed fork; the service falls back to the parent's cached
	// messages.
	h := r.newHistoryStream(ctx, p, child)
	if in.HistoryBytesHint > 0 && in.HistoryBytesHint <= int64(r.pageBytes)/2 {
		// The whole history should fit in one page, with room to spare:
		// read it in one instead of first learning its turns' size, from
		// both ends at once.
		h.params.Limit, h.bothEnds = r.pageSize, true
	}
	h.onEmpty = func(ctx context.Context) error {
		// An empty child is its true history only if the parent is empty too.
		parentEmpty, err := r.historyEmpty(ctx, p, in.ParentThreadID)
		switch {
		case err != nil:
			return fmt.Errorf("%w: child %s is empty and its parent %s could not be read: %w", agent.ErrHistoryUnavailable, child, in.ParentThreadID, err)
		case !parentEmpty:
			return fmt.Errorf("%w: child %s is empty but its parent %s is not", agent.ErrHistoryUnavailable, child, in.ParentThreadID)
		}
		return io.EOF
	}
	h.start() // the first page is read while the caller gets ready to store it
	res.History = h
	return res, nil
}

// historyEmpty says whether a thread has no turns, reading one page.
func (r *Runtime) historyEmpty(ctx context.Context, p *process, threadID string) (bool, error) {
	params := map[string]any{"threadId": threadID, "limit": 1, "itemsView": "notLoaded"}
	var resp wireTurnsPage
	err := r.call(ctx, p, "thread/turns/list", params, &resp)
	switch {
	case errors.Is(err, errNotMaterialized):
		return true, nil
	case errors.Is(err, errMethodUnsupported):
		var read wireThreadRead
		if err := r.call(ctx, p, "thread/read", map[string]any{"threadId": threadID, "includeTurns": true}, &read); err != nil {
			return false, err
		}
		return len(read.Thread.Turns) == 0, nil
	case err != nil:
		return false, err
	}
	return len(resp.Data) == 0, nil
}

// Archive implements agent.Runtime: thread/archive. A thread Codex no
// longer knows is already gone, which is what the caller wants.
func (r *Runtime) Archive(ctx context.Context, provider, providerSessionID string) error {
	if err := checkProvider(provider); err != nil {
		return err
	}
	p, err := r.current()
	if err != nil {
		return err
	}
	err = r.call(ctx, p, "thread/archive", map[string]string{"threadId": providerSessionID}, nil)
	if err != nil && !errors.Is(err, agent.ErrThreadNotFound) {
		return err
	}
	r.forget(providerSessionID)
	return nil
}

func loadedFrom(s settings, resp wireThreadResponse) loadedThread {
	lt := loadedThread{mode: s.mode, model: resp.Model, effort: strOr(resp.ReasoningEffort, "")}
	if lt.model == "" {
		lt.model = strOr(resp.Thread.Model, "")
	}
	return lt
}

func sessionOf(resp wireThreadResponse) agent.RuntimeSession {
	t := resp.Thread
	s := agent.RuntimeSession{
		ThreadID:      t.ID,
		Status:        agent.ThreadStatus(t.Status.Type),
		Cwd:           resp.Cwd,
		Model:         resp.Model,
		ModelProvider: resp.ModelProvider,
		ForkedFromID:  strOr(t.ForkedFromID, ""),
	}
	if s.Cwd == "" {
		s.Cwd = t.Cwd
	}
	if s.Model == "" {
		s.Model = strOr(t.Model, "")
	}
	if s.ModelProvider == "" {
		s.ModelProvider = t.ModelProvider
	}
	return s
}

// RespondToApproval implements agent.Approver: the person's decision goes
// to the request Codex is waiting on.
func (r *Runtime) RespondToApproval(ctx context.Context, in agent.ApprovalResponse) error {
	if err := checkProvider(in.Provider); err != nil {
		return err
	}
	return r.approvals.respond(ctx, in)
}

// validate is validateSettings plus what depends on this runtime's
// configuration: plan mode reaches Codex only as the experimental
// collaborationMode, so without it planMode is refused, not ignored.
func (r *Runtime) validate(in agent.ComposerSettings) (settings, error) {
	s, err := validateSettings(in)
	if err != nil {
		return s, err
	}
	if s.PlanMode && !r.cfg.ExperimentalPlanMode {
		return settings{}, fmt.Errorf("%w: planMode needs Codex's experimental collaboration mode, which this runtime does not enable", agent.ErrInvalidSettings)
	}
	return s, nil
}

// ready is validate with what needs Codex: the effort the chosen model
// supports (models.go) and a sign-in (account.go).
func (r *Runtime) ready(ctx context.Context, in agent.ComposerSettings) (settings, error) {
	if err := r.checkEffort(ctx, in); err != nil {
		return settings{}, err
	}
	// The effort is checked above, against the model's own list, which
	// may go beyond validateSettings' static one (Codex 0.169's "max").
	effort := in.ReasoningEffort
	in.ReasoningEffort = ""
	s, err := r.validate(in)
	if err != nil {
		return s, err
	}
	s.ReasoningEffort = effort
	return s, r.checkSignedIn(ctx)
}
