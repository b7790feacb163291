package fork

import (
	"bufio"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"

	"tuttid/agent"
)

// spoolHistory reads the provider's history stream to its end into an
// unlinked temporary file, one page at a time, and returns a stream over
// that file. The child's transaction then reads pages from disk: waiting
// on the provider (seconds for a long history on a busy Codex, up to its
// request timeout) must not hold SQLite's one write lock, which every
// other write of the server waits on. Memory holds one page at a time, and
// the file (mode 0600, already unlinked) disappears with its descriptor,
// even if tuttid dies.
//
// A failure of the provider's stream comes back as a streamError, so the
// fork falls back to the parent's cache; a failure of the file does not.
func spoolHistory(ctx context.Context, h agent.HistoryStream) (agent.HistoryStream, error) {
	defer h.Close()
	f, err := os.CreateTemp("", "tuttid-fork-history-*")
	if err != nil {
		return nil, fmt.Errorf("spool the child's history: %w", err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("spool the child's history: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := gob.NewEncoder(w)
	for {
		page, err := h.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			f.Close()
			return nil, streamError{err}
		}
		if err := enc.Encode(page); err != nil {
			f.Close()
			return nil, fmt.Errorf("spool the child's history: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return nil, fmt.Errorf("spool the child's history: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("spool the child's history: %w", err)
	}
	return &spooled{f: f, dec: gob.NewDecoder(bufio.NewReader(f))}, nil
}

// spooled is a history stream read back from its spool file.
type spooled struct {
	f   *os.File
	dec *gob.Decoder
}

func (s *spooled) Next(context.Context) ([]agent.RuntimeTurn, error) {
	var page []agent.RuntimeTurn
	if err := s.dec.Decode(&page); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("read the spooled history: %w", err)
	}
	return page, nil
}

func (s *spooled) Close() { s.f.Close() }
