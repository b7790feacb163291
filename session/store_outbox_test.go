package session

import (
	"context"
	"errors"
	"testing"
	"time"

	"tuttid/activity"
	"tuttid/activity/pgfeed"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/turn"
	"tuttid/store"
	"tuttid/store/pgtest"
	"tuttid/store/storetest"
)

// killedAfterCommit is an outbox whose process dies between a commit and
// Committed: the staged events are in the database, nothing queued them.
type killedAfterCommit struct{ activity.Outbox }

func (killedAfterCommit) Committed(context.Context, []string) {}

// A turn's end committed on instance A whose process died before its
// feed moved the events reaches a subscriber on instance B once A starts
// again: TURN_COMPLETED, then SESSION_UPDATED (READY), once each, with
// nothing between them. With the feed running they reach B at once. A
// change that fails stages nothing. (PostgreSQL whatever TUTTID_TEST_DB
// says: the outbox exists only there.)
func TestCommittedChangeOutlivesAKill(t *testing.T) {
	ctx := t.Context()
	st, seed, feed, outbox, onB, first := outboxWorld(t)
	running := []storetest.Turn{{ID: "t1", Status: turn.StatusIN_PROGRESS}}
	killed := seed.Session(storetest.Session{ID: "killed", Workspace: "w", Status: agentsession.StatusWORKING, Turns: running})
	live := seed.Session(storetest.Session{ID: "live", Workspace: "w", Status: agentsession.StatusWORKING, Turns: running})

	a := feed("A")
	svc := New(Config{Store: st, Publisher: a, Outbox: killedAfterCommit{a}})
	if err := svc.completeTurn(ctx, killed, "t1", turn.StatusCOMPLETED, "", ""); err != nil {
		t.Fatal(err)
	}
	if err := svc.completeTurn(ctx, killed, "no such turn", turn.StatusCOMPLETED, "", ""); !ent.IsNotFound(err) {
		t.Fatalf("completing a turn that does not exist: %v, want not found", err)
	}
	a.Close()
	if n := outbox(); n != 2 {
		t.Fatalf("%d events in the outbox after the kill, want the committed change's 2", n)
	}

	a = feed("A") // the restart
	ended := nextOf(t, onB, activity.TurnCompleted, "killed")
	ready := nextOf(t, onB, activity.SessionUpdated, "killed")
	if ended.Seq != first+1 || ready.Seq != first+2 || ended.Turn.TurnID != "t1" || ended.Turn.Status != turn.StatusCOMPLETED ||
		ready.Session.Status != agentsession.StatusREADY {
		t.Errorf("after the restart B got %d %+v and %d %+v, want seqs %d, %d", ended.Seq, ended.Turn, ready.Seq, ready.Session, first+1, first+2)
	}

	svc = New(Config{Store: st, Publisher: a, Outbox: a})
	if err := svc.completeTurn(ctx, live, "t1", turn.StatusCOMPLETED, "", ""); err != nil {
		t.Fatal(err)
	}
	if e := nextOf(t, onB, activity.TurnCompleted, "live"); e.Seq != first+3 {
		t.Errorf("live TURN_COMPLETED numbered %d, want %d", e.Seq, first+3)
	}
	nextOf(t, onB, activity.SessionUpdated, "live")
	if n := outbox(); n != 0 {
		t.Errorf("%d events left in the outbox", n)
	}
}

// A fork committed with its events staged (StageForked, in the fork's
// transaction) whose process died before Announce: B gets SESSION_CREATED
// of the child and SESSION_FORKED of the parent after A's restart; a fork
// whose transaction rolled back stages nothing.
func TestStagedForkOutlivesAKill(t *testing.T) {
	ctx := t.Context()
	st, seed, feed, outbox, onB, first := outboxWorld(t)
	parent := seed.Session(storetest.Session{ID: "parent", Workspace: "w"})
	a := feed("A")
	svc := New(Config{Store: st, Publisher: a, Outbox: killedAfterCommit{a}})
	fork := func(childID string, commit bool) Staged {
		var staged Staged
		err := st.WithTx(ctx, func(tx *ent.Tx) error {
			child, err := CreateRecord(ctx, tx.Client(), NewSession{ID: childID, WorkspaceID: "w", Provider: parent.Provider,
				ThreadID: "thread-" + childID, Status: agentsession.StatusREADY, Visible: true, At: time.Now()})
			if err != nil {
				return err
			}
			row, err := tx.SessionFork.Create().SetWorkspaceID("w").SetParentAgentSessionID(parent.ID).
				SetChildAgentSessionID(childID).SetParentProviderSessionID(parent.ProviderSessionID).
				SetChildProviderSessionID(child.ProviderSessionID).SetProvider(parent.Provider).
				SetForkRequestID("req-" + childID).SetForkedAtUnixMs(1).Save(ctx)
			if err != nil {
				return err
			}
			if staged, err = svc.StageForked(ctx, tx, child, row); err != nil {
				return err
			}
			if !commit {
				return errRolledBack
			}
			return nil
		})
		if commit && err != nil {
			t.Fatal(err)
		}
		return staged
	}
	svc.Announce(ctx, fork("child", true))
	fork("rolled-back", false)
	a.Close()
	if n := outbox(); n != 2 {
		t.Fatalf("%d events in the outbox after the kill, want the fork's 2", n)
	}
	feed("A")
	if e := nextOf(t, onB, activity.SessionCreated, "child"); e.Seq != first+1 {
		t.Errorf("SESSION_CREATED numbered %d, want %d", e.Seq, first+1)
	}
	if e := nextOf(t, onB, activity.SessionForked, "parent"); e.Session.ID != "child" || e.Fork.ChildAgentSessionID != "child" {
		t.Errorf("SESSION_FORKED of %+v %+v, want the child", e.Session, e.Fork)
	}
}

var errRolledBack = errors.New("rolled back")

// outboxWorld is a PostgreSQL store whatever TUTTID_TEST_DB says (the
// outbox exists only there) with workspace w, feeds of named instances on
// it (feed), the outbox's row count, and a subscription to w on instance
// B past its SUBSCRIBED (first).
func outboxWorld(t *testing.T) (st *store.Store, seed *storetest.Store, feed func(string) *pgfeed.Feed, outbox func() int,
	onB <-chan activity.Event, first int64) {
	ctx := t.Context()
	url := pgtest.URL(t)
	st, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	seed = storetest.Wrap(t, st)
	seed.Workspace(storetest.Workspace{ID: "w"})
	feed = func(instance string) *pgfeed.Feed {
		f, err := pgfeed.New(ctx, pgfeed.Config{DB: st.DB, URL: url, Instance: instance})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(f.Close)
		return f
	}
	outbox = func() (n int) {
		if err := st.DB.QueryRowContext(ctx, `SELECT count(*) FROM activity_outbox`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	onB, err = feed("B").Subscribe(ctx, activity.Filter{WorkspaceID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	return st, seed, feed, outbox, onB, nextOf(t, onB, activity.Subscribed, "").Seq
}

// nextOf is ch's next event, which must be of kind for session.
func nextOf(t *testing.T, ch <-chan activity.Event, kind activity.Kind, session string) activity.Event {
	t.Helper()
	select {
	case e := <-ch:
		if e.Kind != kind || e.AgentSessionID != session {
			t.Fatalf("got %s of %q (seq %d), want %s of %q", e.Kind, e.AgentSessionID, e.Seq, kind, session)
		}
		return e
	case <-time.After(30 * time.Second):
		t.Fatalf("no %s of %q", kind, session)
	}
	return activity.Event{}
}
