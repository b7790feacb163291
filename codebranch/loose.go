package codebranch

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A checkpoint's commit and ref are written by tuttid itself, the way git
// writes them (a loose object; a loose ref through its .lock file), when
// the repository is one where that is exactly what git would do: SHA-1
// objects, the files ref backend, no core.sharedRepository permissions.
// Each saves a git process at every turn's end (a few milliseconds each,
// more on a loaded machine); any other repository, or any surprise, goes
// through git commit-tree and git update-ref as before.

// direct says whether r's repository takes directly written objects and
// refs; it is read once, when r is opened.
type direct struct {
	objects bool
	refs    bool
}

// probeConfig reads, in one git call, what Open needs from the
// configuration: whether objects and refs may be written directly (the
// object format, the ref storage, the shared-repository setting) and the
// global excludes file.
func (g *Git) probeConfig(ctx context.Context, root, commonDir string) (direct, string) {
	out, err := g.run(ctx, call{dir: root}, "config", "-z", "--get-regexp", `^(core\.sharedrepository|core\.excludesfile|extensions\..*)$`)
	if err != nil && exitCode(err) != 1 { // 1: none set
		return direct{}, globalExcludes("", g.env)
	}
	var excludes string
	for _, rec := range splitZ(out) {
		if key, val, _ := strings.Cut(rec, "\n"); strings.EqualFold(key, "core.excludesfile") {
			excludes = val
		}
	}
	return g.probeDirect(out, commonDir), globalExcludes(excludes, g.env)
}

// probeDirect decides direct from probeConfig's output.
func (g *Git) probeDirect(out []byte, commonDir string) direct {
	for _, rec := range splitZ(out) {
		key, val, _ := strings.Cut(rec, "\n")
		switch strings.ToLower(key) {
		case "extensions.objectformat":
			if !strings.EqualFold(val, "sha1") {
				return direct{}
			}
		case "extensions.refstorage":
			if !strings.EqualFold(val, "files") {
				return direct{}
			}
		case "core.sharedrepository":
			return direct{}
		}
	}
	if _, err := os.Stat(filepath.Join(commonDir, "reftable")); err == nil {
		return direct{}
	}
	return direct{objects: true, refs: true}
}

// commitBody is the commit object git commit-tree writes for tree, parent,
// message and date with tuttid's identity.
func commitBody(tree, parent, msg string, when time.Time) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "tree %s\n", tree)
	if parent != "" {
		fmt.Fprintf(&b, "parent %s\n", parent)
	}
	stamp := fmt.Sprintf("%s <%s> %d +0000", identityName, identityEmail, when.Unix())
	fmt.Fprintf(&b, "author %s\ncommitter %s\n\n%s\n", stamp, stamp, strings.TrimRight(msg, "\n"))
	return b.Bytes()
}

// writeLooseObject stores an object in the repository's object directory
// as git does (zlib of "<type> <size>\0<content>", named by its SHA-1,
// written to a temporary file and linked into place, read-only) and
// returns its id. An object already there is left as it is.
func writeLooseObject(commonDir, kind string, content []byte) (string, error) {
	header := fmt.Sprintf("%s %d\x00", kind, len(content))
	h := sha1.New()
	h.Write([]byte(header))
	h.Write(content)
	id := hex.EncodeToString(h.Sum(nil))
	dir := filepath.Join(commonDir, "objects", id[:2])
	final := filepath.Join(dir, id[2:])
	if _, err := os.Stat(final); err == nil {
		return id, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "tmp_obj_")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	zw := zlib.NewWriter(f)
	_, err = zw.Write([]byte(header))
	if err == nil {
		_, err = zw.Write(content)
	}
	if err == nil {
		err = zw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o444)
	}
	if err != nil {
		return "", err
	}
	// A link never replaces: a concurrent writer of the same object wins
	// with the same bytes.
	if err := os.Link(tmp, final); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	return id, nil
}

// errRefBusy: the ref cannot be written directly (its lock is held, or a
// name in its path is a file): git update-ref decides.
var errRefBusy = errors.New("ref not writable directly")

// writeLooseRef points ref at id with the files backend's protocol: an
// exclusive <ref>.lock, written and renamed over the ref. A packed copy of
// the ref, if any, is shadowed by the loose one as git's own writes do.
func writeLooseRef(commonDir, ref, id string) error {
	path := filepath.Join(commonDir, filepath.FromSlash(ref))
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return errRefBusy
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return errRefBusy
	}
	lock, err := os.OpenFile(path+".lock", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return errRefBusy
	}
	_, err = lock.WriteString(id + "\n")
	if cerr := lock.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(path+".lock", path)
	}
	if err != nil {
		os.Remove(path + ".lock")
		return err
	}
	return nil
}
