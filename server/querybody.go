package server

import (
	"bytes"
	"fmt"
	"io"
	"net/http"

	"tuttid/apperr"
)

// maxJSONDepth bounds how deeply a /query body's JSON may nest. No
// operation tuttid answers needs more than a few levels of variables; a
// body nested thousands deep only costs the decoders' time and stack.
const maxJSONDepth = 64

// checkQueryBody answers, with a stable code and without the body in any
// log line, the POST bodies gqlgen would answer as an internal error while
// logging the whole body (which will hold API keys once sign-in exists):
// a compressed body (415 unsupported_media_type: tuttid reads identity
// only), and a body that is not one JSON object (400 invalid_input): a
// batch (a JSON array of operations, which tuttid does not run), JSON
// nested deeper than maxJSONDepth, or not JSON at all. limitBody has
// bounded the body already.
func checkQueryBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || isUpgrade(r) {
			next.ServeHTTP(w, r)
			return
		}
		if enc := r.Header.Get("Content-Encoding"); enc != "" && enc != "identity" {
			writeGraphQLError(w, apperr.UnsupportedMediaType,
				fmt.Sprintf("Content-Encoding %q is not supported: send the body uncompressed", enc))
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			// limitBody's MaxBytesReader, or the connection's deadline.
			writeGraphQLError(w, apperr.InvalidInput, "could not read the request body")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if problem := jsonObjectProblem(body); problem != "" {
			writeGraphQLError(w, apperr.InvalidInput, problem)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// jsonObjectProblem says what keeps b from being one JSON object nested at
// most maxJSONDepth deep, "" when nothing does. It only scans: gqlgen
// decodes the body afterwards (and reports other JSON errors itself).
func jsonObjectProblem(b []byte) string {
	b = bytes.TrimLeft(b, " \t\r\n")
	switch {
	case len(b) == 0:
		return "the request body is empty: send a JSON object with a query"
	case b[0] == '[':
		return "a batch (a JSON array) of operations is not supported: send one operation, a JSON object, per request"
	case b[0] != '{':
		return "the request body is not a JSON object"
	}
	depth, inString, escaped := 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			if depth > maxJSONDepth {
				return fmt.Sprintf("the request body's JSON nests deeper than %d levels", maxJSONDepth)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return ""
}
