package session

import (
	"context"
	"errors"
	"sync"
	"time"

	"tuttid/agent"
)

// Events are stored on one lane per Codex thread: a thread's events keep
// their order, and one session's slow settle (a Codex read, a store that
// keeps failing) never delays another session's events. Runtime-level
// events (no thread) run on a lane of their own after the events every
// thread lane had before them.

// laneJob is an event to store, or work that must run in the order of a
// thread's events (a check after its thread went idle, a re-read).
type laneJob struct {
	event *agent.Event
	run   func(ctx context.Context)
}

type lane struct {
	queue   []laneJob
	running bool
}

// lanes is the set of thread lanes and what their events left to re-read.
// The zero value is ready.
type lanes struct {
	// store stores one event durably (Service.storeEvent).
	store func(ctx context.Context, e agent.Event)
	mu    sync.Mutex
	by    map[string]*lane
	wg    sync.WaitGroup
	lost  map[string]bool // thread "\x00" turn: a turn one of whose events was not stored
	// idleGrace is how long a turn may stay running after its thread went
	// idle before it is settled from Codex (zero: defaultIdleGrace).
	idleGrace time.Duration
	// rereadPause, when set, replaces every pause of rereadPauses and
	// revisitEvery (tests).
	rereadPause time.Duration
	// open: Ingest runs. Jobs queued otherwise (a timer that fires after
	// Ingest returned, HandleEvent called on its own) are dropped.
	open bool
	// noneUnsettled: the last revisit found no turn with unsettledMark and
	// none was marked since, so the periodic revisit skips its query.
	noneUnsettled bool
}

// holdPauses are the pauses between attempts at an event that could not
// be stored, nor its turn failed (the store itself is failing: a full
// disk). The event is kept, and those behind it on its lane wait, until
// the store takes it or holdFor has passed.
var holdPauses = []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second}

const holdFor = 10 * time.Minute

// errTurnFailed marks a handleDurably error after which the event's turn
// was failed: the event is dropped (its turn is re-read from Codex at its end).
var errTurnFailed = errors.New("its turn was failed")

// enqueue adds a job to a thread's lane, starting the lane if it is idle.
func (l *lanes) enqueue(ctx context.Context, thread string, j laneJob) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.open {
		return
	}
	if l.by == nil {
		l.by = map[string]*lane{}
	}
	ln := l.by[thread]
	if ln == nil {
		ln = &lane{}
		l.by[thread] = ln
	}
	ln.queue = append(ln.queue, j)
	if ln.running {
		return
	}
	ln.running = true
	l.wg.Add(1)
	go l.runLane(ctx, thread, ln)
}

// runLane runs a lane's jobs in order until it is empty.
func (l *lanes) runLane(ctx context.Context, thread string, ln *lane) {
	defer l.wg.Done()
	for {
		l.mu.Lock()
		if len(ln.queue) == 0 || ctx.Err() != nil {
			ln.running = false
			ln.queue = nil
			delete(l.by, thread)
			l.mu.Unlock()
			return
		}
		j := ln.queue[0]
		ln.queue = ln.queue[1:]
		l.mu.Unlock()
		if j.run != nil {
			j.run(ctx)
			continue
		}
		l.store(ctx, *j.event)
	}
}

// dispatch routes one runtime event to its lane. A runtime-level event
// waits for what every existing thread lane had queued before it.
func (l *lanes) dispatch(ctx context.Context, e agent.Event) {
	if e.ThreadID != "" {
		l.enqueue(ctx, e.ThreadID, laneJob{event: &e})
		return
	}
	var before sync.WaitGroup
	l.mu.Lock()
	threads := make([]string, 0, len(l.by))
	for th := range l.by {
		if th != "" {
			threads = append(threads, th)
		}
	}
	l.mu.Unlock()
	for _, th := range threads {
		before.Add(1)
		l.enqueue(ctx, th, laneJob{run: func(context.Context) { before.Done() }})
	}
	l.enqueue(ctx, "", laneJob{run: func(ctx context.Context) {
		before.Wait()
		l.store(ctx, e)
	}})
}

// storeEvent stores one event durably. An event that cannot be stored and
// whose turn could not be failed either is held and tried again until the
// store takes it; a turn any of whose events failed is re-read from Codex
// when it ends.
func (s *Service) storeEvent(ctx context.Context, e agent.Event) {
	err := s.handleDurably(ctx, e)
	if err == nil {
		s.afterStored(ctx, e)
		return
	}
	if ctx.Err() != nil {
		return
	}
	s.log.ErrorContext(ctx, "ingest: event not stored", "kind", e.Kind, "method", e.Method,
		"thread", e.ThreadID, "turn", e.TurnID, "err", err)
	if malformed(e) {
		return
	}
	s.lanes.markLost(e)
	if errors.Is(err, errTurnFailed) {
		// The turn ended (failed by tuttid): take what Codex recorded now.
		if e.Kind == agent.EventTurnCompleted && s.lanes.takeLost(e.ThreadID, e.TurnID) {
			s.rereadTurn(ctx, e.ThreadID, e.TurnID, 0)
		}
		return
	}
	deadline := time.Now().Add(holdFor)
	for i := 0; time.Now().Before(deadline); i++ {
		pause := holdPauses[min(i, len(holdPauses)-1)]
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		if err = s.HandleEvent(ctx, e); err == nil {
			s.log.WarnContext(ctx, "ingest: held event stored", "kind", e.Kind, "thread", e.ThreadID,
				"turn", e.TurnID, "attempts", i+2)
			s.afterStored(ctx, e)
			return
		}
	}
	s.log.ErrorContext(ctx, "ingest: held event dropped; its turn is re-read from Codex at its end",
		"kind", e.Kind, "thread", e.ThreadID, "turn", e.TurnID, "err", err)
}

func eventTurn(e agent.Event) string {
	if e.TurnID == "" && e.Message != nil {
		return e.Message.TurnID
	}
	return e.TurnID
}

func (l *lanes) markLost(e agent.Event) {
	turnID := eventTurn(e)
	if e.ThreadID == "" || turnID == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost == nil {
		l.lost = map[string]bool{}
	}
	l.lost[e.ThreadID+"\x00"+turnID] = true
}

// takeLost reports whether a turn had an event that was not stored, and
// forgets it.
func (l *lanes) takeLost(thread, turnID string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := thread + "\x00" + turnID
	lost := l.lost[k]
	delete(l.lost, k)
	return lost
}

// afterStored: once the end of a turn is stored, a turn that lost an event
// on the way takes Codex's record of its items (the user's prompt among them).
func (s *Service) afterStored(ctx context.Context, e agent.Event) {
	if e.Kind != agent.EventTurnCompleted || !s.lanes.takeLost(e.ThreadID, e.TurnID) {
		return
	}
	s.rereadTurn(ctx, e.ThreadID, e.TurnID, 0)
}

// accept lets jobs in (Ingest starts).
func (l *lanes) accept() {
	l.mu.Lock()
	l.open = true
	l.mu.Unlock()
}

// drain takes no more jobs and waits until every lane has stopped.
func (l *lanes) drain() {
	l.mu.Lock()
	l.open = false
	l.mu.Unlock()
	l.wg.Wait()
}
