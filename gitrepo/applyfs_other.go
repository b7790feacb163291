//go:build unix && !linux

package gitrepo

import "os"

// renameNoReplace moves from (a name in fromDir) to to (a name in toDir)
// unless to exists (os.ErrExist).
func renameNoReplace(fromDir *os.File, from string, toDir *os.File, to string) error {
	return renameChecked(fromDir, from, toDir, to)
}
