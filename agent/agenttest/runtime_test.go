package agenttest_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"tuttid/agent"
	"tuttid/agent/agenttest"
)

func TestRuntimeDefaultsAndRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := agenttest.New()
	s, err := r.Start(ctx, agent.StartInput{Cwd: "/w"})
	if err != nil || s.ThreadID != "thread-start-1" || s.Cwd != "/w" {
		t.Errorf("Start: %+v, %v", s, err)
	}
	if tr, err := r.SendTurn(ctx, agent.SendTurnInput{Text: "hi"}); err != nil || tr.Status != agent.TurnInProgress {
		t.Errorf("SendTurn: %+v, %v", tr, err)
	}
	_ = r.Interrupt(ctx, agent.InterruptInput{TurnID: "t1"})
	res, err := r.Fork(ctx, agent.RuntimeForkInput{ParentThreadID: "p", LastTurnID: "t1"})
	if err != nil || res.Session.ThreadID != agenttest.ChildThreadID(1) || res.Fork.ParentThreadID != "p" ||
		res.Fork.LastTurnID != "t1" || !res.Fork.ForkedAt.Equal(agenttest.ForkedAt()) || res.History != nil {
		t.Errorf("Fork: %+v, %v", res, err)
	}
	if err := r.RespondToApproval(ctx, agent.ApprovalResponse{}); !errors.Is(err, agent.ErrApprovalNotPending) {
		t.Errorf("RespondToApproval: %v", err)
	}
	r.SetHistory("p", []agent.RuntimeTurn{{ID: "t1"}})
	if h, err := r.History(ctx, agent.HistoryInput{ThreadID: "p"}); err != nil || len(h) != 1 {
		t.Errorf("History: %v, %v", h, err)
	}
	_ = r.Archive(ctx, agent.ProviderCodex, "p")
	r.FailArchive(errors.New("down"))
	if err := r.Archive(ctx, agent.ProviderCodex, "q"); err == nil {
		t.Error("Archive after FailArchive succeeded")
	}
	r.SetListed([]agent.ThreadInfo{{ThreadID: "c", ForkedFromID: "p"}, {ThreadID: "d", ForkedFromID: "x"}}, nil)
	if l, _ := r.FindForks(ctx, agent.FindForksInput{ParentThreadID: "p"}); len(l) != 1 || l[0].ThreadID != "c" {
		t.Errorf("FindForks: %+v", l)
	}
	if len(r.Started()) != 1 || len(r.Sent()) != 1 || r.Interrupted()[0].TurnID != "t1" || r.ForkCalls() != 1 ||
		!slices.Equal(r.Archived(), []string{"p"}) {
		t.Errorf("records: %v %v %v %d %v", r.Started(), r.Sent(), r.Interrupted(), r.ForkCalls(), r.Archived())
	}
}

func TestRuntimeScriptsAndHolds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := agenttest.New()
	boom := errors.New("boom")
	r.ScriptForks(agenttest.ForkAnswer{Err: boom})
	if _, err := r.Fork(ctx, agent.RuntimeForkInput{}); !errors.Is(err, boom) {
		t.Errorf("scripted Fork: %v", err)
	}
	entered, release := r.HoldForks(1)
	returned := make(chan struct{})
	r.BeforeForkReturns(func() { close(returned) })
	done := make(chan error)
	go func() { _, err := r.Fork(ctx, agent.RuntimeForkInput{}); done <- err }()
	if n := <-entered; n != 2 {
		t.Errorf("held call number %d, want 2", n)
	}
	select {
	case <-done:
		t.Fatal("Fork returned while held")
	default:
	}
	release()
	if err := <-done; err != nil {
		t.Errorf("released Fork: %v", err)
	}
	<-returned
}

func TestIdleRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := agenttest.Idle()
	for name, err := range map[string]error{
		"Start":             func() error { _, err := r.Start(ctx, agent.StartInput{}); return err }(),
		"SendTurn":          func() error { _, err := r.SendTurn(ctx, agent.SendTurnInput{}); return err }(),
		"Interrupt":         r.Interrupt(ctx, agent.InterruptInput{}),
		"History":           func() error { _, err := r.History(ctx, agent.HistoryInput{}); return err }(),
		"Fork":              func() error { _, err := r.Fork(ctx, agent.RuntimeForkInput{}); return err }(),
		"RespondToApproval": r.RespondToApproval(ctx, agent.ApprovalResponse{}),
	} {
		if !errors.Is(err, agent.ErrRuntimeUnavailable) {
			t.Errorf("%s: %v, want ErrRuntimeUnavailable", name, err)
		}
	}
	if err := r.Health(ctx); err != nil {
		t.Errorf("Health: %v", err)
	}
	if err := r.Archive(ctx, agent.ProviderCodex, "t"); err != nil {
		t.Errorf("Archive: %v", err)
	}
}
