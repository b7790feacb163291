package server_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// soakDisk is the directory the soak's database lives in: a tmpfs the test
// mounts where it may (root on Linux), so that it can be filled and freed
// while the server runs; elsewhere a plain directory and no disk-full
// window.
type soakDisk struct {
	dir, filler string
	mounted     bool
}

// soakDiskSize is the tmpfs's size outside the window: far more than the
// long soak's database needs; tmpfs takes memory only for what is written.
const soakDiskSize = "4g"

func newSoakDisk(t *testing.T) *soakDisk {
	t.Helper()
	d := &soakDisk{dir: filepath.Join(t.TempDir(), "disk")}
	d.filler = filepath.Join(d.dir, "filler")
	if err := os.MkdirAll(d.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+soakDiskSize+",mode=0700", "tmpfs", d.dir).CombinedOutput()
	if err != nil {
		t.Logf("disk-full window skipped: cannot mount a tmpfs here (%v: %s)", err, out)
		return d
	}
	d.mounted = true
	// Registered before the server starts, so it runs after the server stopped.
	t.Cleanup(func() { _ = exec.Command("umount", "-l", d.dir).Run() })
	return d
}

// fill makes the disk full: it shrinks the tmpfs to what is used plus a
// few MiB (so that the filler file stays small whatever the database's
// size), then writes the filler until the kernel answers ENOSPC.
func (d *soakDisk) fill() error {
	var fs syscall.Statfs_t
	if err := syscall.Statfs(d.dir, &fs); err != nil {
		return fmt.Errorf("statfs: %w", err)
	}
	used := (fs.Blocks - fs.Bfree) * uint64(fs.Bsize)
	size := used + 8<<20
	if out, err := exec.Command("mount", "-o", fmt.Sprintf("remount,size=%d", size), d.dir).CombinedOutput(); err != nil {
		return fmt.Errorf("shrink the tmpfs to %d bytes: %v: %s", size, err, out)
	}
	f, err := os.Create(d.filler)
	if err != nil {
		return fmt.Errorf("create the filler: %w", err)
	}
	defer f.Close()
	for _, n := range []int{64 << 10, 512} {
		buf := make([]byte, n)
		for {
			if _, err := f.Write(buf); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					return fmt.Errorf("write the filler: %w", err)
				}
				break
			}
		}
	}
	return nil
}

// free deletes the filler and gives the tmpfs its size back.
func (d *soakDisk) free() error {
	if err := os.Remove(d.filler); err != nil {
		return fmt.Errorf("remove the filler: %w", err)
	}
	if out, err := exec.Command("mount", "-o", "remount,size="+soakDiskSize, d.dir).CombinedOutput(); err != nil {
		return fmt.Errorf("grow the tmpfs back: %v: %s", err, out)
	}
	return nil
}

// dbBytes is the size of the database's files (the main file, its WAL and
// shared memory), for the soak's log.
func (d *soakDisk) dbBytes() int64 {
	var n int64
	matches, _ := filepath.Glob(filepath.Join(d.dir, "*"))
	for _, m := range matches {
		if fi, err := os.Stat(m); err == nil && m != d.filler {
			n += fi.Size()
		}
	}
	return n
}

// secondServer starts the tuttid binary on the database a running server
// holds and returns its exit code and what it printed; it must be refused.
func secondServer(bin, db string) (code int, stderr string, err error) {
	cmd := exec.Command(bin, "--addr", "127.0.0.1:0", "--db", db, "--no-auth",
		"--codex-bin", filepath.Join(filepath.Dir(bin), "no-codex"))
	cmd.Env = append(os.Environ(), "TUTTID_LOG_LEVEL=info")
	var e bytes.Buffer
	cmd.Stderr = &e
	if err := cmd.Start(); err != nil {
		return 0, "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			return exit.ExitCode(), e.String(), nil
		case err != nil:
			return 0, e.String(), err
		}
		return 0, e.String(), nil
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		return -1, e.String(), fmt.Errorf("a second tuttid on the same database was still running after 30 s")
	}
}
