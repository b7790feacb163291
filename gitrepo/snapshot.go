package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
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

// SnapshotOptions tune Snapshot.
type SnapshotOptions struct {
	// Index, when set, is a file (of the caller's, outside the repository:
	// one per session) where the index built for the snapshot is kept for
	// the next one, with a list of the files in it that the user's index
	// does not track (Index + ".untracked"). Its stat data stay fresh
	// between turns, so a file changed once is hashed once, however stale
	// the user's index gets. It is seeded again from the user's index
	// whenever that one was written later (the user staged, committed or
	// ran git status). The tree it holds is recorded beside it (Index +
	// ".tree"), so a snapshot that finds no file changed since runs no
	// write-tree; so is the state of the ignore files outside the tree
	// (".excludes"), so that git is asked which kept untracked files are
	// ignored now only when an ignore file changed, and the user's index
	// it was built from (".user"). The kept index is brought up to date
	// after the snapshot answers (refreshKept); the next snapshot does not
	// wait for that (it reads the kept index in place then). The caller
	// must not run two snapshots with one Index at once, and removes the
	// files with Git.RemoveIndex.
	Index string
}

// Snapshot records the working files of r as a tree in the repository's
// object store (nothing references it: git gc may prune it after its
// grace period). The user's index is read, never written: the tree is
// built from it (or from opts.Index) and the files whose stat data
// differ from it, which alone are hashed again.
func (r *Repo) Snapshot(ctx context.Context, opts SnapshotOptions) (Snapshot, error) {
	fail := func(err error) (Snapshot, error) { return Snapshot{}, fmt.Errorf("snapshot %s: %w", r.Root, err) }
	ix, err := r.prepareIndex(ctx, opts.Index)
	if err != nil {
		return fail(err)
	}
	handedOver := false
	defer func() {
		if !handedOver {
			ix.cleanup()
		}
	}()
	// One walk (git status: it stats in parallel, and is the floor the
	// contract measures against) lists the files whose working copy
	// differs from the index read, the untracked files and HEAD. It writes
	// nothing (no optional locks): the index it reads may be the user's,
	// and a kept one is brought up to date after the snapshot answers
	// (refreshKept).
	args := statusArgs(ix.kept != "")
	out, err := r.run(ctx, []string{"GIT_INDEX_FILE=" + ix.path}, args...)
	if err != nil {
		return fail(fmt.Errorf("list changes: %w", err))
	}
	head, changes, err := parseStatus(out)
	if err != nil {
		return fail(err)
	}
	if ix.kept != "" {
		if changes, err = r.expandUntracked(ctx, ix.path, changes); err != nil {
			return fail(err)
		}
	}
	var update, remove, skipped []string
	// untracked: files the index holds that the user's index does not
	// (from earlier snapshots with a kept index), and those added now.
	untracked := map[string]bool{}
	drop := map[string]bool{}
	excludes := r.excludesStamp()
	if len(ix.untracked) > 0 {
		// Whether one of them is ignored now can change only with an
		// ignore file: git is asked only then.
		recheck := ix.excludes != excludes || slices.ContainsFunc(changes, func(c statusEntry) bool {
			return c.path == ".gitignore" || strings.HasSuffix(c.path, "/.gitignore")
		})
		drop, skipped, err = r.noLongerSnapshotted(ctx, ix.untracked, recheck)
		if err != nil {
			return fail(err)
		}
		for _, p := range ix.untracked {
			if !drop[p] {
				untracked[p] = true
			}
		}
	}
	seen := map[string]bool{}
	for _, c := range changes {
		tag, path := c.tag, c.path
		if seen[path] || drop[path] {
			continue
		}
		seen[path] = true
		fi, statErr := os.Lstat(filepath.Join(r.Root, filepath.FromSlash(path)))
		if tag == "?" {
			// A directory entry is a nested repository: its files are not
			// this repository's, and a gitlink to a commit nothing here
			// keeps alive would restore nothing.
			if strings.HasSuffix(path, "/") {
				continue
			}
			if statErr == nil && fi.Mode().IsRegular() && fi.Size() > MaxUntrackedSize {
				skipped = append(skipped, path)
				continue
			}
			untracked[path] = true
		} else if statErr == nil && fi.IsDir() {
			// A tracked file replaced by a directory: update-index refuses
			// to "add" a directory; the files in it come as untracked.
			remove = append(remove, path)
			delete(untracked, path)
			continue
		} else if statErr != nil {
			delete(untracked, path)
		}
		update = append(update, path)
	}
	for p := range drop {
		remove = append(remove, p)
	}
	changed := len(update) > 0 || len(remove) > 0
	answer := Snapshot{Head: head, Skipped: sorted(skipped)}
	if !changed && ix.tree != "" {
		// Nothing differs from the kept index read (ix.tree is known only
		// for one), whose tree is known: a turn that changed no file costs
		// one walk, and the kept index stays.
		answer.Tree = ix.tree
		if ix.excludes != excludes {
			if err := ix.keepExcludes(excludes); err != nil {
				return fail(err)
			}
		}
		return answer, nil
	}
	tree, direct, err := r.directTree(ctx, ix.path, update, remove)
	if err == nil {
		answer.Tree = tree
		if ix.kept != "" {
			r.refreshKept(ctx, ix, update, remove, direct, untracked, tree, excludes)
			handedOver = true
		}
		return answer, nil
	}
	if ctx.Err() != nil {
		return fail(err)
	}
	// Through git: anything the in-process path does not handle as git
	// would, or a failure of it, which git then reports better.
	built, err := ix.writable()
	if err != nil {
		return fail(fmt.Errorf("copy index: %w", err))
	}
	defer os.Remove(built) // gone already once kept
	env := []string{"GIT_INDEX_FILE=" + built}
	began := time.Now()
	if err := r.updateIndex(ctx, env, update, remove); err != nil {
		return fail(err)
	}
	out, err = r.run(ctx, env, "write-tree")
	if err != nil {
		return fail(fmt.Errorf("write tree: %w", err))
	}
	answer.Tree = strings.TrimSpace(string(out))
	if ix.kept != "" {
		if err := backdate(built, began); err != nil {
			return fail(err)
		}
		if err := ix.keep(built, untracked, answer.Tree, excludes); err != nil {
			return fail(err)
		}
	}
	return answer, nil
}

func sorted(s []string) []string {
	sort.Strings(s)
	return s
}

// updateIndex removes the paths remove names from the index env names and
// adds, replaces or removes those update names as their files are.
func (r *Repo) updateIndex(ctx context.Context, env []string, update, remove []string) error {
	for _, batch := range []struct {
		paths []string
		flags []string
	}{
		{remove, []string{"--force-remove"}},
		{update, []string{"--add", "--remove", "--replace"}},
	} {
		if len(batch.paths) == 0 {
			continue
		}
		in := strings.Join(batch.paths, "\x00") + "\x00"
		args := append(append([]string{"update-index"}, batch.flags...), "-z", "--stdin")
		if _, err := r.git.run(ctx, call{dir: r.Root, env: env, stdin: strings.NewReader(in)}, args...); err != nil {
			return fmt.Errorf("update index: %w", err)
		}
	}
	return nil
}

// statusArgs are the arguments of a snapshot's git status.
func statusArgs(kept bool) []string {
	args := []string{"status", "--porcelain=v2", "-z",
		"--branch", "--untracked-files=all", "--no-renames", "--ignore-submodules=dirty"}
	if kept {
		// A kept index also keeps git's untracked cache (the mtime of each
		// directory and what it held), filled by the refresh's own status:
		// the next walk reads only the directories that changed since
		// (10 ms instead of 13 at 10,000 files). Git before 2.44 keeps no
		// cache for --untracked-files=all, so the walk lists new
		// directories whole ("dir/") and expandUntracked lists their
		// files.
		args = append([]string{"-c", "core.untrackedCache=true"}, args...)
		args[slices.Index(args, "--untracked-files=all")] = "--untracked-files=normal"
	}
	return args
}

// expandUntracked replaces each untracked directory status listed whole
// ("dir/", --untracked-files=normal) by its untracked files, as
// --untracked-files=all lists them: a nested repository stays "dir/" (left
// out by the caller), ignored files stay out.
func (r *Repo) expandUntracked(ctx context.Context, indexPath string, changes []statusEntry) ([]statusEntry, error) {
	var dirs []string
	out := changes[:0:0]
	for _, c := range changes {
		full := filepath.Join(r.Root, filepath.FromSlash(c.path))
		if c.tag == "?" && strings.HasSuffix(c.path, "/") {
			if _, err := os.Lstat(filepath.Join(full, ".git")); err != nil {
				dirs = append(dirs, c.path)
				continue
			}
		}
		// A file of the index replaced by a directory: git lists neither
		// the directory nor its files under --untracked-files=normal.
		if c.tag == "C" {
			if fi, err := os.Lstat(full); err == nil && fi.IsDir() {
				if _, err := os.Lstat(filepath.Join(full, ".git")); err != nil {
					dirs = append(dirs, c.path+"/")
				}
			}
		}
		out = append(out, c)
	}
	if len(dirs) == 0 {
		return changes, nil
	}
	// git 2.38's ls-files reads no pathspec from stdin: arguments, in
	// batches, each literal (no glob in a directory's name). A directory
	// listed whole holds no tracked file, so an empty index (a missing
	// file) lists exactly its untracked ones, even where the index still
	// has a file of the directory's name.
	noIndex := []string{"GIT_INDEX_FILE=" + indexPath + ".none"}
	for start := 0; start < len(dirs); start += 500 {
		args := []string{"ls-files", "-z", "--others", "--exclude-standard", "--full-name", "--"}
		for _, d := range dirs[start:min(start+500, len(dirs))] {
			args = append(args, ":(literal)"+d)
		}
		files, err := r.git.run(ctx, call{dir: r.Root, env: noIndex}, args...)
		if err != nil {
			return nil, fmt.Errorf("list untracked files: %w", err)
		}
		for _, p := range splitZ(files) {
			out = append(out, statusEntry{"?", p})
		}
	}
	return out, nil
}

// noLongerSnapshotted picks, among files a kept index holds that the user
// does not track, those a fresh snapshot would leave out: ignored now, or
// grown over MaxUntrackedSize (skipped).
func (r *Repo) noLongerSnapshotted(ctx context.Context, paths []string, recheckIgnored bool) (map[string]bool, []string, error) {
	drop := map[string]bool{}
	var skipped []string
	for _, p := range paths {
		fi, err := os.Lstat(filepath.Join(r.Root, filepath.FromSlash(p)))
		if err == nil && fi.Mode().IsRegular() && fi.Size() > MaxUntrackedSize {
			drop[p] = true
			skipped = append(skipped, p)
		}
	}
	if !recheckIgnored {
		return drop, skipped, nil
	}
	in := strings.Join(paths, "\x00") + "\x00"
	out, err := r.git.run(ctx, call{dir: r.Root, stdin: strings.NewReader(in)}, "check-ignore", "-z", "--stdin", "--no-index")
	if err != nil && exitCode(err) != 1 { // 1: none ignored
		return nil, nil, fmt.Errorf("check ignored: %w", err)
	}
	for _, p := range splitZ(out) {
		drop[p] = true
	}
	return drop, skipped, nil
}

// workIndex is the index a snapshot reads, and what it needs to build in
// and keep one.
type workIndex struct {
	// path is the index the snapshot reads: the kept index or the user's,
	// pinned (prepareIndex), or one made of HEAD's tree; owned: it is the
	// snapshot's own name, removed with it.
	path  string
	owned bool
	kept  string // the kept index to replace, or ""
	// untracked lists the files the kept index holds that the user's index
	// does not.
	untracked []string
	// tree is the tree of the kept index, when known (Index + ".tree"
	// names it for that very file: same size and mtime).
	tree string
	// excludes is the excludesStamp recorded with the kept index.
	excludes string
	// userStamp is the user's index's indexStamp when the snapshot began
	// ("-": none), recorded with the kept index built from it.
	userStamp string
	// keepMu is Git.keepMu: keep holds it.
	keepMu *sync.Mutex
}

// cleanup removes the snapshot's own temporary index.
func (ix workIndex) cleanup() {
	if ix.owned {
		os.Remove(ix.path)
	}
}

// writable returns an index to build in: the snapshot's own temporary one
// (git writes an index by renaming a new file over it, so a pinned link
// leaves the file it shares untouched), or a copy of the one it read. The
// caller removes it unless it keeps it.
func (ix workIndex) writable() (string, error) {
	if ix.owned {
		return ix.path, nil
	}
	name, err := ix.tempName()
	if err != nil {
		return "", err
	}
	if _, err := copyIndex(ix.path, name); err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

// tempName names a new file beside the kept index (which it may be
// renamed over), or in the temporary directory.
func (ix workIndex) tempName() (string, error) {
	dir, base := os.TempDir(), "tuttid-index"
	if ix.kept != "" {
		dir, base = filepath.Dir(ix.kept), filepath.Base(ix.kept)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", err
		}
	}
	return filepath.Join(dir, base+"."+strconv.FormatUint(rand.Uint64(), 36)+".tmp"), nil
}

// prepareIndex picks the index to read: the kept index when it is at
// least as new as the user's, else the user's index, else one of HEAD's
// tree, else an empty one.
func (r *Repo) prepareIndex(ctx context.Context, kept string) (workIndex, error) {
	userIndex := filepath.Join(r.GitDir, "index")
	ix := workIndex{path: userIndex, kept: kept, userStamp: "-", keepMu: &r.git.keepMu}
	// A refresh may be keeping a newer kept index meanwhile: its files are
	// read, and the index pinned, as one.
	r.git.keepMu.Lock()
	locked := true
	defer func() {
		if locked {
			r.git.keepMu.Unlock()
		}
	}()
	u, uerr := os.Stat(userIndex)
	if uerr == nil {
		ix.userStamp = indexStamp(u)
	}
	if kept != "" {
		if k, err := os.Stat(kept); err == nil {
			// The user's index as the kept one last saw it: the kept
			// index is written after its snapshot answered, so its own
			// time says nothing of which is newer.
			fresh := uerr != nil || !u.ModTime().After(k.ModTime())
			if b, err := os.ReadFile(kept + ".user"); err == nil {
				fresh = strings.TrimSpace(string(b)) == ix.userStamp
			}
			if fresh {
				ix.path = kept
				b, err := os.ReadFile(kept + ".untracked")
				if err != nil && !os.IsNotExist(err) {
					return ix, err
				}
				ix.untracked = splitZ(b)
				ix.tree = keptTree(kept, k)
				if b, err := os.ReadFile(kept + ".excludes"); err == nil {
					ix.excludes = string(b)
				}
			}
		}
	}
	// The snapshot reads the index more than once (git status, then
	// directTree): it pins the version it began with, which a user's git
	// command or the previous snapshot's refresh may replace meanwhile
	// (both rename a new file over it). A hard link costs no copy.
	pin, err := ix.tempName()
	if err != nil {
		return ix, fmt.Errorf("pin index: %w", err)
	}
	src := ix.path
	ix.path, ix.owned = pin, true
	present := true
	if err := os.Link(src, ix.path); errors.Is(err, fs.ErrNotExist) {
		present = false
	} else if err != nil {
		// Another file system: a copy, with its time (git trusts an
		// entry's stat data only if it is older than the index file).
		if present, err = copyIndex(src, ix.path); err != nil {
			ix.cleanup()
			return ix, fmt.Errorf("pin index: %w", err)
		}
	}
	r.git.keepMu.Unlock()
	locked = false
	if present {
		return ix, nil
	}
	// No index: one of HEAD's tree, or none (git reads a missing index as
	// empty, not an empty file).
	head, err := r.Head(ctx)
	if err == nil && head != "" {
		_, err = r.run(ctx, []string{"GIT_INDEX_FILE=" + ix.path}, "read-tree", head)
	}
	if err != nil {
		ix.cleanup()
		return ix, fmt.Errorf("seed index: %w", err)
	}
	return ix, nil
}

// keptTree reads the tree recorded for the kept index k (its stat data):
// "" unless the record names this very file.
func keptTree(kept string, k os.FileInfo) string {
	b, err := os.ReadFile(kept + ".tree")
	if err != nil {
		return ""
	}
	tree, stamp, ok := strings.Cut(strings.TrimSpace(string(b)), " ")
	if !ok || stamp != indexStamp(k) {
		return ""
	}
	return tree
}

// indexStamp identifies one version of an index file.
func indexStamp(fi os.FileInfo) string {
	return fmt.Sprintf("%d.%d", fi.Size(), fi.ModTime().UnixNano())
}

// keepExcludes records a new state of the ignore files for the kept index.
func (ix workIndex) keepExcludes(excludes string) error {
	ix.keepMu.Lock()
	defer ix.keepMu.Unlock()
	if err := os.WriteFile(ix.kept+".excludes", []byte(excludes), 0o600); err != nil {
		return fmt.Errorf("keep index: %w", err)
	}
	return nil
}

// keep moves built, an index built from ix, into place as the kept index
// with its list of untracked files and its tree.
func (ix workIndex) keep(built string, untracked map[string]bool, tree, excludes string) error {
	if ix.kept == "" {
		return nil
	}
	ix.keepMu.Lock()
	defer ix.keepMu.Unlock()
	// Recorded before the index moves: an index newer than its record is
	// only checked again.
	if err := os.WriteFile(ix.kept+".excludes", []byte(excludes), 0o600); err != nil {
		return fmt.Errorf("keep index: %w", err)
	}
	// A stale record only seeds the next snapshot again from the user's
	// index.
	if err := os.WriteFile(ix.kept+".user", []byte(ix.userStamp+"\n"), 0o600); err != nil {
		return fmt.Errorf("keep index: %w", err)
	}
	// The record of the tree goes first: a stale one names another stamp.
	os.Remove(ix.kept + ".tree")
	paths := make([]string, 0, len(untracked))
	for p := range untracked {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	list := ""
	if len(paths) > 0 {
		list = strings.Join(paths, "\x00") + "\x00"
	}
	if err := os.WriteFile(ix.kept+".untracked.tmp", []byte(list), 0o600); err != nil {
		return fmt.Errorf("keep index: %w", err)
	}
	// The list first: an index newer than its list would be trusted with
	// a stale one, an older index is only passed over.
	if err := os.Rename(ix.kept+".untracked.tmp", ix.kept+".untracked"); err != nil {
		return fmt.Errorf("keep index: %w", err)
	}
	if err := os.Rename(built, ix.kept); err != nil {
		return fmt.Errorf("keep index: %w", err)
	}
	// Without the record the next snapshot only runs write-tree again.
	if fi, err := os.Stat(ix.kept); err == nil {
		_ = os.WriteFile(ix.kept+".tree", []byte(tree+" "+indexStamp(fi)+"\n"), 0o600)
	}
	return nil
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
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return false, err
	}
	if err := copyInto(out, in); err != nil {
		return false, err
	}
	return true, os.Chtimes(dst, fi.ModTime(), fi.ModTime())
}

// statusEntry is a path git status reports: tag "?" for untracked, "C"
// for a working file that differs from the index (or is unmerged).
type statusEntry struct {
	tag, path string
}

// parseStatus reads git status --porcelain=v2 -z --branch: HEAD ("" when
// unborn) and the entries whose working file differs from the index.
func parseStatus(out []byte) (string, []statusEntry, error) {
	var head string
	var entries []statusEntry
	for _, rec := range splitZ(out) {
		if rec == "" {
			continue
		}
		switch rec[0] {
		case '#':
			if oid, ok := strings.CutPrefix(rec, "# branch.oid "); ok && oid != "(initial)" {
				head = oid
			}
		case '?':
			entries = append(entries, statusEntry{"?", strings.TrimPrefix(rec, "? ")})
		case '1':
			// 1 XY sub mH mI mW hH hI path
			f := strings.SplitN(rec, " ", 9)
			if len(f) != 9 || len(f[1]) != 2 {
				return "", nil, fmt.Errorf("%w: unexpected status record %q", ErrGit, rec)
			}
			if f[1][1] != '.' {
				entries = append(entries, statusEntry{"C", f[8]})
			}
		case 'u':
			// u XY sub m1 m2 m3 mW h1 h2 h3 path
			f := strings.SplitN(rec, " ", 11)
			if len(f) != 11 {
				return "", nil, fmt.Errorf("%w: unexpected status record %q", ErrGit, rec)
			}
			entries = append(entries, statusEntry{"C", f[10]})
		default:
			return "", nil, fmt.Errorf("%w: unexpected status record %q", ErrGit, rec)
		}
	}
	return head, entries, nil
}
