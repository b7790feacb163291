package gitrepo

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
)

// MaxPatchBytes bounds Diff.Patch (the contract's 4 MiB).
const MaxPatchBytes = 4 << 20

// FileStatus is what happened to a file between two trees.
type FileStatus string

const (
	Added    FileStatus = "ADDED"
	Modified FileStatus = "MODIFIED"
	Deleted  FileStatus = "DELETED"
)

// FileChange is one changed file; Path is relative to the repository root.
type FileChange struct {
	Path      string
	Status    FileStatus
	Additions int
	Deletions int
	// Binary: git counts no lines for it.
	Binary bool
}

// Diff is what changed between two trees.
type Diff struct {
	Files []FileChange
	// Patch is the change in git diff format, cut at a line end before
	// MaxPatchBytes when Truncated.
	Patch     string
	Truncated bool
}

// Diff compares two tree-ishes (commits, trees, checkpoints); from "" is
// the empty tree. Renames are shown as a deletion and an addition, so that
// every path of the parent or the child is named as it is there.
func (r *Repo) Diff(ctx context.Context, from, to string) (Diff, error) {
	return r.diff(ctx, from, to, true)
}

// DiffFiles is Diff without the patch (one git call fewer): what a list
// of changed files needs.
func (r *Repo) DiffFiles(ctx context.Context, from, to string) (Diff, error) {
	return r.diff(ctx, from, to, false)
}

func (r *Repo) diff(ctx context.Context, from, to string, withPatch bool) (Diff, error) {
	if from == "" {
		var err error
		if from, err = r.emptyTree(ctx); err != nil {
			return Diff{}, err
		}
	}
	key := diffKey{r.CommonDir, from, to}
	if !withPatch {
		if files, ok := r.git.diffs.get(key); ok {
			return Diff{Files: files}, nil
		}
	}
	base := []string{"diff-tree", "-r", "--no-renames", "--no-ext-diff", "--no-textconv"}
	status, err := r.run(ctx, nil, append(base, "-z", "--name-status", from, to, "--")...)
	if err != nil {
		return Diff{}, fmt.Errorf("diff %s %s: %w", from, to, err)
	}
	numstat, err := r.run(ctx, nil, append(base, "-z", "--numstat", from, to, "--")...)
	if err != nil {
		return Diff{}, fmt.Errorf("diff %s %s: %w", from, to, err)
	}
	files, err := parseDiffStats(status, numstat)
	if err != nil {
		return Diff{}, fmt.Errorf("diff %s %s: %w", from, to, err)
	}
	r.git.diffs.put(key, files)
	if !withPatch {
		return Diff{Files: files}, nil
	}
	patch, err := r.git.runResult(ctx, call{dir: r.Root, limit: MaxPatchBytes},
		append(base, "-p", "--no-color", from, to, "--")...)
	if err != nil {
		return Diff{}, fmt.Errorf("diff %s %s: %w", from, to, err)
	}
	out := patch.stdout
	if patch.truncated {
		if i := bytes.LastIndexByte(out, '\n'); i >= 0 {
			out = out[:i+1]
		}
	}
	return Diff{Files: files, Patch: string(out), Truncated: patch.truncated}, nil
}

// parseDiffStats joins diff-tree -z --name-status ("M\0path\0") and
// --numstat ("adds\tdels\tpath\0") output.
func parseDiffStats(status, numstat []byte) ([]FileChange, error) {
	recs := splitZ(status)
	if len(recs)%2 != 0 {
		return nil, fmt.Errorf("%w: odd name-status output", ErrGit)
	}
	files := make([]FileChange, 0, len(recs)/2)
	index := make(map[string]int, len(recs)/2)
	for i := 0; i < len(recs); i += 2 {
		fc := FileChange{Path: recs[i+1]}
		switch recs[i] {
		case "A":
			fc.Status = Added
		case "D":
			fc.Status = Deleted
		default: // M, T (type change)
			fc.Status = Modified
		}
		index[fc.Path] = len(files)
		files = append(files, fc)
	}
	for _, rec := range splitZ(numstat) {
		parts := strings.SplitN(rec, "\t", 3)
		if len(parts) != 3 {
			continue
		}
		i, ok := index[parts[2]]
		if !ok {
			continue
		}
		if parts[0] == "-" {
			files[i].Binary = true
			continue
		}
		files[i].Additions, _ = strconv.Atoi(parts[0])
		files[i].Deletions, _ = strconv.Atoi(parts[1])
	}
	return files, nil
}

// Changes is the diff from base (a tree-ish; HEAD when "") to r's working
// files now, as Snapshot records them. Outside of refs: nothing is kept.
func (r *Repo) Changes(ctx context.Context, base string) (Diff, error) {
	snap, err := r.Snapshot(ctx, SnapshotOptions{})
	if err != nil {
		return Diff{}, err
	}
	if base == "" {
		base = snap.Head
	}
	return r.Diff(ctx, base, snap.Tree)
}
