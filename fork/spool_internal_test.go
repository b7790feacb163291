package fork

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"tuttid/agent"
)

// TestSpoolReadBackFailureIsASpoolError: a spool file that cannot be read
// back is tuttid's storage failing, not the provider's stream.
func TestSpoolReadBackFailureIsASpoolError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	turns := []agent.RuntimeTurn{{ID: "t1", Status: agent.TurnCompleted}, {ID: "t2", Status: agent.TurnCompleted}}
	h, err := spoolHistory(ctx, t.TempDir(), agent.SliceHistory(turns, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	// The file's bytes go bad under the reader (a disk that fails).
	f := h.(*spooled).f
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
