package gitrepo

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
	"tuttid/gitfile"
)

// A snapshot's tree is built in process when it can be (directTree): git
// update-index and git write-tree each read and rewrite the whole index (an
// 800 KB file at 10,000 files) and cost a process, together about as much
// as the git status walk itself. A kept index is still brought up to date
// by git (those two calls and a status), after the snapshot has answered
// (refreshKept), so that its stat data stay fresh for the next one.

// directTree returns the tree of the index at indexPath (as git status
// left it) with the files update names hashed again and the paths remove
// names dropped, as update-index and write-tree would make it, and the
// entries it changed. A file's blob is its bytes when no end-of-line
// setting or attributes file can convert it (direct.plainBlobs, and no
// .gitattributes in the index or among the changes) and it is small;
// otherwise git hash-object makes it, applying the repository's filters
// as update-index does. Anything it does not handle exactly as git would
// is gitfile.ErrIndexUnsupported.
func (r *Repo) directTree(ctx context.Context, indexPath string, update, remove []string) (string, map[string]*gitfile.IndexEntry, error) {
	if !r.direct.objects || r.treeMismatch.Load() {
		return "", nil, fmt.Errorf("%w: direct writes off", gitfile.ErrIndexUnsupported)
	}
	ix, err := gitfile.ReadIndex(indexPath)
	if errors.Is(err, fs.ErrNotExist) {
		ix, err = &gitfile.Index{}, nil // git reads a missing index as empty
	}
	if err != nil {
		return "", nil, err
	}
	w := gitfile.NewObjectWriter(r.CommonDir)
	tree, changes, err := r.directChanges(ctx, w, ix, update, remove)
	if werr := w.Wait(); err == nil {
		err = werr
	}
	if err != nil {
		return "", nil, err
	}
	return tree, changes, nil
}

// maxPlainBlob: a larger file is hashed by git, which streams it.
const maxPlainBlob = 1 << 20

func (r *Repo) directChanges(ctx context.Context, w *gitfile.ObjectWriter, ix *gitfile.Index, update, remove []string) (string, map[string]*gitfile.IndexEntry, error) {
	unsupported := func(format string, a ...any) (string, map[string]*gitfile.IndexEntry, error) {
		return "", nil, fmt.Errorf("%w: "+format, append([]any{gitfile.ErrIndexUnsupported}, a...)...)
	}
	plain := r.direct.plainBlobs && !slices.ContainsFunc(ix.Entries, func(e gitfile.IndexEntry) bool { return isAttributes(e.Path) }) &&
		!slices.ContainsFunc(update, isAttributes)
	changes := make(map[string]*gitfile.IndexEntry, len(update)+len(remove))
	for _, p := range remove {
		changes[p] = nil
	}
	var hashed []*gitfile.IndexEntry
	for _, p := range update {
		old, had := ix.Lookup(p)
		if had && old.Mode == 0o160000 {
			return unsupported("submodule %s", p)
		}
		full := filepath.Join(r.Root, filepath.FromSlash(p))
		fi, err := os.Lstat(full)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			changes[p] = nil
		case err != nil:
			return unsupported("%w", err)
		case fi.Mode().IsRegular():
			e := &gitfile.IndexEntry{Path: p, Mode: 0o100644}
			if fi.Mode()&0o100 != 0 {
				e.Mode = 0o100755
			}
			if !r.direct.fileMode && had && old.Mode&^0o777 == 0o100000 {
				e.Mode = old.Mode // git keeps the index's mode
			}
			changes[p] = e
			if !plain || fi.Size() > maxPlainBlob {
				hashed = append(hashed, e)
				continue
			}
			content, err := readRegular(full)
			if err != nil {
				return unsupported("%w", err)
			}
			e.OID = w.Put("blob", content)
		case fi.Mode()&fs.ModeSymlink != 0 && r.direct.symlinks:
			target, err := os.Readlink(full)
			if err != nil {
				return unsupported("%w", err)
			}
			changes[p] = &gitfile.IndexEntry{Path: p, Mode: 0o120000, OID: w.Put("blob", []byte(target))}
		default:
			return unsupported("%s is %v", p, fi.Mode().Type())
		}
	}
	if err := r.hashFiles(ctx, hashed); err != nil {
		return "", nil, err
	}
	tree, err := gitfile.BuildTree(w, ix, changes)
	return tree, changes, err
}

// isAttributes: p is a .gitattributes file.
func isAttributes(p string) bool {
	return p == ".gitattributes" || strings.HasSuffix(p, "/.gitattributes")
}

// readRegular reads a file that must still be a regular file (not a
// symlink put in its place since it was looked at).
func readRegular(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxPlainBlob {
		return nil, fmt.Errorf("%s changed while read", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxPlainBlob+1))
	if err == nil && len(b) > maxPlainBlob {
		err = fmt.Errorf("%s changed while read", path)
	}
	return b, err
}

// hashFiles writes the files of entries as blobs (one git hash-object) and
// sets their ids.
func (r *Repo) hashFiles(ctx context.Context, entries []*gitfile.IndexEntry) error {
	if len(entries) == 0 {
		return nil
	}
	var in strings.Builder
	for _, e := range entries {
		if strings.ContainsAny(e.Path, "\n\r") || strings.HasPrefix(e.Path, "\"") {
			// --stdin-paths reads lines (and would unquote a C-quoted one).
			return fmt.Errorf("%w: path %q", gitfile.ErrIndexUnsupported, e.Path)
		}
		in.WriteString(e.Path)
		in.WriteByte('\n')
	}
	out, err := r.git.run(ctx, call{dir: r.Root, stdin: strings.NewReader(in.String())}, "hash-object", "-w", "--stdin-paths")
	if err != nil {
		return fmt.Errorf("%w: hash files: %w", gitfile.ErrIndexUnsupported, err)
	}
	ids := strings.Fields(string(out))
	if len(ids) != len(entries) {
		return fmt.Errorf("%w: hash-object gave %d ids for %d files", gitfile.ErrIndexUnsupported, len(ids), len(entries))
	}
	for i, id := range ids {
		if n, err := hex.Decode(entries[i].OID[:], []byte(id)); err != nil || n != 20 {
			return fmt.Errorf("%w: hash-object id %q", gitfile.ErrIndexUnsupported, id)
		}
	}
	return nil
}

// backdate gives an index the time racyMargin before began, when git
// began sampling the stat data it holds. git trusts a file's (and, in the
// untracked cache, a directory's) recorded stat data only when it is older
// than the index file; a change in the same clock tick as the sample,
// after it, keeps the time and the size, and an index written a tick later
// would hide it (a checkpoint missing an edit: TestSnapshotWithKeptIndex
// failed about 2 runs in 90). Whatever changed from then on is read again.
func backdate(index string, began time.Time) error {
	at := began.Add(-racyMargin)
	if err := os.Chtimes(index, at, at); err != nil {
		return fmt.Errorf("backdate index: %w", err)
	}
	return nil
}

// racyMargin: more than a file system's clock tick.
const racyMargin = time.Second

// refreshTimeout bounds the background refresh of a kept index.
const refreshTimeout = 2 * time.Minute

// refreshKept brings the index a snapshot read (ix, pinned) up to date in
// the background, as the git path does in the foreground (update-index,
// then write-tree, then a status that saves the stat data and untracked
// cache), and moves it into place as the kept index. The next
// snapshot does not wait for it: until it is in place, that one reads the
// previous kept index, whose status lists this turn's files again (hashed
// again, their objects already there). Refreshes of one kept index are
// moved into place in the order they began. It takes ix over: the caller
// must not clean it up. A failure only leaves the previous kept index.
// When git recorded the same entries for the changed paths (no file
// changed again meanwhile) its tree must be the one built in process: a
// difference would be a bug of this package, so it turns the in-process
// path off for r and is logged.
func (r *Repo) refreshKept(ctx context.Context, ix workIndex, update, remove []string, changes map[string]*gitfile.IndexEntry,
	untracked map[string]bool, tree, excludes string) {
	after, done := r.git.startRefresh(ix.kept)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshTimeout)
	go func() {
		defer done()
		defer cancel()
		defer ix.cleanup()
		fail := func(err error) {
			r.git.log.WarnContext(ctx, "code: kept index not refreshed", "repository", r.Root, "err", err)
		}
		built, err := ix.writable()
		if err != nil {
			fail(err)
			return
		}
		// Gone already once kept; a lock git left when it died (a file
		// truncated under its mmap kills it with SIGBUS) goes too.
		defer os.Remove(built + ".lock")
		defer os.Remove(built)
		env := []string{"GIT_INDEX_FILE=" + built}
		if err := r.updateIndex(ctx, env, update, remove); err != nil {
			fail(err)
			return
		}
		out, err := r.run(ctx, env, "write-tree")
		if err != nil {
			fail(err)
			return
		}
		written := strings.TrimSpace(string(out))
		// A status that may write (optional locks: the index is tuttid's
		// own) saves its refreshed stat data and fills the untracked
		// cache, which the next snapshot's status reads.
		began := time.Now()
		if _, err := r.run(ctx, append(env, "GIT_OPTIONAL_LOCKS=1"), statusArgs(true)...); err != nil {
			fail(err)
		}
		if err := backdate(built, began); err != nil {
			fail(err)
			return
		}
		if written != tree && sameEntries(built, changes) {
			r.treeMismatch.Store(true)
			r.git.log.ErrorContext(ctx, "code: a tree built in process differs from git's; building through git from now on",
				"repository", r.Root, "built", tree, "git", written)
		}
		if err := after(ctx); err != nil {
			fail(err)
			return
		}
		if err := ix.keep(built, untracked, written, excludes); err != nil {
			fail(err)
		}
	}()
}

// sameEntries reports whether the index at path holds the changes as
// given: each changed path with the same mode and id, each removed one
// absent.
func sameEntries(path string, changes map[string]*gitfile.IndexEntry) bool {
	ix, err := gitfile.ReadIndex(path)
	if err != nil {
		return false
	}
	for p, want := range changes {
		got, ok := ix.Lookup(p)
		if ok != (want != nil) || ok && (got.Mode != want.Mode || got.OID != want.OID) {
			return false
		}
	}
	return true
}

// startRefresh records a refresh of the kept index at path as running.
// after waits for the refreshes of path that began before it; done ends
// it.
func (g *Git) startRefresh(path string) (after func(context.Context) error, done func()) {
	ch := make(chan struct{})
	g.mu.Lock()
	prev := g.refreshing[path]
	g.refreshing[path] = ch
	g.mu.Unlock()
	after = func(ctx context.Context) error { return waitClosed(ctx, prev) }
	done = func() {
		g.mu.Lock()
		if g.refreshing[path] == ch {
			delete(g.refreshing, path)
		}
		g.mu.Unlock()
		close(ch)
	}
	return after, done
}

// awaitRefresh waits for the background refreshes of the kept index at
// path (each waits for the one before it).
func (g *Git) awaitRefresh(ctx context.Context, path string) error {
	g.mu.Lock()
	ch := g.refreshing[path]
	g.mu.Unlock()
	return waitClosed(ctx, ch)
}

func waitClosed(ctx context.Context, ch chan struct{}) error {
	if ch == nil {
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Wait waits for every background refresh running (a server stopping, a
// test ending before its data directory goes).
func (g *Git) Wait(ctx context.Context) error {
	g.mu.Lock()
	chans := make([]chan struct{}, 0, len(g.refreshing))
	for _, ch := range g.refreshing {
		chans = append(chans, ch)
	}
	g.mu.Unlock()
	for _, ch := range chans {
		if err := waitClosed(ctx, ch); err != nil {
			return err
		}
	}
	return nil
}

// RemoveIndex removes a kept index (SnapshotOptions.Index) and the files
// kept beside it, once a refresh of it in the background has ended.
func (g *Git) RemoveIndex(ctx context.Context, path string) error {
	if err := g.awaitRefresh(ctx, path); err != nil {
		return err
	}
	var errs []error
	for _, f := range []string{path, path + ".untracked", path + ".tree", path + ".excludes", path + ".user"} {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
