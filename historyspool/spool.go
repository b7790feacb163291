// Package historyspool keeps a fork's history on local disk while it is
// stored: turns gob-encoded one at a time into an unlinked 0600
// temporary file (it disappears with its descriptor, even if tuttid dies),
// read back in pages. Memory holds one page at a time, and the child's
// transaction reads from disk, never waiting on the provider. The codex
// runtime spools a streamed fork reply here as it decodes it; the fork
// service spools any other history stream before its transaction.
package historyspool

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

// Spool is a history being written. Add may run on one goroutine while
// another closes the spool (a reply the caller gave up on).
type Spool struct {
	mu     sync.Mutex
	f      *os.File
	w      *bufio.Writer
	enc    *gob.Encoder
	turns  int
	err    error // the first write failure
	closed bool
}

// New makes a spool in dir (the system's temporary directory when "").
func New(dir string) (*Spool, error) {
	f, err := os.CreateTemp(dir, "tuttid-fork-history-*")
	if err != nil {
		return nil, fmt.Errorf("spool the child's history: %w", err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("spool the child's history: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	return &Spool{f: f, w: w, enc: gob.NewEncoder(w)}, nil
}

// Add spools one turn. After a failure the rest are dropped and Add
// (like Stream) answers that failure.
func (s *Spool) Add(t agent.RuntimeTurn) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if s.closed {
		return errors.New("spool the child's history: the spool is closed")
	}
	if err := s.enc.Encode(&t); err != nil {
		s.err = fmt.Errorf("spool the child's history: %w", err)
		return s.err
	}
	s.turns++
	return nil
}

// Len is how many turns were spooled.
func (s *Spool) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turns
}

// Stream returns the spooled turns as a history stream in pages of about
// pageBytes of message text and content; the stream owns the file from
// then on.
func (s *Spool) Stream(pageBytes int) (*Stream, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.err
	if err == nil {
		if err = s.w.Flush(); err != nil {
			err = fmt.Errorf("spool the child's history: %w", err)
		}
	}
	if err == nil {
		if _, err = s.f.Seek(0, io.SeekStart); err != nil {
			err = fmt.Errorf("spool the child's history: %w", err)
		}
	}
	if err != nil {
		return nil, err
	}
	s.closed = true // the stream closes the file
	return &Stream{f: s.f, dec: gob.NewDecoder(bufio.NewReaderSize(s.f, 1<<20)), left: s.turns, pageBytes: pageBytes}, nil
}

// Close drops the spool unless Stream took it.
func (s *Spool) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		s.f.Close()
	}
}

// Stream reads a spool back: an agent.HistoryStream that never waits on
// the provider, so it may be read inside a transaction. A failure to read
// it is a failure of local disk.
type Stream struct {
	f         *os.File
	dec       *gob.Decoder
	left      int
	pageBytes int
}

// maxPageTurns bounds a page of small turns.
const maxPageTurns = 1000

// Next is the next page, io.EOF after the last.
func (s *Stream) Next(context.Context) ([]agent.RuntimeTurn, error) {
	if s.left == 0 {
		return nil, io.EOF
	}
	var page []agent.RuntimeTurn
	size := 0
	for s.left > 0 && size < s.pageBytes && len(page) < maxPageTurns {
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

// OnLocalDisk makes a Stream an agent.LocalHistory.
func (s *Stream) OnLocalDisk() bool { return true }

// Close removes the spool (its file was unlinked at the start).
func (s *Stream) Close() { s.f.Close() }
