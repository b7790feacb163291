package server_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tuttid/gitrepo/gittest"
)

// TestRestoreWhoseWorktreeCannotBeMade: a restore whose worktree cannot be
// made again (its path taken by a directory the user made there while the
// session was archived) fails with agent.fork_code_failed naming the path,
// and changes nothing: the session stays archived (its flag, no
// SESSION_UPDATED, worktreePresent false), git has no worktree there, the
// user's files at the path are as they made them. Once they move them
// away, restore brings the session's files back byte for byte.
func TestRestoreWhoseWorktreeCannotBeMade(t *testing.T) {
	h := startServer(t, harnessOpts{})
	repo := gitRepo(t)
	ws := h.createWorkspaceAt("code", repo, "")
	parent := h.startSession(ws, "parent")
	h.send(ws, parent.ID, "hello")
	child, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "restore-1",
		"code": map[string]any{"mode": "WORKTREE", "branch": "try/restore"}})
	if len(errs) > 0 {
		t.Fatalf("fork: %v", errs)
	}
	wt := h.childCode(child.ID).Path
	write(t, wt, "a.txt", "one\ntwo\nchild\n")
	write(t, wt, "new.txt", "new\n")
	if err := os.WriteFile(filepath.Join(wt, "data.bin"), []byte{0, 1, 255, '\r', '\n'}, 0o644); err != nil {
		t.Fatal(err)
	}
	files := gittest.Files(t, wt)
	if _, errs := h.updateSession(map[string]any{"workspaceId": ws, "agentSessionId": child.ID, "archived": true}); len(errs) > 0 {
		t.Fatalf("archive: %v", errs)
	}
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Fatalf("the worktree is still there after the archive: %v", err)
	}

	// The user makes a directory of their own at the path.
	if err := os.MkdirAll(wt, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, wt, "mine.txt", "the user's notes\n")
	mine := gittest.Files(t, wt)
	after := h.publishMarker(ws)

	got, errs := h.updateSession(map[string]any{"workspaceId": ws, "agentSessionId": child.ID, "archived": false})
	if len(errs) == 0 || errs[0].Code() != "agent.fork_code_failed" || !strings.Contains(errs[0].Message, wt) ||
		!strings.Contains(errs[0].Message, "archived") {
		t.Fatalf("restore onto a taken path = %+v, %+v; want agent.fork_code_failed naming the path", got, errs)
	}
	if gittest.Files(t, wt) != mine {
		t.Errorf("a failed restore changed the user's files at %s:\n%s\nwant\n%s", wt, gittest.Files(t, wt), mine)
	}
	if h.childCode(child.ID).Present {
		t.Error("worktreePresent true after a failed restore")
	}
	if strings.Contains(git(t, repo, "worktree", "list"), wt) {
		t.Error("git lists a worktree at the path after a failed restore")
	}
	var out struct {
		Session struct {
			Archived bool
			Code     struct{ WorktreePresent bool }
		}
	}
	h.must(`query($ws: ID!, $id: ID!) { session(workspaceId: $ws, id: $id) { archived code { worktreePresent } } }`,
		map[string]any{"ws": ws, "id": child.ID}, &out)
	if !out.Session.Archived || out.Session.Code.WorktreePresent {
		t.Errorf("after a failed restore the session reads %+v, want archived without its worktree", out.Session)
	}
	if !slices.Contains(h.listed(ws, "true"), child.ID) {
		t.Error("the session is not listed as archived after a failed restore")
	}
	// Nothing was published for the session between the two markers.
	end := h.publishMarker(ws)
	sub := h.ws(protoTransportWS).subscribe(activityQuery, activityVars(ws, "", after))
	h.mustSubscribed(sub, ws, "", after)
	for _, e := range mustReadUntil(t, sub, func(e activityEvent) bool { return e.Seq == end }) {
		if e.AgentSessionID == child.ID {
			t.Errorf("a failed restore published %s for the session", e.Kind)
		}
	}
	sub.stop()

	// The user moves their files away: restore works, byte for byte.
	if err := os.RemoveAll(wt); err != nil {
		t.Fatal(err)
	}
	got, errs = h.updateSession(map[string]any{"workspaceId": ws, "agentSessionId": child.ID, "archived": false})
	if len(errs) > 0 || got.Archived {
		t.Fatalf("restore once the path is free = %+v, %v", got, errs)
	}
	if got := gittest.Files(t, wt); got != files {
		t.Errorf("restored files differ:\n%s\nwant\n%s", got, files)
	}
	if b := git(t, wt, "rev-parse", "--abbrev-ref", "HEAD"); b != "try/restore" {
		t.Errorf("restored on %q, want its branch", b)
	}
	if !h.childCode(child.ID).Present {
		t.Error("worktreePresent false after the restore")
	}
}
