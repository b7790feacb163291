package fork_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"tuttid/activity"
	"tuttid/agent"
	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/message"
	"tuttid/ent/sessionfork"
	"tuttid/ent/turn"
	"tuttid/fork"
	"tuttid/paging"
	"tuttid/session"
	"tuttid/store"
	"tuttid/store/storetest"
)

// Defaults of the seeded parent.
const (
	wsID          = "ws-1"
	parentID      = "parent-1"
	parentThread  = "thread-parent"
	parentTitle   = "Build login"
	parentCwd     = "/work/proj"
	otherWsID     = "ws-2"
	workspaceRoot = "/work"
)

var parentSettings = agent.ComposerSettings{
	Model: "gpt-5", ReasoningEffort: "medium", PermissionModeID: agent.PermissionWorkspaceWrite,
	PlanMode: false, BrowserUse: true, ComputerUse: false,
}

// env is one test's world: a real SQLite file, the fake runtime, the
// session and fork services, a recording publisher and captured logs.
type env struct {
	t      *testing.T
	ctx    context.Context
	st     *store.Store
	rt     *fakeRuntime
	sess   *session.Service
	svc    *fork.Service
	pub    *recordingPublisher
	logs   *syncBuffer
	logger *slog.Logger
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := t.Context()
	st, err := openStore(ctx, t)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	e := &env{t: t, ctx: ctx, st: st, rt: newFakeRuntime(), logs: &syncBuffer{}}
	e.pub = &recordingPublisher{st: st}
	logger := slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e.logger = logger
	e.sess = session.New(session.Config{Store: st, Runtime: e.rt, Publisher: e.pub, Logger: logger})
	e.svc = fork.New(fork.Config{Store: st, Sessions: e.sess, Runtime: e.rt, Logger: logger})
	e.seedWorkspace(wsID)
	e.seedWorkspace(otherWsID)
	return e
}

func (e *env) seedWorkspace(id string) {
	e.t.Helper()
	now := time.Now()
	if err := e.st.Client.Workspace.Create().SetID(id).SetName("workspace " + id).
		SetRootPath(workspaceRoot).SetCreatedAt(now).SetUpdatedAt(now).Exec(e.ctx); err != nil {
		e.t.Fatalf("seed workspace %s: %v", id, err)
	}
}

type seedMsg struct {
	ID, Role, Text string
	Status         string // "" is completed
}

type seedTurn struct {
	ID     string
	Status turn.Status
	Msgs   []seedMsg
}

type seedSession struct {
	ID, Workspace, Title, Provider, Thread, Cwd string
	Status                                      agentsession.Status
	Settings                                    agent.ComposerSettings
	Turns                                       []seedTurn
}

// defaultParent is an idle Codex session with two completed turns.
func defaultParent() seedSession {
	return seedSession{
		ID: parentID, Workspace: wsID, Title: parentTitle, Provider: agent.ProviderCodex, Thread: parentThread,
		Cwd: parentCwd, Status: agentsession.StatusREADY, Settings: parentSettings,
		Turns: []seedTurn{
			{ID: "t1", Status: turn.StatusCOMPLETED, Msgs: []seedMsg{
				{ID: "t1-user", Role: "user", Text: "Add a login page"},
				{ID: "t1-assistant", Role: "assistant", Text: "Added login.tsx"},
			}},
			{ID: "t2", Status: turn.StatusCOMPLETED, Msgs: []seedMsg{
				{ID: "t2-user", Role: "user", Text: "Add tests"},
				{ID: "t2-reasoning", Role: "reasoning", Text: "Thinking about tests"},
				{ID: "t2-assistant", Role: "assistant", Text: "Added login.test.tsx"},
			}},
		},
	}
}

// seedTime is when seeded rows were created; turns start a second apart.
var seedTime = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// seed stores a session, its turns and its messages (versions 1..n in
// turn order, through session.InsertHistory).
func (e *env) seed(s seedSession) *ent.AgentSession {
	e.t.Helper()
	if s.Workspace == "" {
		s.Workspace = wsID
	}
	if s.Provider == "" {
		s.Provider = agent.ProviderCodex
	}
	if s.Status == "" {
		s.Status = agentsession.StatusREADY
	}
	var a *ent.AgentSession
	err := e.st.WithTx(e.ctx, func(tx *ent.Tx) error {
		var err error
		a, err = tx.AgentSession.Create().SetID(s.ID).SetWorkspaceID(s.Workspace).SetProvider(s.Provider).
			SetProviderSessionID(s.Thread).SetTitle(s.Title).SetStatus(s.Status).SetCwd(s.Cwd).
			SetSettings(s.Settings).SetRuntimeContext(map[string]any{}).
			SetCreatedAt(seedTime).SetUpdatedAt(seedTime).Save(e.ctx)
		if err != nil {
			return err
		}
		var msgs []agent.RuntimeMessage
		for i, t := range s.Turns {
			at := seedTime.Add(time.Duration(i+1) * time.Second)
			c := tx.Turn.Create().SetTurnID(t.ID).SetAgentSessionID(s.ID).SetStatus(t.Status).SetStartedAt(at)
			if t.Status != turn.StatusIN_PROGRESS {
				c.SetCompletedAt(at.Add(time.Second / 2))
			}
			if err := c.Exec(e.ctx); err != nil {
				return err
			}
			for _, m := range t.Msgs {
				msgs = append(msgs, agent.RuntimeMessage{
					ID: m.ID, TurnID: t.ID, Role: m.Role, Kind: m.Role + "Item", Text: m.Text,
					Content: json.RawMessage(`{"id":"` + m.ID + `"}`), Status: m.Status,
				})
			}
		}
		_, err = session.InsertHistory(e.ctx, tx, a, msgs, seedTime)
		return err
	})
	if err != nil {
		e.t.Fatalf("seed session %s: %v", s.ID, err)
	}
	a, err = e.st.Client.AgentSession.Get(e.ctx, s.ID)
	if err != nil {
		e.t.Fatalf("read seeded session %s: %v", s.ID, err)
	}
	return a
}

// input is a fork request of the default parent.
func input(requestID string) fork.Input {
	return fork.Input{WorkspaceID: wsID, ParentSessionID: parentID, RequestID: requestID}
}

func (e *env) mustFork(in fork.Input) *fork.Result {
	e.t.Helper()
	res, err := e.svc.Fork(e.ctx, in)
	if err != nil {
		e.t.Fatalf("Fork(%+v): %v", in, err)
	}
	return res
}

func (e *env) forkErr(in fork.Input, want apperr.Code) {
	e.t.Helper()
	res, err := e.svc.Fork(e.ctx, in)
	if err == nil {
		e.t.Fatalf("Fork(%+v) = %+v, want error %s", in, res, want)
	}
	if got := apperr.CodeOf(err); got != want {
		e.t.Fatalf("Fork(%+v) code = %s (%v), want %s", in, got, err, want)
	}
	if res != nil {
		e.t.Fatalf("Fork(%+v) returned a result with its error: %+v", in, res)
	}
}

// counts of what forks store.
type counts struct{ Sessions, Forks, Turns, Messages int }

func (e *env) counts() counts {
	e.t.Helper()
	var c counts
	var err error
	if c.Sessions, err = e.st.Client.AgentSession.Query().Count(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	if c.Forks, err = e.st.Client.SessionFork.Query().Count(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	if c.Turns, err = e.st.Client.Turn.Query().Count(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	if c.Messages, err = e.st.Client.Message.Query().Count(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	return c
}

func (e *env) session(id string) *ent.AgentSession {
	e.t.Helper()
	a, err := e.st.Client.AgentSession.Get(e.ctx, id)
	if err != nil {
		e.t.Fatalf("read session %s: %v", id, err)
	}
	return a
}

func (e *env) messages(sessionID string) []*ent.Message {
	e.t.Helper()
	ms, err := e.st.Client.Message.Query().Where(message.AgentSessionID(sessionID)).
		Order(ent.Asc(message.FieldVersion)).All(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	return ms
}

func (e *env) turns(sessionID string) []*ent.Turn {
	e.t.Helper()
	// Every turn, in pages: an unpaged list stops at session.MaxTurnList.
	var ts []*ent.Turn
	first := paging.MaxPage
	args := session.TurnArgs{Args: paging.Args{First: &first}}
	for {
		p, err := e.sess.TurnPage(e.ctx, sessionID, args)
		if err != nil {
			e.t.Fatal(err)
		}
		ts = append(ts, p.Nodes...)
		if !p.HasNextPage {
			return ts
		}
		args.After = &p.Cursors[len(p.Cursors)-1]
	}
}

func (e *env) lineage(childID string) *ent.SessionFork {
	e.t.Helper()
	row, err := e.st.Client.SessionFork.Query().Where(sessionfork.ChildAgentSessionID(childID)).Only(e.ctx)
	if err != nil {
		e.t.Fatalf("lineage of %s: %v", childID, err)
	}
	return row
}

// msgView is a message without its row id and timestamps.
type msgView struct {
	ID, TurnID, Role, Kind, Text, Content, Status string
	Version                                       int64
}

func viewMessages(ms []*ent.Message) []msgView {
	out := make([]msgView, len(ms))
	for i, m := range ms {
		out[i] = msgView{ID: m.MessageID, TurnID: m.TurnID, Role: m.Role, Kind: m.Kind, Text: m.Text,
			Content: string(m.Content), Status: m.Status, Version: m.Version}
	}
	return out
}

type turnView struct {
	ID     string
	Status turn.Status
}

func viewTurns(ts []*ent.Turn) []turnView {
	out := make([]turnView, len(ts))
	for i, t := range ts {
		out[i] = turnView{ID: t.TurnID, Status: t.Status}
	}
	return out
}

// forkView is a lineage row without its row id.
type forkView struct {
	Workspace, Child, Parent, ChildThread, ParentThread, Provider, TurnID, RequestID, Fingerprint string
	ForkedAtUnixMs                                                                                int64
}

func viewFork(r *ent.SessionFork) forkView {
	return forkView{r.WorkspaceID, r.ChildAgentSessionID, r.ParentAgentSessionID, r.ChildProviderSessionID,
		r.ParentProviderSessionID, r.Provider, r.ForkTurnID, r.ForkRequestID, r.ForkRequestFingerprint, r.ForkedAtUnixMs}
}

// sessionView is a session row, every stored field.
type sessionView struct {
	ID, Workspace, Provider, Thread, Title, Cwd string
	Status                                      agentsession.Status
	Visible                                     bool
	Settings                                    agent.ComposerSettings
	RuntimeContext                              string
	LastMessageVersion                          int64
	CreatedAt, UpdatedAt                        time.Time
}

func viewSession(a *ent.AgentSession) sessionView {
	rc, _ := json.Marshal(a.RuntimeContext)
	return sessionView{a.ID, a.WorkspaceID, a.Provider, a.ProviderSessionID, a.Title, a.Cwd, a.Status, a.Visible,
		a.Settings, string(rc), a.LastMessageVersion, a.CreatedAt, a.UpdatedAt}
}

// recordingPublisher records what is published, and whether the event's
// session and lineage row were committed (visible outside the fork's
// transaction) when it was.
type recordingPublisher struct {
	st     *store.Store
	mu     sync.Mutex
	events []published
}

type published struct {
	Event              activity.Event
	SessionCommitted   bool
	LineageCommitted   bool
	CommittedCheckErrs []error
}

func (p *recordingPublisher) Publish(ctx context.Context, ev activity.Event) activity.Event {
	rec := published{Event: ev}
	if ev.Session != nil {
		ok, err := p.st.Client.AgentSession.Query().Where(agentsession.ID(ev.Session.ID)).Exist(ctx)
		rec.SessionCommitted = ok
		if err != nil {
			rec.CommittedCheckErrs = append(rec.CommittedCheckErrs, err)
		}
	}
	if ev.Fork != nil {
		ok, err := p.st.Client.SessionFork.Query().Where(sessionfork.ChildAgentSessionID(ev.Fork.ChildAgentSessionID)).Exist(ctx)
		rec.LineageCommitted = ok
		if err != nil {
			rec.CommittedCheckErrs = append(rec.CommittedCheckErrs, err)
		}
	}
	p.mu.Lock()
	p.events = append(p.events, rec)
	p.mu.Unlock()
	return ev
}

func (p *recordingPublisher) Events() []published {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]published(nil), p.events...)
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// Records parses the JSON log lines written so far.
func (b *syncBuffer) Records(t *testing.T) []map[string]any {
	t.Helper()
	b.mu.Lock()
	text := b.buf.String()
	b.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, rec)
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// migrateMu serializes store.Open among parallel tests: ent's migration
// (Schema.Create) writes its package-level table descriptions, so two
// running at once race (go test -race).
var migrateMu sync.Mutex

// openStore opens a fresh database file under dir.
func openStore(ctx context.Context, tb testing.TB) (*store.Store, error) {
	migrateMu.Lock()
	defer migrateMu.Unlock()
	return storetest.Open(ctx, tb)
}
