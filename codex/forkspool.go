package codex

import (
	"bufio"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"tuttid/agent"
)

// turnSpool holds the turns of a streamed fork reply (forkreply.go) in an
// unlinked 0600 temp file as the reader goroutine decodes them, so that no
// history is held in memory: the fork reads them back a page at a time.
// Written on the reader goroutine, closed by the fork call, possibly while
// a reply it gave up on is still being written (hence the lock).
type turnSpool struct {
	mu     sync.Mutex
	f      *os.File
	w      *bufio.Writer
	enc    *gob.Encoder
	turns  int
	err    error // the first write failure
	closed bool
}

func newTurnSpool(dir string) (*turnSpool, error) {
	f, err := os.CreateTemp(dir, "tuttid-fork-turns-*")
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	return &turnSpool{f: f, w: w, enc: gob.NewEncoder(w)}, nil
}

// add spools one turn; after a failure the rest are dropped.
func (s *turnSpool) add(t agent.RuntimeTurn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.err != nil {
		return
	}
	if err := s.enc.Encode(&t); err != nil {
		s.err = err
		return
	}
	s.turns++
}

// stream returns the spooled turns as a history stream (which owns the
// file from then on).
func (s *turnSpool) stream(pageBytes int) (agent.HistoryStream, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.err
	if err == nil {
		err = s.w.Flush()
	}
	if err == nil {
		_, err = s.f.Seek(0, io.SeekStart)
	}
	if err != nil {
		return nil, fmt.Errorf("spool the child's history: %w", err)
	}
	s.closed = true // the stream closes the file
	return &spooledTurns{f: s.f, dec: gob.NewDecoder(bufio.NewReaderSize(s.f, 1<<20)), left: s.turns, pageBytes: pageBytes}, nil
}

func (s *turnSpool) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turns
}

// Close drops the spool unless stream took it.
func (s *turnSpool) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		s.f.Close()
	}
}

// spooledTurns reads the spool back in pages of about pageBytes of
// message text and content.
type spooledTurns struct {
	f         *os.File
	dec       *gob.Decoder
	left      int
	pageBytes int
}

// maxSpooledPageTurns bounds a page of small turns.
const maxSpooledPageTurns = 1000

func (s *spooledTurns) Next(context.Context) ([]agent.RuntimeTurn, error) {
	if s.left == 0 {
		return nil, io.EOF
	}
	var page []agent.RuntimeTurn
	size := 0
	for s.left > 0 && size < s.pageBytes && len(page) < maxSpooledPageTurns {
		var t agent.RuntimeTurn
		if err := s.dec.Decode(&t); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("read the spooled history back: %w", err)
		}
		s.left--
		for _, m := range t.Messages {
			size += len(m.Text) + len(m.Content)
		}
		page = append(page, t)
	}
	return page, nil
}

func (s *spooledTurns) Close() { s.f.Close() }

// failedHistory is a history stream that failed before its first page.
type failedHistory struct{ err error }

func (f failedHistory) Next(context.Context) ([]agent.RuntimeTurn, error) { return nil, f.err }
func (failedHistory) Close()                                              {}

// OnLocalDisk says the stream is already spooled to local disk: the fork
// service reads it in its transaction without spooling it again, and
// takes a failure to read it as one of local storage.
func (s *spooledTurns) OnLocalDisk() bool { return true }
