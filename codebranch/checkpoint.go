package codebranch

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// MaxUntrackedSize: an untracked file larger than this is left out of
// snapshots (build outputs, dumps and media would bloat the repository).
const MaxUntrackedSize = 10 << 20

// Snapshot is the state of a checkout's working files at one moment.
type Snapshot struct {
	// Tree holds the working files: tracked, staged and untracked, minus
	// what git ignores and untracked files over MaxUntrackedSize.
	Tree string
	// Head is the commit HEAD named then; "" when HEAD was unborn.
	Head string
	// Skipped lists the untracked files left out for their size.
	Skipped []string
}

// Snapshot records the working files of r as a tree in the repository's
// object store (nothing references it: git gc may prune it after its
// grace period). The user's index is read, never written: the tree is
// built in a temporary copy of it, so only files whose stat data changed
// since the user's last git command are hashed again.
func (r *Repo) Snapshot(ctx context.Context) (Snapshot, error) {
	head, err := r.Head(ctx)
	if err != nil {
		return Snapshot{}, err
	}
	tmp, err := os.MkdirTemp("", "tuttid-index-")
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot: %w", err)
	}
	defer os.RemoveAll(tmp)
	index := filepath.Join(tmp, "index")
	env := []string{"GIT_INDEX_FILE=" + index}
	seeded, err := copyIndex(filepath.Join(r.GitDir, "index"), index)
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot: seed index: %w", err)
	}
	if !seeded && head != "" {
		if _, err := r.run(ctx, env, "read-tree", head); err != nil {
			return Snapshot{}, fmt.Errorf("snapshot: seed index from HEAD: %w", err)
		}
	}
	// One walk lists modified (C), deleted (R) and untracked (?) files,
	// against the temporary index.
	out, err := r.run(ctx, env, "ls-files", "-z", "-t", "-m", "-d", "-o", "--exclude-standard")
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot: list changes: %w", err)
	}
	seen := map[string]bool{}
	var update, gone, skipped []string
	for _, rec := range splitZ(out) {
		tag, path, ok := strings.Cut(rec, " ")
		if !ok || path == "" || seen[path] {
			continue
		}
		seen[path] = true
		if tag == "?" {
			// A directory entry is a nested repository: its files are not
			// this repository's, and a gitlink to a commit nothing here
			// keeps alive would restore nothing.
			if strings.HasSuffix(path, "/") {
				continue
			}
			fi, err := os.Lstat(filepath.Join(r.Root, filepath.FromSlash(path)))
			if err == nil && fi.Mode().IsRegular() && fi.Size() > MaxUntrackedSize {
				skipped = append(skipped, path)
				continue
			}
		} else if fi, err := os.Lstat(filepath.Join(r.Root, filepath.FromSlash(path))); err == nil && fi.IsDir() {
			// A tracked file replaced by a directory: update-index refuses
			// to "add" a directory; the files in it come as untracked.
			gone = append(gone, path)
			continue
		}
		update = append(update, path)
	}
	for _, batch := range []struct {
		paths []string
		flags []string
	}{
		{gone, []string{"--force-remove"}},
		{update, []string{"--add", "--remove", "--replace"}},
	} {
		if len(batch.paths) == 0 {
			continue
		}
		in := strings.Join(batch.paths, "\x00") + "\x00"
		args := append(append([]string{"update-index"}, batch.flags...), "-z", "--stdin")
		if _, err := r.git.run(ctx, call{dir: r.Root, env: env, stdin: strings.NewReader(in)}, args...); err != nil {
			return Snapshot{}, fmt.Errorf("snapshot: update index: %w", err)
		}
	}
	tree, err := r.run(ctx, env, "write-tree")
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot: write tree: %w", err)
	}
	sort.Strings(skipped)
	return Snapshot{Tree: strings.TrimSpace(string(tree)), Head: head, Skipped: skipped}, nil
}

// copyIndex copies the index at src to dst, keeping its modification time:
// git trusts an entry's stat data only if the entry is older than the
// index file, so a newer copy could hide a racy edit. It reports false
// when there is no index at src.
func copyIndex(src, dst string) (bool, error) {
	in, err := os.Open(src)
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return false, err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return false, err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return false, err
	}
	if err := out.Close(); err != nil {
		return false, err
	}
	return true, os.Chtimes(dst, fi.ModTime(), fi.ModTime())
}

// CheckpointOptions say where a checkpoint goes.
type CheckpointOptions struct {
	// Ref keeps the checkpoint alive; it must be under RefPrefix (TurnRef,
	// SessionRef). It is created or moved.
	Ref string
	// Previous is the session's previous checkpoint commit, if any: when
	// the files and HEAD are the same, Ref points at it and no object is
	// added.
	Previous string
	// Message of the commit; a default names the ref.
	Message string
	// Time of the commit; now when zero.
	Time time.Time
}

// Checkpoint is a recorded state of a checkout's files.
type Checkpoint struct {
	// Commit has the files as its tree and Head as its first parent (no
	// parent when HEAD was unborn).
	Commit string
	Tree   string
	// Head is the commit HEAD named then; "" when unborn.
	Head string
	// Reused: the files and HEAD were those of Previous, which Commit is.
	Reused bool
	// Skipped lists the untracked files left out for their size.
	Skipped []string
}

// Checkpoint records r's working files as a commit kept alive by opts.Ref
// only. The user's index, HEAD, branches, tags, stash and files are not
// touched.
func (r *Repo) Checkpoint(ctx context.Context, opts CheckpointOptions) (Checkpoint, error) {
	if err := r.checkRef(ctx, opts.Ref); err != nil {
		return Checkpoint{}, err
	}
	snap, err := r.Snapshot(ctx)
	if err != nil {
		return Checkpoint{}, err
	}
	cp := Checkpoint{Tree: snap.Tree, Head: snap.Head, Skipped: snap.Skipped}
	if opts.Previous != "" {
		prev, err := r.ReadCheckpoint(ctx, opts.Previous)
		if err != nil {
			return Checkpoint{}, err
		}
		if prev.Tree == snap.Tree && prev.Head == snap.Head {
			cp.Commit, cp.Reused = prev.Commit, true
		}
	}
	if cp.Commit == "" {
		cp.Commit, err = r.commitTree(ctx, snap.Tree, snap.Head, opts)
		if err != nil {
			return Checkpoint{}, err
		}
	}
	if _, err := r.run(ctx, nil, "update-ref", opts.Ref, cp.Commit); err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint: set %s: %w", opts.Ref, err)
	}
	return cp, nil
}

func (r *Repo) commitTree(ctx context.Context, tree, parent string, opts CheckpointOptions) (string, error) {
	msg := opts.Message
	if msg == "" {
		msg = "tuttid checkpoint " + opts.Ref
	}
	when := opts.Time
	if when.IsZero() {
		when = time.Now()
	}
	date := fmt.Sprintf("@%d +0000", when.Unix())
	env := []string{"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}
	args := []string{"commit-tree", tree, "-m", msg}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	out, err := r.run(ctx, env, args...)
	if err != nil {
		return "", fmt.Errorf("checkpoint: commit: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// ReadCheckpoint reads a checkpoint commit (any commit-ish): its tree and
// first parent.
func (r *Repo) ReadCheckpoint(ctx context.Context, commitish string) (Checkpoint, error) {
	out, err := r.run(ctx, nil, "show", "-s", "--no-show-signature", "--format=%H%n%T%n%P", commitish+"^{commit}", "--")
	if err != nil {
		return Checkpoint{}, fmt.Errorf("read checkpoint %s: %w", commitish, err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) < 2 {
		return Checkpoint{}, fmt.Errorf("read checkpoint %s: %w: unexpected output %q", commitish, ErrGit, out)
	}
	cp := Checkpoint{Commit: lines[0], Tree: lines[1]}
	if len(lines) > 2 {
		cp.Head, _, _ = strings.Cut(lines[2], " ")
	}
	return cp, nil
}
