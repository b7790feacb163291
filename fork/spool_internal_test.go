package fork

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tuttid/agent"
)

// TestSpoolReadBackFailureIsASpoolError: a spool file that cannot be read
// back is tuttid's storage failing, not the provider's stream.
func TestSpoolReadBackFailureIsASpoolError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	turns := []agent.RuntimeTurn{{ID: "t1", Status: agent.TurnCompleted}, {ID: "t2", Status: agent.TurnCompleted}}
	dir := t.TempDir()
	h, err := spoolHistory(ctx, dir, agent.SliceHistory(turns, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	// The file's bytes go bad under the reader (a disk that fails): the
	// spool is unlinked, so it is reached through this process's open
	// descriptors.
	f := openSpoolFile(t, dir)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xff}, int(fi.Size())), 0); err != nil {
		t.Fatal(err)
	}
	_, err = h.Next(ctx)
	var se spoolError
	if !errors.As(err, &se) || errors.Is(err, io.EOF) {
		t.Fatalf("read back from a failed file: %v, want a spoolError", err)
	}
	var pe streamError
	if errors.As(err, &pe) {
		t.Fatalf("read back failure %v is a streamError (the provider's)", err)
	}
}

// TestSpoolProviderFailureIsAStreamError: the provider's stream failing
// while it is spooled is the fork's one fallback point.
func TestSpoolProviderFailureIsAStreamError(t *testing.T) {
	t.Parallel()
	_, err := spoolHistory(context.Background(), t.TempDir(), failingStream{})
	var se streamError
	if !errors.As(err, &se) || !errors.Is(err, agent.ErrHistoryUnavailable) {
		t.Fatalf("spool of a failing stream: %v, want a streamError wrapping ErrHistoryUnavailable", err)
	}
}

type failingStream struct{}

func (failingStream) Next(context.Context) ([]agent.RuntimeTurn, error) {
	return nil, agent.ErrHistoryUnavailable
}
func (failingStream) Close() {}

// openSpoolFile opens for writing the unlinked spool file in dir that this
// process holds open (Linux: /proc/self/fd).
func openSpoolFile(t *testing.T, dir string) *os.File {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err != nil || !strings.HasPrefix(target, filepath.Join(dir, "tuttid-fork-history-")) {
			continue
		}
		f, err := os.OpenFile(filepath.Join("/proc/self/fd", fd.Name()), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	t.Fatalf("no open spool file in %s", dir)
	return nil
}
