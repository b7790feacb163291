package main

import (
	"bytes"
	"testing"

	"tuttid/fork"
)

// A pending attempt (its thread, if any, not known yet) is listed with `-`
// for the thread, so that the line keeps its four fields (issue 22,
// point 3).
func TestPrintOrphansPendingAttempt(t *testing.T) {
	var b bytes.Buffer
	err := printOrphans(&b, []fork.Orphan{
		{State: "pending", ParentAgentSessionID: "p1", RequestID: "r1"},
		{ProviderThreadID: "thr-2", State: "archived", ParentAgentSessionID: "p1", RequestID: "r2"},
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := "- pending p1 r1\nthr-2 archived p1 r2\n"; b.String() != want {
		t.Errorf("printed %q, want %q", b.String(), want)
	}
}

// On a shared database each line ends with the instance that made the
// attempt (its Codex holds the thread).
func TestPrintOrphansInstance(t *testing.T) {
	var b bytes.Buffer
	err := printOrphans(&b, []fork.Orphan{
		{ProviderThreadID: "thr-1", State: "orphaned", ParentAgentSessionID: "p1", RequestID: "r1", InstanceID: "a"},
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := "thr-1 orphaned p1 r1 a\n"; b.String() != want {
		t.Errorf("printed %q, want %q", b.String(), want)
	}
}
