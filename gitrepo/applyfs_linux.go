package gitrepo

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// renameNoReplace moves from (a name in fromDir) to to (a name in toDir)
// unless to exists (os.ErrExist): an apply never replaces a file it did
// not move aside first. A file system without RENAME_NOREPLACE gets a
// check, then a plain rename.
func renameNoReplace(fromDir *os.File, from string, toDir *os.File, to string) error {
	err := unix.Renameat2(int(fromDir.Fd()), from, int(toDir.Fd()), to, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return renameChecked(fromDir, from, toDir, to)
	}
	return renameError(from, to, err)
}
