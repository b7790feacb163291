package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tuttid/gitrepo/gittest"
)

// TestWorktreeArchiveRestoreDelete is point 5: archive records the files
// and removes the worktree; restore makes it again at the same path with
// the same bytes; delete refuses unapplied changes (naming the files)
// unless discardChanges, then removes the worktree and the session's refs
// but not its branch; a worktree deleted by hand gives a clear error and
// loses nothing tuttid holds.
func TestWorktreeArchiveRestoreDelete(t *testing.T) {
	h := startServer(t, harnessOpts{})
	repo := gitRepo(t)
	ws := h.createWorkspaceAt("code", repo, "")
	parent := h.startSession(ws, "parent")
	h.send(ws, parent.ID, "hello")
	child, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "arch-1",
		"code": map[string]any{"mode": "WORKTREE", "branch": "keep/me"}})
	if len(errs) > 0 {
		t.Fatalf("fork: %v", errs)
	}
	wt := childCwd(t, h, child.ID)
	// The child's own edits: a change, a new file, a deletion, an
	// executable and a binary file.
	write(t, wt, "a.txt", "one\ntwo\nchild\n")
	write(t, wt, "new.txt", "new\n")
	os.Remove(filepath.Join(wt, "b.txt"))
	write(t, wt, "run.sh", "#!/bin/sh\necho hi\n")
	if err := os.Chmod(filepath.Join(wt, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := []byte{0, 1, 2, 255, '\r', '\n', 0}
	if err := os.WriteFile(filepath.Join(wt, "data.bin"), bin, 0o644); err != nil {
		t.Fatal(err)
	}
	files := gittest.Files(t, wt)

	if _, errs := h.updateSession(map[string]any{"workspaceId": ws, "agentSessionId": child.ID, "archived": true}); len(errs) > 0 {
		t.Fatalf("archive: %v", errs)
	}
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Fatalf("the worktree is still there after the archive: %v", err)
	}
	row := h.childCode(child.ID)
	if row.Present {
		t.Error("worktreePresent true after the archive")
	}
	if strings.Contains(git(t, repo, "worktree", "list"), wt) {
		t.Error("git still lists the archived worktree")
	}
	if _, errs := h.updateSession(map[string]any{"workspaceId": ws, "agentSessionId": child.ID, "archived": false}); len(errs) > 0 {
		t.Fatalf("restore: %v", errs)
	}
	if got := gittest.Files(t, wt); got != files {
		t.Errorf("restored files differ:\n%s\nwant\n%s", got, files)
	}
	if b := git(t, wt, "rev-parse", "--abbrev-ref", "HEAD"); b != "keep/me" {
		t.Errorf("restored on %q, want its branch", b)
	}
	if !h.childCode(child.ID).Present {
		t.Error("worktreePresent false after the restore")
	}

	// Delete refuses the unapplied changes and names the files.
	errs = h.do(`mutation($in: DeleteSessionInput!) { deleteSession(input: $in) }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": child.ID}}, nil)
	if len(errs) == 0 || errs[0].Code() != "agent.session_has_changes" ||
		!strings.Contains(errs[0].Message, "a.txt") || !strings.Contains(errs[0].Message, "new.txt") {
		t.Fatalf("delete = %+v, want agent.session_has_changes naming the files", errs)
	}
	if got := gittest.Files(t, wt); got != files {
		t.Error("a refused delete changed the worktree")
	}
	h.must(`mutation($in: DeleteSessionInput!) { deleteSession(input: $in) }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": child.ID, "discardChanges": true}}, nil)
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Errorf("the worktree is still there after the delete: %v", err)
	}
	if refs := git(t, repo, "for-each-ref", "refs/tuttid/sessions/"+child.ID+"/"); refs != "" {
		t.Errorf("the deleted session's refs are left: %s", refs)
	}
	if git(t, repo, "branch", "--list", "keep/me") == "" {
		t.Error("delete removed the session's branch")
	}

	// A worktree deleted by hand: a send says so clearly; delete (nothing
	// left to lose) goes through.
	other, _, errs := h.fork(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "arch-2",
		"code": map[string]any{"mode": "WORKTREE"}})
	if len(errs) > 0 {
		t.Fatalf("fork: %v", errs)
	}
	owt := childCwd(t, h, other.ID)
	if err := os.RemoveAll(owt); err != nil {
		t.Fatal(err)
	}
	errs = h.do(`mutation($in: SendMessageInput!) { sendMessage(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": other.ID, "text": "hi"}}, nil)
	if len(errs) == 0 || !strings.Contains(errs[0].Message, "missing") || !strings.Contains(errs[0].Message, owt) {
		t.Fatalf("send to a session whose worktree was deleted by hand = %+v, want a clear error naming it", errs)
	}
	if got := readFile(t, filepath.Join(repo, "a.txt")); got != "one\ntwo\n" {
		t.Errorf("the parent's a.txt = %q", got)
	}
	h.must(`mutation($in: DeleteSessionInput!) { deleteSession(input: $in) }`,
		map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": other.ID}}, nil)
	if strings.Contains(git(t, repo, "worktree", "list"), owt) {
		t.Error("git still lists the deleted session's worktree")
	}
}
