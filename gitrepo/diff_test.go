package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestDiffBetweenCheckpoints(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name      string
		change    func(t *testing.T, repo string)
		want      []FileChange
		inPatch   []string
		truncated bool
	}{
		{
			name: "shell edits: modify, add, delete",
			change: func(t *testing.T, repo string) {
				runShell(t, repo, "printf 'a2\\na3\\n' >> a.txt && echo n > n.txt && rm dir/b.txt")
			},
			want: []FileChange{
				{Path: "a.txt", Status: Modified, Additions: 2},
				{Path: "dir/b.txt", Status: Deleted, Deletions: 1},
				{Path: "n.txt", Status: Added, Additions: 1},
			},
			inPatch: []string{"+a2\n", "-b1\n", "+++ b/n.txt\n"},
		},
		{
			name:   "rename is a deletion and an addition",
			change: func(t *testing.T, repo string) { runShell(t, repo, "mv a.txt moved.txt") },
			want: []FileChange{
				{Path: "a.txt", Status: Deleted, Deletions: 1},
				{Path: "moved.txt", Status: Added, Additions: 1},
			},
		},
		{
			name: "binary file",
			change: func(t *testing.T, repo string) {
				if err := os.WriteFile(filepath.Join(repo, "img.bin"), []byte{0, 1, 2, 0, 255}, 0o644); err != nil {
					t.Fatal(err)
				}
			},
			want:    []FileChange{{Path: "img.bin", Status: Added, Binary: true}},
			inPatch: []string{"Binary files /dev/null and b/img.bin differ"},
		},
		{
			name: "patch over 4 MiB is cut at a line end",
			change: func(t *testing.T, repo string) {
				line := strings.Repeat("x", 99) + "\n"
				writeFile(t, filepath.Join(repo, "huge.txt"), strings.Repeat(line, 50_000)) // 5 MB
			},
			want:      []FileChange{{Path: "huge.txt", Status: Added, Additions: 50_000}},
			truncated: true,
		},
		{
			name:   "nothing changed",
			change: func(t *testing.T, repo string) {},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := testGit(t)
			repo := newRepo(t)
			r := openRepo(t, g, repo)
			before, err := r.Checkpoint(ctx, CheckpointOptions{Ref: TurnRef("s", "1")})
			if err != nil {
				t.Fatal(err)
			}
			tc.change(t, repo)
			after, err := r.Checkpoint(ctx, CheckpointOptions{Ref: TurnRef("s", "2"), Previous: before.Commit})
			if err != nil {
				t.Fatal(err)
			}
			d, err := r.Diff(ctx, before.Commit, after.Commit)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(d.Files, tc.want) {
				t.Errorf("files %+v\nwant  %+v", d.Files, tc.want)
			}
			for _, s := range tc.inPatch {
				if !strings.Contains(d.Patch, s) {
					t.Errorf("patch lacks %q:\n%s", s, d.Patch)
				}
			}
			if d.Truncated != tc.truncated {
				t.Errorf("truncated %v, want %v", d.Truncated, tc.truncated)
			}
			if len(d.Patch) > MaxPatchBytes || (d.Patch != "" && !strings.HasSuffix(d.Patch, "\n")) {
				t.Errorf("patch of %d bytes, ends %q", len(d.Patch), d.Patch[max(0, len(d.Patch)-5):])
			}
			if tc.truncated && len(d.Patch) < MaxPatchBytes-200 {
				t.Errorf("truncated patch of only %d bytes", len(d.Patch))
			}
		})
	}
}

func TestDiffFromEmptyAndChanges(t *testing.T) {
	ctx := context.Background()
	g := testGit(t)
	repo := newRepo(t)
	r := openRepo(t, g, repo)
	d, err := r.Diff(ctx, "", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Files) != 3 || d.Files[0].Status != Added {
		t.Errorf("from the empty tree: %+v", d.Files)
	}
	writeFile(t, filepath.Join(repo, "dir", "b.txt"), "b2\n")
	writeFile(t, filepath.Join(repo, "u.txt"), "u\n")
	before := captureState(t, repo)
	ch, err := r.Changes(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []FileChange{{Path: "dir/b.txt", Status: Modified, Additions: 1, Deletions: 1}, {Path: "u.txt", Status: Added, Additions: 1}}
	if !slices.Equal(ch.Files, want) {
		t.Errorf("changes against HEAD: %+v, want %+v", ch.Files, want)
	}
	assertStateUnchanged(t, before, repo)
}
