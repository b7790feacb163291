package server

import (
	"errors"
	"io"
	"net/http"
	"time"
)

// Connection time bounds: nobody holds a connection open without sending
// (issue 22, 18). http.Server's own ReadTimeout is not used: it also
// arms the read of the next request's first byte that net/http runs
// while a handler works, and its expiry there cancels the request's
// context, so a fork that takes a minute would be cut off; the body's
// bound is set per request instead (bodyDeadline). WebSockets are
// hijacked, which clears every deadline of their connection.
const (
	// DefaultReadHeaderTimeout bounds reading a request's headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultBodyTimeout bounds reading a request's body (at most
	// --max-body bytes) from the end of its headers.
	DefaultBodyTimeout = 30 * time.Second
	// DefaultIdleTimeout closes a keep-alive connection that sends no
	// next request.
	DefaultIdleTimeout = 2 * time.Minute
)

// bodyDeadline gives a request with a body until d from now to send it
// all; once the body is read to its end the deadline is lifted, so the
// handler runs as long as it needs. A connection that sends its body
// slower is closed.
func bodyDeadline(next http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 || isUpgrade(r) {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		if err := rc.SetReadDeadline(time.Now().Add(d)); err != nil {
			next.ServeHTTP(w, r) // not a net/http connection (tests' recorders)
			return
		}
		r.Body = &liftAtEOF{ReadCloser: r.Body, lift: func() { _ = rc.SetReadDeadline(time.Time{}) }}
		next.ServeHTTP(w, r)
	})
}

// liftAtEOF calls lift once the body has been read to its end.
type liftAtEOF struct {
	io.ReadCloser
	lift   func()
	lifted bool
}

func (b *liftAtEOF) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) && !b.lifted {
		b.lifted = true
		b.lift()
	}
	return n, err
}
