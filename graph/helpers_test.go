package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/99designs/gqlgen/client"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"

	"tuttid/activity"
	"tuttid/agent"
	"tuttid/codex"
	"tuttid/codex/codextest"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/fork"
	"tuttid/graph"
	"tuttid/graph/generated"
	"tuttid/session"
	"tuttid/store"
)

// env is the GraphQL executor over a real SQLite file, in process, with
// gqlgen's test client; queries counts the SQL queries ent sends.
type env struct {
	t        *testing.T
	ctx      context.Context
	st       *store.Store
	sessions *session.Service
	broker   *activity.Broker
	c        *client.Client
	queries  *countingDriver
}

// newEnv wires the resolvers as the server does; rt may be nil for
// read-only tests.
func newEnv(t *testing.T, rt agent.Runtime) *env {
	t.Helper()
	ctx := t.Context()
	opened, err := store.Open(ctx, filepath.Join(t.TempDir(), "tuttid.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { opened.Close() })
	drv := &countingDriver{Driver: entsql.OpenDB(dialect.SQLite, opened.DB)}
	st := &store.Store{Client: ent.NewClient(ent.Driver(drv)), DB: opened.DB}
	broker := activity.New(activity.Options{})
	t.Cleanup(broker.Close)
	sessions := session.New(session.Config{Store: st, Runtime: rt, Publisher: broker, Subscriber: broker})
	forks := fork.New(fork.Config{Store: st, Sessions: sessions, Runtime: rt})
	res := &graph.Resolver{Sessions: sessions, Lineage: sessions, Tooling: sessions, Forks: forks}
	srv := handler.New(generated.NewExecutableSchema(generated.Config{Resolvers: res}))
	srv.AddTransport(transport.Websocket{KeepAlivePingInterval: time.Second})
	srv.AddTransport(transport.POST{})
	srv.AroundOperations(graph.ReadAhead)
	srv.SetErrorPresenter(graph.PresentError(slog.New(slog.DiscardHandler)))
	return &env{t: t, ctx: ctx, st: st, sessions: sessions, broker: broker, c: client.New(srv), queries: drv}
}

// countingDriver counts the queries that reach the database.
type countingDriver struct {
	dialect.Driver
	n atomic.Int64
}

func (d *countingDriver) Query(ctx context.Context, query string, args, v any) error {
	d.n.Add(1)
	return d.Driver.Query(ctx, query, args, v)
}

// count runs fn and returns how many queries it sent.
func (d *countingDriver) count(fn func()) int64 {
	before := d.n.Load()
	fn()
	return d.n.Load() - before
}

var seedTime = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

func (e *env) workspace(id string) {
	e.t.Helper()
	if err := e.st.Client.Workspace.Create().SetID(id).SetName("workspace " + id).SetRootPath("/work/" + id).
		SetCreatedAt(seedTime).SetUpdatedAt(seedTime).Exec(e.ctx); err != nil {
		e.t.Fatal(err)
	}
}

// session stores a session created i seconds after seedTime.
func (e *env) session(ws, id, title string, i int) *ent.AgentSession {
	e.t.Helper()
	at := seedTime.Add(time.Duration(i) * time.Second)
	a, err := e.st.Client.AgentSession.Create().SetID(id).SetWorkspaceID(ws).SetProvider(agent.ProviderCodex).
		SetProviderSessionID("thread-" + id).SetTitle(title).SetStatus(agentsession.StatusREADY).SetCwd("/work/" + ws).
		SetSettings(agent.ComposerSettings{Model: "gpt-5", PermissionModeID: agent.PermissionWorkspaceWrite, BrowserUse: true}).
		SetRuntimeContext(map[string]any{"k": "v"}).SetCreatedAt(at).SetUpdatedAt(at).Save(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

// fork records child as a fork of parent through turn lastTurn.
func (e *env) fork(ws, parent, child, lastTurn string, at int64) *ent.SessionFork {
	e.t.Helper()
	f, err := e.st.Client.SessionFork.Create().SetWorkspaceID(ws).
		SetParentAgentSessionID(parent).SetChildAgentSessionID(child).
		SetParentProviderSessionID("thread-" + parent).SetChildProviderSessionID("thread-" + child).
		SetProvider(agent.ProviderCodex).SetForkTurnID(lastTurn).SetForkRequestID("req-" + child).
		SetForkedAtUnixMs(at).Save(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	return f
}

// history stores turns of a session, each with a user and an assistant
// message ("<id> q<n>", "<id> a<n>").
func (e *env) history(a *ent.AgentSession, turns int) {
	e.t.Helper()
	var msgs []agent.RuntimeMessage
	for i := 1; i <= turns; i++ {
		tid := fmt.Sprintf("%s-t%d", a.ID, i)
		if err := e.st.Client.Turn.Create().SetTurnID(tid).SetAgentSessionID(a.ID).SetStatus("COMPLETED").
			SetStartedAt(seedTime.Add(time.Duration(i) * time.Minute)).Exec(e.ctx); err != nil {
			e.t.Fatal(err)
		}
		msgs = append(msgs,
			agent.RuntimeMessage{ID: tid + "-u", TurnID: tid, Role: "user", Kind: "userMessage", Text: fmt.Sprintf("%s q%d", a.ID, i), Status: "completed",
				Content: []byte(`{"type":"userMessage"}`)},
			agent.RuntimeMessage{ID: tid + "-a", TurnID: tid, Role: "assistant", Kind: "agentMessage", Text: fmt.Sprintf("%s a%d", a.ID, i), Status: "completed"})
	}
	err := e.st.WithTx(e.ctx, func(tx *ent.Tx) error {
		_, err := session.InsertHistory(e.ctx, tx, a, msgs, seedTime)
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
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
	rt := codex.New(codex.Config{Bin: codextest.Binary(t), Env: append(os.Environ(), "CODEX_HOME="+home),
		Logger: slog.New(slog.DiscardHandler), ClientVersion: "test"})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := rt.Launch(ctx); err != nil {
		t.Fatalf("launch codex: %v", err)
	}
	e := newEnv(t, rt)
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
