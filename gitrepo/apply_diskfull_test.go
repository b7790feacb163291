package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestApplyDiskFull runs the apply on a real file system that fills: the
// parent's checkout on a small tmpfs, a filler leaving room for none, one
// or two of the three big files the apply brings, so that git's
// checkout-index fails on the first, second or third. Each time the
// parent's files are as they were and the error is a full disk naming
// the kept state; with room, the apply goes through.
func TestApplyDiskFull(t *testing.T) {
	ctx := context.Background()
	g := testGit(t)
	mnt := filepath.Join(t.TempDir(), "mnt")
	mountTmpfs(t, mnt, 8<<20)
	const big = 256 << 10
	f := newApplyFixture(t, g, filepath.Join(mnt, "repo"), 3, big)
	// A dry run writes the objects the apply reads (the child's files).
	if _, err := f.parent.Apply(ctx, f.child, f.base, true); err != nil {
		t.Fatal(err)
	}
	before := checkoutState(t, f.repo)
	for _, room := range []int64{big / 4, big + big/2, 2*big + big/2} {
		t.Run(fmt.Sprintf("%d KiB left", room>>10), func(t *testing.T) {
			filler := fill(t, mnt, room)
			_, err := f.parent.Apply(ctx, f.child, f.base, false)
			if err := os.Remove(filler); err != nil {
				t.Fatal(err)
			}
			var ae *ApplyError
			if !errors.As(err, &ae) {
				t.Fatalf("err %v, want an *ApplyError", err)
			}
			if !strings.Contains(err.Error(), "stage the merged files") {
				t.Errorf("err %v, want a failure while staging", err)
			}
			if !ae.DiskFull || len(ae.NotRestored) > 0 || !strings.Contains(err.Error(), ae.KeptRef) {
				t.Errorf("err %v: disk full %v, not restored %v", err, ae.DiskFull, ae.NotRestored)
			}
			if got := checkoutState(t, f.repo); got != before {
				t.Errorf("files:\n%s\nwant\n%s", got, before)
			}
			checkNoStaging(t, f.parent)
		})
	}
	if _, err := f.parent.Apply(ctx, f.child, f.base, false); err != nil {
		t.Fatal(err)
	}
	f.checkApplied(t)
}

// mountTmpfs mounts a tmpfs of size bytes at dir until the test ends.
// Where mount is not allowed the test is skipped, except under CI (which
// runs as root): there it fails.
func mountTmpfs(t *testing.T, dir string, size int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("mount a tmpfs (CI runs as root): %v: %s", err, out)
		}
		t.Skipf("cannot mount a tmpfs here (root is needed; CI runs this test): %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Logf("umount %s: %v: %s; detaching it", dir, err, out)
			_ = exec.Command("umount", "-l", dir).Run()
		}
	})
}

// fill takes the room of dir's file system but room bytes with a file,
// whose path it answers.
func fill(t *testing.T, dir string, room int64) string {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	avail := int64(st.Bavail) * int64(st.Bsize)
	if avail <= room {
		t.Fatalf("%d bytes left, want more than %d", avail, room)
	}
	path := filepath.Join(dir, "filler")
	file, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if err := unix.Fallocate(int(file.Fd()), 0, 0, avail-room); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestApplyStagesOnTheTargetsFileSystem: a target whose git directory is
// on another file system (a linked worktree of a repository on a tmpfs)
// stages at its own top level, where the renames stay atomic; a failure
// at any step leaves its files (and no staging) as they were.
func TestApplyStagesOnTheTargetsFileSystem(t *testing.T) {
	ctx := context.Background()
	g := testGit(t)
	mnt := filepath.Join(t.TempDir(), "mnt")
	mountTmpfs(t, mnt, 8<<20)
	f := newApplyFixture(t, g, filepath.Join(mnt, "repo"), 0, 0)
	dir := filepath.Join(t.TempDir(), "target")
	if _, err := f.parent.CreateWorktree(ctx, WorktreeOptions{Checkpoint: f.base, Path: dir}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "notes.txt"), "the person's\n")
	target := openRepo(t, g, dir)
	if sameDevice(target.GitDir, target.Root) {
		t.Fatal("the worktree's git directory is on its file system")
	}
	before := checkoutState(t, dir)
	for k := 1; ; k++ {
		staged := false
		_, err := target.ApplyWith(ctx, f.child, f.base, ApplyOptions{Step: func(s ApplyStep) error {
			if s.Op == StepStage {
				m, _ := filepath.Glob(filepath.Join(dir, ".tuttid-apply-*", "new", "a.txt"))
				staged = len(m) == 1
			}
			if s.N == k {
				return errDiskFull
			}
			return nil
		}})
		if !staged {
			t.Fatalf("step %d: not staged at the target's top level", k)
		}
		if err == nil {
			break
		}
		if !errors.Is(err, ErrApplyWrite) {
			t.Fatal(err)
		}
		if got := checkoutState(t, dir); got != before {
			t.Fatalf("step %d: files\n%s\nwant\n%s", k, got, before)
		}
	}
	if got := readFile(t, filepath.Join(dir, "a.txt")); got != "1\n2\n3\n4\n5 child\n" {
		t.Errorf("a.txt = %q", got)
	}
	checkNoStaging(t, target)
}
