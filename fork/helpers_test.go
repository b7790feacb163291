package fork_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"tuttid/account"
	"tuttid/activity"
	"tuttid/activity/activitytest"
	"tuttid/agent"
	"tuttid/agent/agenttest"
	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/message"
	"tuttid/ent/sessionfork"
	"tuttid/ent/turn"
	"tuttid/fork"
	"tuttid/logtest"
	"tuttid/paging"
	"tuttid/session"
	"tuttid/sessionread"
	"tuttid/store/storetest"
)

// Defaults of the seeded parent.
const (
	wsID         = "ws-1"
	parentID     = "parent-1"
	parentThread = "thread-parent"
	parentTitle  = "Build login"
	otherWsID    = "ws-2"
)

// The workspaces' root and the parent's cwd are real directories (a fork
// checks the cwd's real path), made by TestMain.
var workspaceRoot, parentCwd string

func TestMain(m *testing.M) {
	os.Exit(withRoot(m))
}

func withRoot(m *testing.M) int {
	dir, err := os.MkdirTemp("", "fork-test-root-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if workspaceRoot, err = filepath.EvalSymlinks(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	parentCwd = filepath.Join(workspaceRoot, "proj")
	if err := os.Mkdir(parentCwd, 0o700); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

var parentSettings = agent.ComposerSettings{
	Model: "gpt-5", ReasoningEffort: "medium", PermissionModeID: agent.PermissionWorkspaceWrite,
	PlanMode: false, BrowserUse: true, ComputerUse: false,
}

// env is one test's world: a real SQLite file, the kit's runtime, the
// session and fork services, a recording publisher and captured logs.
type env struct {
	t      *testing.T
	ctx    context.Context
	st     *storetest.Store
	rt     *agenttest.Runtime
	sess   *session.Service
	acc    *account.Service
	svc    *fork.Service
	pub    *activitytest.Recorder
	logs   *logtest.Buffer
	logger *slog.Logger

	mu        sync.Mutex
	published []published // what pub saw committed, in publish order
}

func newEnv(t *testing.T) *env {
	t.Helper()
	st := storetest.New(t)
	logger, logs := logtest.New(slog.LevelDebug)
	e := &env{t: t, ctx: t.Context(), st: st, rt: agenttest.New(), logs: logs, logger: logger}
	e.pub = &activitytest.Recorder{Inspect: e.checkCommitted}
	e.acc = account.New(account.Config{Runtime: e.rt, Logger: logger})
	e.sess = session.New(session.Config{Store: st.Store, Runtime: e.rt, Publisher: e.pub, Logger: logger, Accounts: e.acc})
	e.svc = fork.New(fork.Config{Store: st.Store, Sessions: e.sess, Accounts: e.acc, Runtime: e.rt, Logger: logger})
	st.Workspace(storetest.Workspace{ID: wsID, RootPath: workspaceRoot})
	st.Workspace(storetest.Workspace{ID: otherWsID, RootPath: workspaceRoot})
	return e
}

// item is a seeded message with a kind and a content, so that the
// parent's cached items have a size.
func item(id, role, text string) storetest.Message {
	return storetest.Message{ID: id, Role: role, Kind: role + "Item", Text: text, Content: json.RawMessage(`{"id":"` + id + `"}`)}
}

// defaultParent is an idle Codex session with two completed turns.
func defaultParent() storetest.Session {
	return storetest.Session{
		ID: parentID, Workspace: wsID, Title: parentTitle, Thread: parentThread,
		Cwd: parentCwd, Settings: parentSettings,
		Turns: []storetest.Turn{
			{ID: "t1", Messages: []storetest.Message{
				item("t1-user", "user", "Add a login page"),
				item("t1-assistant", "assistant", "Added login.tsx"),
			}},
			{ID: "t2", Messages: []storetest.Message{
				item("t2-user", "user", "Add tests"),
				item("t2-reasoning", "reasoning", "Thinking about tests"),
				item("t2-assistant", "assistant", "Added login.test.tsx"),
			}},
		},
	}
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
	// Every turn, in pages: an unpaged list stops at sessionread.MaxTurnList.
	var ts []*ent.Turn
	first := paging.MaxPage
	args := sessionread.TurnArgs{Args: paging.Args{First: &first}}
	for {
		p, err := sessionread.New(sessionread.Config{Store: e.st.Store}).TurnPage(e.ctx, sessionID, args)
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

// published is an event and whether its session and lineage row were
// committed (visible outside the fork's transaction) when it went out.
type published struct {
	Event              activity.Event
	SessionCommitted   bool
	LineageCommitted   bool
	CommittedCheckErrs []error
}

// checkCommitted is pub's Inspect: it reads, as the event goes out, whether
// what the event names is committed.
func (e *env) checkCommitted(ctx context.Context, ev activity.Event) {
	rec := published{Event: ev}
	if ev.Session != nil {
		ok, err := e.st.Client.AgentSession.Query().Where(agentsession.ID(ev.Session.ID)).Exist(ctx)
		rec.SessionCommitted = ok
		if err != nil {
			rec.CommittedCheckErrs = append(rec.CommittedCheckErrs, err)
		}
	}
	if ev.Fork != nil {
		ok, err := e.st.Client.SessionFork.Query().Where(sessionfork.ChildAgentSessionID(ev.Fork.ChildAgentSessionID)).Exist(ctx)
		rec.LineageCommitted = ok
		if err != nil {
			rec.CommittedCheckErrs = append(rec.CommittedCheckErrs, err)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.published = append(e.published, rec)
}

// publishedChecks returns what checkCommitted found, in publish order.
func (e *env) publishedChecks() []published {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]published(nil), e.published...)
}

func ptr[T any](v T) *T { return &v }
