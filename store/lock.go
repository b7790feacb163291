package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// ErrInUse: another process holds the database's server lock.
var ErrInUse = errors.New("the database is in use by another tuttid")

// LockFile is the file whose lock a server holds for its life: two
// servers on one SQLite database would each reconcile the other's running
// turns and forks as dead.
func LockFile(dbPath string) string { return dbPath + ".lock" }

// serverLock is the held lock: the open lock file, released by Close (or
// by the process's end, whatever its cause: the kernel drops it).
type serverLock struct{ f *os.File }

// lockServer takes the lock of the database at dbPath, without waiting,
// and writes this process's pid into the lock file; when another process
// holds it, the error names that process's pid.
func lockServer(dbPath string) (*serverLock, error) {
	path := LockFile(dbPath)
	if err := checkOwnedIfExists("the lock file", path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the lock file: %w", err)
	}
	held, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if !held {
		pid := readPID(f)
		f.Close()
		return nil, fmt.Errorf("%w (pid %s holds %s): stop it, or give this one another --db", ErrInUse, pid, path)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &serverLock{f: f}, nil
}

func readPID(f *os.File) string {
	b, err := io.ReadAll(io.LimitReader(f, 32))
	if pid := strings.TrimSpace(string(b)); err == nil && pid != "" {
		return pid
	}
	return "unknown"
}

// Close releases the lock. The file stays: removing it would let a third
// process lock a new file while a second waits on the old one.
func (l *serverLock) Close() error {
	if l == nil {
		return nil
	}
	return l.f.Close()
}
