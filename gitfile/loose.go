package gitfile

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Identity of every commit tuttid makes.
const (
	IdentityName  = "tuttid"
	IdentityEmail = "tuttid@localhost"
)

// CommitBody is the commit object git commit-tree writes for tree, parent,
// message and date with tuttid's identity.
func CommitBody(tree, parent, msg string, when time.Time) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "tree %s\n", tree)
	if parent != "" {
		fmt.Fprintf(&b, "parent %s\n", parent)
	}
	stamp := fmt.Sprintf("%s <%s> %d +0000", IdentityName, IdentityEmail, when.Unix())
	fmt.Fprintf(&b, "author %s\ncommitter %s\n\n%s\n", stamp, stamp, strings.TrimRight(msg, "\n"))
	return b.Bytes()
}

// WriteLooseObject stores an object in the repository's object directory
// as git does (zlib of "<type> <size>\0<content>", named by its SHA-1,
// written to a temporary file and linked into place, read-only) and
// returns its id. An object already there is left as it is.
func WriteLooseObject(commonDir, kind string, content []byte) (string, error) {
	id := ObjectID(kind, content)
	if err := new(looseWriter).store(commonDir, id, kind, content); err != nil {
		return "", err
	}
	return hex.EncodeToString(id[:]), nil
}

// ObjectID is the id git gives an object of kind with content.
func ObjectID(kind string, content []byte) [20]byte {
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

// ErrRefBusy: the ref cannot be written directly (its lock is held, or a
// name in its path is a file): git update-ref decides.
var ErrRefBusy = errors.New("ref not writable directly")

// WriteLooseRef points ref at id with the files backend's protocol: an
// exclusive <ref>.lock, written and renamed over the ref. A packed copy of
// the ref, if any, is shadowed by the loose one as git's own writes do.
func WriteLooseRef(commonDir, ref, id string) error {
	path := filepath.Join(commonDir, filepath.FromSlash(ref))
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return ErrRefBusy
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return ErrRefBusy
	}
	lock, err := os.OpenFile(path+".lock", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return ErrRefBusy
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
