package gitrepo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// WorktreeOptions say what worktree CreateWorktree makes.
type WorktreeOptions struct {
	// Checkpoint is the commit whose files the worktree gets (a
	// Checkpoint's Commit, or a ref to it).
	Checkpoint string
	// Path is where the worktree goes: absolute, not there yet (its parent
	// is created).
	Path string
	// NewBranch, when set, is a branch created at the checkpoint's HEAD and
	// checked out; else HEAD is detached there.
	NewBranch string
	// Branch, when set, is an existing branch to check out (restoring an
	// archived worktree that was on it); the working files are still the
	// checkpoint's. Exclusive with NewBranch.
	Branch string
	// CopyIncluded copies, from r's working tree, the ignored files that
	// match r's .worktreeinclude.
	CopyIncluded bool
}

// Worktree is a linked worktree made by CreateWorktree.
type Worktree struct {
	// Path is its top level.
	Path string
	// Dir is the equivalent there of the directory r was opened in: the
	// child session's cwd.
	Dir string
	// Head is the commit checked out; Branch the branch, "" when detached.
	Head   string
	Branch string
	// Included lists the ignored files copied for .worktreeinclude.
	Included []string
}

// CreateWorktree makes a linked worktree of r's repository at opts.Path
// whose working files are the checkpoint's: HEAD is the checkpoint's first
// parent (the HEAD of that moment), the index matches HEAD, and what the
// checkpoint changed is there as uncommitted changes and untracked files.
// On failure nothing is left behind: no worktree, no branch.
func (r *Repo) CreateWorktree(ctx context.Context, opts WorktreeOptions) (Worktree, error) {
	fail := func(err error) (Worktree, error) {
		return Worktree{}, fmt.Errorf("create worktree %s: %w", opts.Path, err)
	}
	if !filepath.IsAbs(opts.Path) {
		return fail(fmt.Errorf("%w: path is not absolute", ErrInvalidInput))
	}
	if opts.NewBranch != "" && opts.Branch != "" {
		return fail(fmt.Errorf("%w: both a new and an existing branch", ErrInvalidInput))
	}
	if _, err := os.Lstat(opts.Path); err == nil {
		return fail(ErrDestinationExists)
	} else if !os.IsNotExist(err) {
		return fail(err)
	}
	// A worktree deleted by hand is still registered at its path: its
	// files are gone, and git refuses the path until it is cleared.
	if e, err := r.findWorktree(ctx, opts.Path); err == nil && !e.Main {
		if _, err := r.runWorktreeAdmin(ctx, "remove", "--force", e.Path); err != nil {
			return fail(err)
		}
	}
	cp, err := r.ReadCheckpoint(ctx, opts.Checkpoint)
	if err != nil {
		return fail(err)
	}
	if cp.Head == "" {
		return fail(ErrNoCommit)
	}
	// --no-checkout: the admin part is quick and runs one at a time per
	// repository (runWorktreeAdmin); the checkout, which writes every file,
	// runs after it (fillWorktree), beside other worktrees' checkouts.
	args := []string{"worktree", "add", "--quiet", "--no-checkout"}
	switch {
	case opts.NewBranch != "":
		if err := r.checkNewBranch(ctx, opts.NewBranch); err != nil {
			return fail(err)
		}
		args = append(args, "-b", opts.NewBranch, opts.Path, cp.Head)
	case opts.Branch != "":
		if _, err := r.run(ctx, nil, "rev-parse", "--verify", "--quiet", "refs/heads/"+opts.Branch); err != nil {
			return fail(fmt.Errorf("%w: no branch %q", ErrInvalidBranch, opts.Branch))
		}
		args = append(args, opts.Path, opts.Branch)
	default:
		args = append(args, "--detach", opts.Path, cp.Head)
	}
	if err := os.MkdirAll(filepath.Dir(opts.Path), 0o755); err != nil {
		return fail(err)
	}
	if _, err := r.runWorktreeAdmin(ctx, args[1:]...); err != nil {
		// git removes what it started on failure; make sure.
		r.removeFailed(opts)
		return fail(err)
	}
	release, err := r.git.checkoutSlot(ctx, r.CommonDir)
	if err != nil {
		r.removeFailed(opts)
		return fail(err)
	}
	wt, err := r.fillWorktree(ctx, cp, opts)
	release()
	if err != nil {
		r.removeFailed(opts)
		return fail(err)
	}
	return wt, nil
}

// fillWorktree writes the checkpoint's files over the new checkout and
// copies the included ignored files.
func (r *Repo) fillWorktree(ctx context.Context, cp Checkpoint, opts WorktreeOptions) (Worktree, error) {
	child, err := r.git.Open(ctx, opts.Path)
	if err != nil {
		return Worktree{}, err
	}
	// What git worktree add does after the admin part, without --no-checkout.
	if _, err := child.run(ctx, nil, "reset", "--hard", "--quiet", "--no-recurse-submodules"); err != nil {
		return Worktree{}, fmt.Errorf("check out the worktree: %w", err)
	}
	head, err := child.Head(ctx)
	if err != nil {
		return Worktree{}, err
	}
	if err := child.writeFiles(ctx, head, cp.Tree); err != nil {
		return Worktree{}, err
	}
	branch, err := child.Branch(ctx)
	if err != nil {
		return Worktree{}, err
	}
	wt := Worktree{Path: child.Root, Head: head, Branch: branch}
	if opts.CopyIncluded {
		if wt.Included, err = r.copyIncluded(ctx, child.Root); err != nil {
			return Worktree{}, err
		}
	}
	wt.Dir = filepath.Join(child.Root, filepath.FromSlash(r.Prefix))
	if err := os.MkdirAll(wt.Dir, 0o755); err != nil {
		return Worktree{}, err
	}
	return wt, nil
}

// writeFiles turns r's working files from those of tree-ish from into those
// of tree, leaving the index alone: deletions first (a file may give way to
// a directory), then the added and modified files through a temporary
// index holding tree. It overwrites in place: only for a checkout that
// nobody has yet (a new worktree); an apply swaps files (applyswap.go).
func (r *Repo) writeFiles(ctx context.Context, from, tree string) error {
	paths, err := r.changedPaths(ctx, from, tree)
	if err != nil {
		return err
	}
	var write []string
	root, err := os.OpenRoot(r.Root)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, p := range paths {
		if p.Old {
			if err := root.Remove(filepath.FromSlash(p.Path)); err != nil && !os.IsNotExist(err) {
				return fmt.Errorf("remove %s: %w", p.Path, err)
			}
			removeEmptyParents(root, p.Path)
		}
	}
	for _, p := range paths {
		if p.New {
			write = append(write, p.Path)
		}
	}
	if len(write) == 0 {
		return nil
	}
	if err := r.checkoutTo(ctx, tree, write, ""); err != nil {
		return fmt.Errorf("write checkpoint files: %w", err)
	}
	return nil
}

// changedPaths lists the paths whose files differ between tree-ishes from
// and tree: Old when from has a file there, New when tree has one. A
// submodule's commit is neither: it is not this repository's to check
// out, nor to remove.
func (r *Repo) changedPaths(ctx context.Context, from, tree string) ([]PathWrite, error) {
	out, err := r.run(ctx, nil, "diff-tree", "-r", "--no-renames", "-z", "--raw", from, tree, "--")
	if err != nil {
		return nil, fmt.Errorf("list checkpoint changes: %w", err)
	}
	var paths []PathWrite
	recs := splitZ(out)
	for i := 0; i+1 < len(recs); i += 2 {
		// ":100644 100644 <old> <new> M", then the path.
		fields := strings.Fields(recs[i])
		if len(fields) < 5 {
			return nil, fmt.Errorf("%w: unexpected diff-tree record %q", ErrGit, recs[i])
		}
		oldMode, newMode, status := strings.TrimPrefix(fields[0], ":"), fields[1], fields[4]
		p := PathWrite{Path: recs[i+1],
			Old: status != "A" && oldMode != "160000",
			New: status != "D" && newMode != "160000"}
		if p.Old || p.New {
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// checkoutTo writes the files of tree at paths with git checkout-index
// (the repository's filters, modes and symlinks, as a checkout writes
// them) through a temporary index holding tree: under r's top level, or
// under prefix (a directory, ending in a separator) when set.
func (r *Repo) checkoutTo(ctx context.Context, tree string, paths []string, prefix string) error {
	tmp, err := os.MkdirTemp("", "tuttid-index-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
	if _, err := r.run(ctx, env, "read-tree", tree); err != nil {
		return fmt.Errorf("read tree: %w", err)
	}
	args := []string{"checkout-index", "--force", "-z", "--stdin"}
	if prefix != "" {
		args = append(args, "--prefix="+prefix)
	}
	in := strings.Join(paths, "\x00") + "\x00"
	if _, err := r.git.run(ctx, call{dir: r.Root, env: env, stdin: strings.NewReader(in)}, args...); err != nil {
		return err
	}
	return nil
}

// removeEmptyParents removes the directories of path left empty, as git
// does (it records no directories).
func removeEmptyParents(root *os.Root, path string) {
	for dir := filepath.Dir(filepath.FromSlash(path)); dir != "." && dir != string(filepath.Separator); dir = filepath.Dir(dir) {
		if root.Remove(dir) != nil {
			return
		}
	}
}

// removeFailed undoes a CreateWorktree that failed after git made the
// worktree: the worktree, and the branch it created if that still points
// where it was made. It runs on its own context: the caller's may be done.
func (r *Repo) removeFailed(opts WorktreeOptions) {
	ctx := context.Background()
	if _, err := os.Lstat(opts.Path); err == nil || r.isWorktree(ctx, opts.Path) {
		_, _ = r.runWorktreeAdmin(ctx, "remove", "--force", opts.Path)
	}
	if opts.NewBranch != "" {
		cp, err := r.ReadCheckpoint(ctx, opts.Checkpoint)
		if err == nil && cp.Head != "" {
			_, _ = r.run(ctx, nil, "update-ref", "-d", "refs/heads/"+opts.NewBranch, cp.Head)
		}
	}
}

// checkNewBranch accepts a branch name git accepts that is not taken.
func (r *Repo) checkNewBranch(ctx context.Context, name string) error {
	if strings.HasPrefix(name, "-") || name == "HEAD" || strings.HasPrefix(name, "refs/") {
		return fmt.Errorf("%w: %q", ErrInvalidBranch, name)
	}
	out, err := r.run(ctx, nil, "check-ref-format", "--branch", name)
	if err != nil || strings.TrimSpace(string(out)) != name {
		// --branch expands @{-1} and the like: the name must be itself.
		return fmt.Errorf("%w: %q", ErrInvalidBranch, name)
	}
	if _, err := r.run(ctx, nil, "rev-parse", "--verify", "--quiet", "refs/heads/"+name); err == nil {
		return fmt.Errorf("%w: %q", ErrBranchExists, name)
	}
	return nil
}

// WorktreeInfo is one working tree of a repository, as git worktree
// list says.
type WorktreeInfo struct {
	Path string
	// Main: the repository's main working tree.
	Main bool
	// Head is the commit checked out; Branch without refs/heads/, "" when
	// detached.
	Head   string
	Branch string
	Locked bool
	// Prunable: git knows it but its directory is gone.
	Prunable bool
}

// Worktrees lists every working tree of r's repository: orphan checks
// compare it with the worktrees tuttid recorded.
func (r *Repo) Worktrees(ctx context.Context) ([]WorktreeInfo, error) {
	out, err := r.runWorktreeAdmin(ctx, "list", "--porcelain", "-z")
	if err != nil {
		return nil, fmt.Errorf("list worktrees: %w", err)
	}
	var list []WorktreeInfo
	for _, rec := range splitZ(out) {
		if p, ok := strings.CutPrefix(rec, "worktree "); ok {
			list = append(list, WorktreeInfo{Path: p, Main: len(list) == 0})
			continue
		}
		if len(list) == 0 {
			continue
		}
		w := &list[len(list)-1]
		switch {
		case strings.HasPrefix(rec, "HEAD "):
			w.Head = strings.TrimPrefix(rec, "HEAD ")
		case strings.HasPrefix(rec, "branch "):
			w.Branch = strings.TrimPrefix(strings.TrimPrefix(rec, "branch "), "refs/heads/")
		case rec == "locked" || strings.HasPrefix(rec, "locked "):
			w.Locked = true
		case rec == "prunable" || strings.HasPrefix(rec, "prunable "):
			w.Prunable = true
		}
	}
	return list, nil
}

// isWorktree reports whether path is a linked worktree (not the main one)
// of r's repository.
func (r *Repo) isWorktree(ctx context.Context, path string) bool {
	e, err := r.findWorktree(ctx, path)
	return err == nil && !e.Main
}

func (r *Repo) findWorktree(ctx context.Context, path string) (WorktreeInfo, error) {
	list, err := r.Worktrees(ctx)
	if err != nil {
		return WorktreeInfo{}, err
	}
	clean := filepath.Clean(path)
	for _, e := range list {
		if filepath.Clean(e.Path) == clean || sameFile(e.Path, clean) {
			return e, nil
		}
	}
	return WorktreeInfo{}, fmt.Errorf("%w: %s", ErrNotAWorktree, path)
}

// RemoveOptions guard RemoveWorktree.
type RemoveOptions struct {
	// UnchangedFrom, when set, is a tree-ish the worktree's files must
	// match (its base, or what the last apply brought back): otherwise
	// nothing is removed and the error is a *ChangesError.
	UnchangedFrom string
}

// RemoveWorktree removes the linked worktree at path, one of r's
// repository's (never the main working tree), with its files, including
// ignored ones. A worktree whose directory was deleted by hand has its
// administrative files removed. Its branch, if any, is kept.
func (r *Repo) RemoveWorktree(ctx context.Context, path string, opts RemoveOptions) error {
	e, err := r.findWorktree(ctx, path)
	if err != nil {
		return fmt.Errorf("remove worktree: %w", err)
	}
	if e.Main {
		return fmt.Errorf("remove worktree %s: %w: it is the main working tree", path, ErrNotAWorktree)
	}
	if _, statErr := os.Stat(e.Path); statErr == nil && opts.UnchangedFrom != "" {
		wt, err := r.git.Open(ctx, e.Path)
		if err != nil {
			return fmt.Errorf("remove worktree %s: %w", path, err)
		}
		d, err := wt.Changes(ctx, opts.UnchangedFrom)
		if err != nil {
			return fmt.Errorf("remove worktree %s: %w", path, err)
		}
		if len(d.Files) > 0 {
			paths := make([]string, len(d.Files))
			for i, f := range d.Files {
				paths[i] = f.Path
			}
			return fmt.Errorf("remove worktree %s: %w", path, &ChangesError{Paths: paths})
		}
	}
	// --force: the files' state was checked above (or the caller chose to
	// discard it); a worktree locked by its user is still refused.
	if _, err := r.runWorktreeAdmin(ctx, "remove", "--force", e.Path); err != nil {
		return fmt.Errorf("remove worktree %s: %w", path, err)
	}
	return nil
}

// checkoutSlot waits for one of the repository's checkout slots
// (Config.Checkouts) and answers its release, or ctx's error. More
// checkouts at once than cores finish no sooner together, and each one
// later: an exploration's branches all reached Codex at the end, where
// their forks of one parent are answered one at a time. Bounded, the first
// branches' forks and turns run while the next ones' files are written
// (BenchmarkExploreFour, docs/performance.md).
func (g *Git) checkoutSlot(ctx context.Context, commonDir string) (release func(), err error) {
	v, _ := g.checkouts.LoadOrStore(commonDir, make(chan struct{}, g.checkoutSlots))
	slots := v.(chan struct{})
	select {
	case slots <- struct{}{}:
		return func() { <-slots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// runWorktreeAdmin runs `git worktree <args>` alone among this process's
// worktree commands on the repository: two `git worktree add`s at once
// read each other's half-made admin directories and fail ("failed to read
// .git/worktrees/<id>/commondir"), as an exploration's four forks did.
func (r *Repo) runWorktreeAdmin(ctx context.Context, args ...string) ([]byte, error) {
	defer r.git.worktreeLock(r.CommonDir)()
	return r.run(ctx, nil, append([]string{"worktree"}, args...)...)
}
