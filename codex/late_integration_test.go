package codex_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"tuttid/agent"
)

// A thread/fork the real Codex answers after the caller gave up (a 1 ms
// deadline): Fork fails with ErrRequestLost, and the late reply's thread,
// which Codex did make from the parent, reaches OnLateThread (issue 22,
// point 3).
func TestCodexLateForkReplyNamesThread(t *testing.T) {
	g, _ := newRealRig(t, nil)
	cwd := t.TempDir()
	s, err := g.rt.Start(rctx(t), agent.StartInput{Provider: agent.ProviderCodex, Cwd: cwd, Settings: readOnly})
	if err != nil {
		t.Fatal(err)
	}
	g.turn(t, s.ThreadID, "hello", readOnly)
	before := time.Now()
	late := make(chan string, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	_, err = g.rt.Fork(ctx, agent.RuntimeForkInput{Provider: agent.ProviderCodex, ParentThreadID: s.ThreadID, Cwd: cwd,
		Settings: readOnly, OnLateThread: func(id string) { late <- id }})
	if !errors.Is(err, agent.ErrRequestLost) {
		t.Fatalf("Fork with a 1ms deadline = %v, want ErrRequestLost", err)
	}
	var thread string
	select {
	case thread = <-late:
	case <-time.After(realWait):
		t.Fatal("the late reply never reached OnLateThread")
	}
	found, err := g.rt.FindForks(rctx(t), agent.FindForksInput{Provider: agent.ProviderCodex,
		ParentThreadID: s.ThreadID, Cwd: cwd, CreatedAfter: before})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0].ThreadID != thread {
		t.Errorf("forks of the parent at Codex = %+v, want the late thread %s", found, thread)
	}
}
