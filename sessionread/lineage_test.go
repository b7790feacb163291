package sessionread_test

import (
	"context"
	"testing"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/paging"
	"tuttid/readahead"
	"tuttid/sessionread"
	"tuttid/store/storetest"
)

// TestReadFailuresAreStorageUnavailable: what the transports read fails
// with storage_unavailable (503), never a bare error (500), when the
// database does, with and without a list's read-ahead.
func TestReadFailuresAreStorageUnavailable(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.st.Workspace(storetest.Workspace{ID: "ws"})
	a := e.st.Session(storetest.Session{ID: "s1", Workspace: "ws"})
	listed := readahead.With(context.Background())
	if _, err := e.svc.Sessions(listed, "ws", true, nil, paging.Args{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Turns(listed, a.ID, sessionread.TurnArgs{}); err != nil {
		t.Fatal(err)
	}
	if err := e.st.DB.Close(); err != nil {
		t.Fatal(err)
	}
	turn := &ent.Turn{AgentSessionID: a.ID, TurnID: "t1"}
	for name, ctx := range map[string]context.Context{"alone": context.Background(), "listed": listed} {
		reads := map[string]func() error{
			"Parent":       func() error { _, err := e.svc.Parent(ctx, a); return err },
			"Children":     func() error { _, err := e.svc.Children(ctx, a); return err },
			"ForkedFrom":   func() error { _, err := e.svc.ForkedFrom(ctx, a); return err },
			"Ancestors":    func() error { _, err := e.svc.Ancestors(ctx, a); return err },
			"Tree":         func() error { _, err := e.svc.Tree(ctx, "ws", a.ID); return err },
			"DisplayTitle": func() error { _, err := e.svc.DisplayTitle(ctx, a); return err },
			"Messages":     func() error { _, err := e.svc.Messages(ctx, a.ID, paging.Args{Last: intp(1)}); return err },
			"TurnMessages": func() error { _, err := e.svc.TurnMessages(ctx, turn); return err },
			"Session":      func() error { _, err := e.svc.Session(ctx, "ws", a.ID); return err },
			"Turns":        func() error { _, err := e.svc.Turns(ctx, a.ID, sessionread.TurnArgs{}); return err },
		}
		for what, read := range reads {
			if code := apperr.CodeOf(read()); code != apperr.StorageUnavailable {
				t.Errorf("%s (%s): code %s, want %s", what, name, code, apperr.StorageUnavailable)
			}
		}
	}
}
