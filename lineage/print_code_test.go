package lineage_test

import (
	"strings"
	"testing"

	"tuttid/lineage"
)

// The text format marks each session with a worktree of its own and the
// files it changed; SHARED sessions print as before; a worktree path is
// printed terminal-safe.
func TestPrintCode(t *testing.T) {
	n := func(i int) *int { return &i }
	for _, tc := range []struct {
		name string
		code map[string]lineage.Code
		want string
	}{
		{"none", nil, "Root task [READY] r\n  say \"hi\" \\ bye [WORKING] c\n    Untitled [READY] w\n"},
		{"worktrees", map[string]lineage.Code{
			"r": {Mode: "SHARED", WorktreePresent: true, FilesChanged: n(4)},
			"c": {Mode: "WORKTREE", WorktreePath: "/d/wt/c", WorktreePresent: true, FilesChanged: n(1)},
			"w": {Mode: "WORKTREE", WorktreePath: "/d/wt/\x1b[2Jw", FilesChanged: n(3)},
		}, "Root task [READY] r\n  say \"hi\" \\ bye [WORKING] c {worktree /d/wt/c, 1 file changed}\n" +
			"    Untitled [READY] w {worktree /d/wt/\\x1b[2Jw (archived), 3 files changed}\n"},
		{"unreadable", map[string]lineage.Code{"c": {Mode: "WORKTREE", WorktreePath: "/gone", WorktreePresent: true}},
			"Root task [READY] r\n  say \"hi\" \\ bye [WORKING] c {worktree /gone, changes unknown}\n    Untitled [READY] w\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := lineage.Print(&b, printTree(), lineage.PrintOptions{Format: "text", Untitled: "Untitled", Code: tc.code}); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got:\n%q\nwant:\n%q", b.String(), tc.want)
			}
		})
	}
}
