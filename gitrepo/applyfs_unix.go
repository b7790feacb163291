//go:build unix

package gitrepo

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// renameChecked is renameNoReplace where the kernel has no such flag: a
// check, then renameat (a file made between the two is replaced).
func renameChecked(fromDir *os.File, from string, toDir *os.File, to string) error {
	var st unix.Stat_t
	err := unix.Fstatat(int(toDir.Fd()), to, &st, unix.AT_SYMLINK_NOFOLLOW)
	if err == nil {
		return renameError(from, to, unix.EEXIST)
	}
	if !errors.Is(err, unix.ENOENT) {
		return renameError(from, to, err)
	}
	return renameError(from, to, unix.Renameat(int(fromDir.Fd()), from, int(toDir.Fd()), to))
}

func renameError(from, to string, err error) error {
	if err == nil {
		return nil
	}
	return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
}

// sameDevice reports whether a and b are on one file system: a rename
// from one to the other is atomic.
func sameDevice(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA != nil || errB != nil {
		return false
	}
	sa, okA := fa.Sys().(*syscall.Stat_t)
	sb, okB := fb.Sys().(*syscall.Stat_t)
	return okA && okB && sa.Dev == sb.Dev
}

// nearlyFull reports whether the file system of dir has less than 1 MiB
// left: git's checkout-index says "unable to write file" without the
// reason when the disk fills.
func nearlyFull(dir string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return false
	}
	return uint64(st.Bavail)*uint64(st.Bsize) < 1<<20
}
