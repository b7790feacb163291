package server

import (
	"bytes"
	"fmt"
	"io"
	"net/http"

	"tuttid/apperr"
)

// DefaultMaxBody is --max-body's default: room for the largest message
// (validate.MaxMessageLen) JSON-encoded.
const DefaultMaxBody = 1 << 20

// limitBody answers 413 request_too_large to a body over max bytes, before
// anything decodes it (gqlgen would answer a cut body as malformed JSON).
// A body without Content-Length is read ahead, at most max+1 bytes.
// graphQL answers in GraphQL's shape.
func limitBody(next http.Handler, max int64, graphQL bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tooLarge := r.ContentLength > max
		if !tooLarge && r.ContentLength < 0 && r.Body != nil && r.Body != http.NoBody {
			b, err := io.ReadAll(io.LimitReader(r.Body, max+1))
			if err != nil {
				writeError(w, apperr.InvalidInput, "could not read the request body")
				return
			}
			tooLarge = int64(len(b)) > max
			r.Body = io.NopCloser(bytes.NewReader(b))
			r.ContentLength = int64(len(b))
		}
		if tooLarge {
			refuse(w, graphQL, apperr.RequestTooLarge, fmt.Sprintf("the request body is larger than %d bytes (--max-body)", max))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, max)
		next.ServeHTTP(w, r)
	})
}
