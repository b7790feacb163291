package codex

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"tuttid/agent"
)

// Runtime drives Codex threads through one supervised app-server process.
// It implements agent.Runtime.
//
// Lifecycle: New, then Launch (eager: the first process starts there, so a
// missing binary is reported at boot), then Close. Calls made while the
// process is down fail at once with agent.ErrRuntimeUnavailable; they never
// wait for a restart.
type Runtime struct {
	cfg       Config
	log       *slog.Logger
	events    *eventQueue
	approvals *approvals
	pageSize  int // thread/turns/list page size; tests lower it
	pageBytes int // the bytes a thread/turns/list page aims at; tests lower it
	// forkStreamAbove: a fork whose HistoryBytesHint is over it asks
	// thread/fork for the turns and decodes them as they arrive; another
	// reads them with thread/turns/list (adapter.go).
	forkStreamAbove int64
	streamedForks   atomic.Int64 // forks whose history came in the reply; tests read it
	// modelPageLimit is model/list's page size; tests lower it.
	modelPageLimit int
	acct           *accountState // account.go

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	launched bool
	closed   bool
	proc     *process // nil while down
	gen      uint64   // launches so far
	downErr  error    // why proc is nil
	threads  map[string]*threadState
}

// threadState is what the runtime remembers of a Codex thread.
type threadState struct {
	// loadedGen is the process launch that has the thread loaded; a thread
	// is resumed before its next turn when it differs from the current one.
	loadedGen uint64
	loaded    loadedThread
	// active holds the turns running now, reported FAILED if the process
	// dies under them.
	active map[string]struct{}
	// lastCompleted guards against recording a turn as active after its
	// turn/completed raced ahead of the turn/start reply.
	lastCompleted string
}

var _ agent.Runtime = (*Runtime)(nil)

// New makes a Runtime; nothing runs until Launch.
func New(cfg Config) *Runtime {
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	r := &Runtime{
		cfg:             cfg,
		log:             cfg.Logger,
		events:          newEventQueue(),
		pageSize:        100,
		pageBytes:       historyPageBytes,
		forkStreamAbove: forkStreamAboveBytes,
		acct:            &accountState{},
		ctx:             ctx,
		cancel:          cancel,
		downErr:         fmt.Errorf("%w: codex runtime not launched", agent.ErrRuntimeUnavailable),
		threads:         make(map[string]*threadState),
	}
	r.modelPageLimit = modelPageLimit
	r.events.observe = r.observe
	r.approvals = newApprovals(cfg.Logger, r.modeOf, r.events.push)
	r.approvals.interrupt = func(ctx context.Context, threadID, turnID string) error {
		return r.Interrupt(ctx, agent.InterruptInput{Provider: agent.ProviderCodex, ThreadID: threadID, TurnID: turnID})
	}
	return r
}

// Events implements agent.Runtime.
func (r *Runtime) Events() <-chan agent.Event { return r.events.out }

// Health implements agent.Runtime: nil while the app-server is up.
func (r *Runtime) Health(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	_, err := r.current()
	return err
}

func (r *Runtime) thread(id string) *threadState {
	th, ok := r.threads[id]
	if !ok {
		th = &threadState{}
		r.threads[id] = th
	}
	return th
}

func (r *Runtime) turnActive(threadID, turnID string) {
	if threadID == "" || turnID == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	th := r.thread(threadID)
	if th.lastCompleted == turnID {
		return
	}
	if th.active == nil {
		th.active = make(map[string]struct{})
	}
	th.active[turnID] = struct{}{}
}

func (r *Runtime) turnDone(threadID, turnID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	th := r.thread(threadID)
	delete(th.active, turnID)
	th.lastCompleted = turnID
}

// markLoaded records that process gen has the thread loaded with lt.
func (r *Runtime) markLoaded(gen uint64, threadID string, lt loadedThread) {
	r.mu.Lock()
	defer r.mu.Unlock()
	th := r.thread(threadID)
	th.loadedGen, th.loaded = gen, lt
}

// loadedIn returns the thread's state if process gen has it loaded.
func (r *Runtime) loadedIn(gen uint64, threadID string) (loadedThread, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	th, ok := r.threads[threadID]
	if !ok || th.loadedGen != gen {
		return loadedThread{}, false
	}
	return th.loaded, true
}

func (r *Runtime) forget(threadID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.threads, threadID)
}

// setMode sets the permission mode approvals of the thread are answered
// by, and returns the one it replaces.
func (r *Runtime) setMode(threadID, mode string) (prev string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	th := r.thread(threadID)
	prev, th.loaded.mode = th.loaded.mode, mode
	return prev
}

func (r *Runtime) modeOf(threadID string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if th, ok := r.threads[threadID]; ok {
		return th.loaded.mode
	}
	return ""
}
