package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// CheckOwned refuses a file tuttid would trust that another user could
// have chosen or could change: one not owned by the user tuttid runs as
// (a database or token another user pre-created), or writable by its group
// or by everyone. fi describes the file (from Stat, or better from the
// open file's Stat); what names it in the message.
func CheckOwned(what, path string, fi fs.FileInfo) error {
	if uid, ok := fileOwner(fi); ok && uid != os.Geteuid() {
		return fmt.Errorf("%s %s belongs to another user (uid %d, tuttid runs as uid %d): refusing to use it; remove it, or run tuttid as its owner", what, path, uid, os.Geteuid())
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("%s %s can be written by other users (mode %v): refusing to use it; chmod go-w it", what, path, perm)
	}
	return nil
}

// checkOwnedIfExists runs CheckOwned on path when it exists (SQLite's
// -wal and -shm files, which another user could plant before the first
// start).
func checkOwnedIfExists(what, path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		if fi, err = os.Stat(path); err != nil {
			return err
		}
	}
	return CheckOwned(what, path, fi)
}
