//go:build !unix

package store

import "os"

// tryLock: no flock here; the server lock is not enforced.
func tryLock(*os.File) (bool, error) { return true, nil }
