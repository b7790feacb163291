package server

import (
	"fmt"
	"os"
	"path/filepath"

	"tuttid/store"
)

// DataDir is tuttid's data directory (the contract's "Code branches":
// worktrees live in <data dir>/worktrees/): dir when set, else the
// database file's directory, or the user's data directory with
// PostgreSQL. It is made (0700) and returned with symlinks resolved, so
// that a worktree's recorded path is its real path.
func DataDir(dir, db string) (string, error) {
	if dir == "" {
		path := db
		if store.IsPostgresURL(db) || db == "" {
			p, err := store.DefaultPath()
			if err != nil {
				return "", fmt.Errorf("data directory: %w", err)
			}
			path = p
		}
		dir = filepath.Dir(path)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("data directory %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return "", fmt.Errorf("data directory %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("data directory %s: %w", dir, err)
	}
	return real, nil
}
