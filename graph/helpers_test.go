package graph_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/99designs/gqlgen/client"

	"tuttid/account"
	"tuttid/activity"
	"tuttid/agent"
	"tuttid/agent/agenttest"
	"tuttid/codex"
	"tuttid/codex/codextest"
	"tuttid/ent"
	"tuttid/fork"
	"tuttid/graph"
	"tuttid/session"
	"tuttid/sessionread"
	"tuttid/store/storetest"
)

// env is the server's GraphQL handler (graph.NewHandler) over a real
// SQLite file, in process, with gqlgen's test client; the services' client
// counts its statements in queries.
type env struct {
	t        *testing.T
	ctx      context.Context
	db       *storetest.Store // seeds through a client that is not counted
	sessions *session.Service
	broker   *activity.Broker
	c        *client.Client
	queries  *storetest.Counter
}

// newEnv wires the resolvers as the server does; a nil rt is an idle
// runtime (for tests that only read or are refused first).
func newEnv(t *testing.T, rt agent.Runtime) *env {
	t.Helper()
	return newEnvCounting(t, rt, nil)
}

// newEnvCounting is newEnv whose mutations are checked against @owner
// (checkOwner) with sessionCalls, the runtime's calls on sessions so far
// (nil: agenttest's own records).
func newEnvCounting(t *testing.T, rt agent.Runtime, sessionCalls func() int) *env {
	t.Helper()
	if rt == nil {
		rt = agenttest.Idle()
	}
	db := storetest.New(t)
	st, queries := db.Counting()
	broker := activity.New(activity.Options{})
	t.Cleanup(broker.Close)
	accounts := account.New(account.Config{Runtime: rt})
	sessions := session.New(session.Config{Store: st, Runtime: rt, Publisher: broker, Accounts: accounts})
	forks := fork.New(fork.Config{Store: st, Sessions: sessions, Accounts: accounts, Runtime: rt})
	h := graph.NewHandler(graph.HandlerConfig{Sessions: sessions, Accounts: accounts, Reads: sessionread.New(sessionread.Config{Store: st, Subscriber: broker}), Forks: forks})
	if sessionCalls == nil {
		if fake, ok := rt.(*agenttest.Runtime); ok {
			sessionCalls = func() int { return fakeSessionCalls(fake) }
		}
	}
	if sessionCalls != nil {
		h.AroundOperations(checkOwner(t, sessionCalls))
	}
	return &env{t: t, ctx: t.Context(), db: db, sessions: sessions, broker: broker, c: client.New(h), queries: queries}
}

var seedTime = storetest.SeedTime()

func (e *env) workspace(id string) { e.db.Workspace(storetest.Workspace{ID: id}) }

// sessionSpec is a session of workspace ws created i seconds after
// seedTime, with turns storetest.Exchanges (<id>-t<n>, n minutes after
// seedTime, "<id> q<n>" and "<id> a<n>").
func sessionSpec(ws, id, title string, i, turns int) storetest.Session {
	return storetest.Session{
		ID: id, Workspace: ws, Title: title, Cwd: "/work/" + ws,
		Settings:       agent.ComposerSettings{Model: "gpt-5", PermissionModeID: agent.PermissionWorkspaceWrite, BrowserUse: true},
		RuntimeContext: map[string]any{"k": "v"}, CreatedAt: seedTime.Add(time.Duration(i) * time.Second),
		Turns: storetest.Exchanges(id, turns),
	}
}

// session stores sessionSpec's session.
func (e *env) session(ws, id, title string, i, turns int) *ent.AgentSession {
	e.t.Helper()
	return e.db.Session(sessionSpec(ws, id, title, i, turns))
}

// fork records child as a fork of parent through turn lastTurn.
func (e *env) fork(ws, parent, child, lastTurn string, at int64) {
	e.t.Helper()
	e.db.Forks(storetest.Fork{Workspace: ws, Parent: parent, Child: child, TurnID: lastTurn, At: at})
}

// post runs an operation and fails the test on any error.
func (e *env) post(query string, out any, opts ...client.Option) {
	e.t.Helper()
	if err := e.c.Post(query, out, opts...); err != nil {
		e.t.Fatalf("%s: %v", query, err)
	}
}

// postErr runs an operation that must fail and returns its first error's
// extensions.code.
func (e *env) postErr(query string, opts ...client.Option) string {
	e.t.Helper()
	resp, err := e.c.RawPost(query, opts...)
	if err != nil {
		e.t.Fatalf("%s: %v", query, err)
	}
	var errs []struct {
		Extensions map[string]any `json:"extensions"`
	}
	if err := json.Unmarshal(resp.Errors, &errs); err != nil || len(errs) == 0 {
		e.t.Fatalf("%s: no error (errors %s)", query, resp.Errors)
	}
	code, _ := errs[0].Extensions["code"].(string)
	return code
}

// newCodexEnv is newEnv on the real codex app-server (offline, with
// codextest's model server), with ingestion running.
func newCodexEnv(t *testing.T) *env {
	t.Helper()
	model := codextest.StartModelServer(t)
	home := codextest.NewCodexHome(t, model.URL())
	calls := &codexSessionCalls{}
	rt := codex.New(codex.Config{Bin: codextest.Binary(t), Env: append(os.Environ(), "CODEX_HOME="+home),
		Logger: slog.New(slog.DiscardHandler), ClientVersion: "test", OnSent: calls.sent})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := rt.Launch(ctx); err != nil {
		t.Fatalf("launch codex: %v", err)
	}
	e := newEnvCounting(t, rt, calls.count)
	ingestCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.sessions.Ingest(ingestCtx) }()
	t.Cleanup(func() { _ = rt.Close(); stop(); <-done })
	return e
}

// eventually polls cond for up to 30s.
func (e *env) eventually(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
