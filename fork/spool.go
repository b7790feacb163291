package fork

import (
	"context"
	"errors"
	"io"
	"os"

	"tuttid/agent"
	"tuttid/historyspool"
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
// A failure of the provider's stream comes back as a streamError: the
// fork's one fallback point, where it copies the parent's cache instead. A
// failure of the file (writing it here, or reading it back in the
// transaction) is a spoolError: tuttid's own disk failed, and the fork
// fails with storage_unavailable.
func spoolHistory(ctx context.Context, dir string, h agent.HistoryStream) (agent.HistoryStream, error) {
	if l, ok := h.(agent.LocalHistory); ok && l.OnLocalDisk() {
		// Already spooled by the runtime (the codex runtime decodes a fork
		// reply's turns into its own spool as they arrive): copying it
		// again would only cost time.
		return local{l}, nil
	}
	defer h.Close()
	sp, err := historyspool.New(dir)
	if err != nil {
		return nil, spoolError{err}
	}
	for {
		page, err := h.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			sp.Close()
			return nil, streamError{err}
		}
		for _, t := range page {
			if err := sp.Add(t); err != nil {
				sp.Close()
				return nil, spoolError{err}
			}
		}
	}
	st, err := sp.Stream(spoolPageBytes)
	if err != nil {
		sp.Close()
		return nil, spoolError{err}
	}
	return local{st}, nil
}

// spoolPageBytes is about how much message text and content a page read
// back from the spool holds (one batch of the child's inserts).
const spoolPageBytes = 4 << 20

// spoolPlace names the spool directory, for the log and the answer.
func (s *Service) spoolPlace() string {
	if s.spoolDir != "" {
		return s.spoolDir
	}
	return os.TempDir()
}

// streamError marks a failure of the provider's history stream while it
// is spooled: the fork copies the parent's cache instead.
type streamError struct{ err error }

func (e streamError) Error() string { return e.err.Error() }
func (e streamError) Unwrap() error { return e.err }

// spoolError marks a failure of the spool file itself (local disk): the
// fork fails, as for any other failure of tuttid's storage.
type spoolError struct{ err error }

func (e spoolError) Error() string { return e.err.Error() }
func (e spoolError) Unwrap() error { return e.err }

// local reads a runtime's spool; failing to read it back is a failure of
// tuttid's own storage, as for the service's spool.
type local struct{ agent.LocalHistory }

func (l local) Next(ctx context.Context) ([]agent.RuntimeTurn, error) {
	page, err := l.LocalHistory.Next(ctx)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, spoolError{err}
	}
	return page, err
}
