package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"tuttid/agent"
	"tuttid/jsonrpc"
)

// The supervisor: the app-server process's launch, its restart with
// backoff when it dies, and every call made to it.

// Launch starts the app-server and its supervisor. It returns the first
// launch's error (a missing binary, a failed handshake), wrapping
// agent.ErrRuntimeUnavailable; the supervisor keeps retrying with backoff
// in any case, so installing codex later heals without a tuttid restart.
func (r *Runtime) Launch(ctx context.Context) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return fmt.Errorf("%w: codex runtime closed", agent.ErrRuntimeUnavailable)
	}
	if r.launched {
		r.mu.Unlock()
		return errors.New("codex runtime already launched")
	}
	r.launched = true
	// Added under the lock so that a concurrent Close waits for both.
	r.wg.Add(2)
	r.mu.Unlock()

	go func() {
		defer r.wg.Done()
		r.events.run(r.ctx)
	}()

	// The handshake is bounded by the caller and by Close.
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	unwatch := context.AfterFunc(r.ctx, stop)
	defer unwatch()
	p, err := r.spawn(lctx)
	if err != nil {
		r.setDown(nil, err)
		r.log.Error("codex app-server did not start", "err", err)
	} else {
		r.setUp(p)
	}
	go func() {
		defer r.wg.Done()
		r.supervise(p)
	}()
	return err
}

// Close stops the app-server and every goroutine, then closes Events.
func (r *Runtime) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	launched := r.launched
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
	if !launched {
		close(r.events.out)
	}
	return nil
}

func (r *Runtime) spawn(ctx context.Context) (*process, error) {
	r.mu.Lock()
	r.gen++
	gen := r.gen
	r.mu.Unlock()
	return spawn(ctx, r.cfg, gen, jsonrpc.Handlers{
		Notify: func(method string, params json.RawMessage) { r.onNotification(gen, method, params) },
		Request: func(id json.RawMessage, method string, params json.RawMessage) jsonrpc.Answer {
			return r.approvals.receive(gen, id, method, params)
		},
		Sent: r.cfg.OnSent,
	})
}

// supervise keeps one app-server running until Close. p is the first
// launch's process, already up, or nil if it failed.
func (r *Runtime) supervise(p *process) {
	backoff := r.cfg.RestartBackoffMin
	for {
		if p != nil {
			select {
			case <-p.Conn().Done():
			case <-r.ctx.Done():
				p.Stop(r.cfg.StopGrace)
				r.setDown(p, fmt.Errorf("%w: codex runtime closed", agent.ErrRuntimeUnavailable))
				return
			}
			p.Kill() // the stream ended; make sure the process did too
			<-p.Exited()
			r.crashed(p)
			if time.Since(p.StartedAt()) > r.cfg.RestartBackoffMax {
				backoff = r.cfg.RestartBackoffMin // it ran fine for a while
			}
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-r.ctx.Done():
			t.Stop()
			return
		}
		backoff = min(backoff*2, r.cfg.RestartBackoffMax)
		var err error
		if p, err = r.spawn(r.ctx); err != nil {
			if r.ctx.Err() != nil {
				return
			}
			r.log.Warn("codex app-server restart failed", "err", err, "retry_in", backoff)
			r.setDown(nil, err)
			continue
		}
		r.setUp(p)
	}
}

func (r *Runtime) setUp(p *process) {
	r.mu.Lock()
	r.proc, r.downErr = p, nil
	restarted := p.gen > 1
	r.mu.Unlock()
	if restarted {
		r.log.Info("codex app-server restarted", "gen", p.gen)
		r.events.push(agent.Event{Kind: agent.EventRuntimeRestarted, Provider: agent.ProviderCodex})
	}
}

func (r *Runtime) setDown(p *process, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p == nil || r.proc == p {
		r.proc, r.downErr = nil, err
	}
}

// crashed records an unexpected exit and reports the turns it killed.
// The dead process's own notifications are all queued already (the reader
// finished before its conn was done), so these come after them.
func (r *Runtime) crashed(p *process) {
	exit := "exit status 0"
	if p.WaitErr() != nil {
		exit = p.WaitErr().Error()
	}
	reason := fmt.Sprintf("codex app-server exited unexpectedly (%s)", exit)
	r.log.Error("codex app-server died", "gen", p.gen, "exit", p.WaitErr(), "stream", p.Conn().Err())
	r.setDown(p, fmt.Errorf("%w: %s; restarting", agent.ErrRuntimeUnavailable, reason))
	// Requests the dead process asked resolve as CANCEL before its turns
	// are reported failed.
	r.approvals.processEnded(p.gen)

	r.mu.Lock()
	var evs []agent.Event
	ids := make([]string, 0, len(r.threads))
	for id := range r.threads {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		th := r.threads[id]
		if len(th.active) == 0 {
			continue
		}
		turns := make([]string, 0, len(th.active))
		for t := range th.active {
			turns = append(turns, t)
		}
		slices.Sort(turns)
		for _, t := range turns {
			evs = append(evs, agent.Event{
				Kind: agent.EventTurnCompleted, Provider: agent.ProviderCodex,
				ThreadID: id, TurnID: t,
				Status: string(agent.TurnFailed), Error: reason,
			})
		}
		th.active = nil
		evs = append(evs, agent.Event{
			Kind: agent.EventThreadStatus, Provider: agent.ProviderCodex,
			ThreadID: id, Status: string(agent.ThreadSystemError),
		})
	}
	r.mu.Unlock()
	for _, e := range evs {
		r.events.push(e)
	}
}

// current returns the running process or why there is none.
func (r *Runtime) current() (*process, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, fmt.Errorf("%w: codex runtime closed", agent.ErrRuntimeUnavailable)
	}
	if r.proc == nil {
		return nil, r.downErr
	}
	return r.proc, nil
}

// call sends one request with the runtime's timeout and maps the reply.
func (r *Runtime) call(ctx context.Context, p *process, method string, params, out any) error {
	return r.callOrLate(ctx, p, method, params, out, nil)
}

// callOrLate is call; when late is set, a reply that comes after the call
// gave up is handed to it (jsonrpc.Conn.CallOrLate).
func (r *Runtime) callOrLate(ctx context.Context, p *process, method string, params, out any, late func(json.RawMessage)) error {
	return r.callStreamed(ctx, p, method, params, out, late, nil)
}

// callStreamed is callOrLate with the reply line read by decode as it
// arrives (jsonrpc.Conn.CallStreamed), when decode is set.
func (r *Runtime) callStreamed(ctx context.Context, p *process, method string, params, out any, late func(json.RawMessage), decode jsonrpc.ReplyDecoder) error {
	cctx, cancel := context.WithTimeout(ctx, r.cfg.RequestTimeout)
	defer cancel()
	err := callError(method, p.Conn().CallStreamed(cctx, method, params, out, late, decode))
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("codex app-server did not answer within %s: %w", r.cfg.RequestTimeout, err)
	}
	return mapError(method, err)
}

// onNotification runs on the reader goroutine, in arrival order.
func (r *Runtime) onNotification(gen uint64, method string, params json.RawMessage) {
	e := toEvent(method, params)
	switch e.Kind {
	case agent.EventTurnStarted:
		r.turnActive(e.ThreadID, e.TurnID)
	case agent.EventTurnCompleted:
		r.turnDone(e.ThreadID, e.TurnID)
		// A turn that ended (interrupted, failed) leaves no request
		// waiting; Codex sends no serverRequest/resolved for them.
		r.approvals.turnEnded(e.ThreadID, e.TurnID)
	}
	if method == "serverRequest/resolved" {
		r.approvals.resolvedByServer(gen, params)
	}
	r.events.push(e)
}
