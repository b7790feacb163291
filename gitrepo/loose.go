package gitrepo

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
// refs, and what git makes of file modes there (for trees built in
// process); it is read once, when r is opened.
type direct struct {
	objects bool
	refs    bool
	// fileMode, symlinks: core.fileMode and core.symlinks (true unless
	// set false).
	fileMode bool
	symlinks bool
	// plainBlobs: no end-of-line setting and no attributes file outside
	// the working tree, so a file's blob is its bytes unless a
	// .gitattributes of the working tree says otherwise.
	plainBlobs bool
}

// probeConfig reads, in one git call, what Open needs from the
// configuration: whether objects and refs may be written directly (the
// object format, the ref storage, the shared-repository setting), the
// file-mode settings and the global excludes file.
func (g *Git) probeConfig(ctx context.Context, root, commonDir string) (direct, string) {
	out, err := g.run(ctx, call{dir: root}, "config", "-z", "--get-regexp",
		`^(core\.sharedrepository|core\.excludesfile|core\.filemode|core\.symlinks|core\.autocrlf|core\.attributesfile|extensions\..*)$`)
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
	d := direct{objects: true, refs: true, fileMode: true, symlinks: true, plainBlobs: true}
	attributes := ""
	for _, rec := range splitZ(out) {
		key, val, hasVal := strings.Cut(rec, "\n")
		switch strings.ToLower(key) {
		case "extensions.objectformat":
			if !strings.EqualFold(val, "sha1") {
				d.objects, d.refs = false, false
			}
		case "extensions.refstorage":
			if !strings.EqualFold(val, "files") {
				d.objects, d.refs = false, false
			}
		case "core.sharedrepository":
			d.objects, d.refs = false, false
		case "core.filemode":
			d.fileMode = configTrue(val, hasVal)
		case "core.symlinks":
			d.symlinks = configTrue(val, hasVal)
		case "core.autocrlf":
			// "input" converts too.
			d.plainBlobs = !configTrue(val, hasVal)
		case "core.attributesfile":
			attributes = val
		}
	}
	files := []string{
		filepath.Join(commonDir, "info", "attributes"),
		globalFile(attributes, "attributes", g.env),
		"/etc/gitattributes", // Debian's git; other builds keep theirs under their prefix
	}
	if bin, err := exec.LookPath(g.bin); err == nil {
		files = append(files, filepath.Join(filepath.Dir(filepath.Dir(bin)), "etc", "gitattributes"))
	}
	for _, f := range files {
		if _, err := os.Stat(f); f != "" && !errors.Is(err, fs.ErrNotExist) {
			d.plainBlobs = false
		}
	}
	if _, err := os.Stat(filepath.Join(commonDir, "reftable")); err == nil {
		d.objects, d.refs = false, false
	}
	return d
}

// configTrue reads a git boolean (a key without a value is true; the last
// setting wins, as probeDirect reads them in order).
func configTrue(val string, hasVal bool) bool {
	if !hasVal {
		return true
	}
	switch strings.ToLower(strings.TrimSpace(val)) {
	case "false", "no", "off", "0", "":
		return false
	}
	return true
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
	id := objectID(kind, content)
	if err := new(looseWriter).store(commonDir, id, kind, content); err != nil {
		return "", err
	}
	return hex.EncodeToString(id[:]), nil
}

// objectID is the id git gives an object of kind with content.
func objectID(kind string, content []byte) [20]byte {
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", kind, len(content))
	h.Write(content)
	return [20]byte(h.Sum(nil))
}

// looseWriter writes loose objects, reusing its compressor: a new zlib
// writer costs more than compressing a tree.
type looseWriter struct {
	zw  *zlib.Writer
	buf bytes.Buffer
}

// store writes the object of kind and content, whose id is id, unless it
// is there already.
func (w *looseWriter) store(commonDir string, id [20]byte, kind string, content []byte) error {
	hexID := hex.EncodeToString(id[:])
	dir := filepath.Join(commonDir, "objects", hexID[:2])
	final := filepath.Join(dir, hexID[2:])
	if _, err := os.Stat(final); err == nil {
		return nil
	}
	header := fmt.Sprintf("%s %d\x00", kind, len(content))
	// git's core.looseCompression default: best speed.
	w.buf.Reset()
	if w.zw == nil {
		w.zw, _ = zlib.NewWriterLevel(&w.buf, zlib.BestSpeed)
	} else {
		w.zw.Reset(&w.buf)
	}
	w.zw.Write([]byte(header))
	w.zw.Write(content)
	if err := w.zw.Close(); err != nil {
		return err
	}
	tmp := filepath.Join(dir, "tmp_obj_"+strconv.FormatUint(rand.Uint64(), 36))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(dir, 0o755); err == nil {
			f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
		}
	}
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	_, err = f.Write(w.buf.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	// A link never replaces: a concurrent writer of the same object wins
	// with the same bytes.
	if err := os.Link(tmp, final); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return nil
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
