package server

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
)

// graphQLResponseJSON is the GraphQL-over-HTTP media type whose status
// codes tell request errors apart.
const graphQLResponseJSON = "application/graphql-response+json"

// graphQLOverHTTP makes gqlgen's HTTP answers to request errors (a body
// that is not JSON, a document that does not parse or validate, variables
// that do not coerce, a query over the complexity limit) follow the
// GraphQL over HTTP spec, which gqlgen's defaults do not:
//
//   - with application/json the status is 200, not gqlgen's 422 (a body
//     that is not a JSON request at all stays 400);
//   - with application/graphql-response+json it stays 4xx;
//   - either way the result carries no "data" key, since execution never
//     began (gqlgen writes "data": null).
//
// Gqlgen already negotiates the media type on Accept and answers field
// errors 200 with data; those pass through untouched, as do WebSockets.
func graphQLOverHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "" {
			next.ServeHTTP(w, r)
			return
		}
		cw := &conformWriter{ResponseWriter: w}
		next.ServeHTTP(cw, r)
		cw.finish()
	})
}

// conformWriter holds back a request error's answer until it is rewritten;
// every other answer streams through as written.
type conformWriter struct {
	http.ResponseWriter
	status   int
	held     bool
	body     bytes.Buffer
	finished bool
}

func (w *conformWriter) WriteHeader(status int) {
	if w.status != 0 {
		return
	}
	w.status = status
	if status >= 400 && status < 500 {
		w.held = true
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *conformWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.held {
		return w.body.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

// Flush keeps streaming transports working through the wrapper.
func (w *conformWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && !w.held {
		f.Flush()
	}
}

func (w *conformWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *conformWriter) finish() {
	if !w.held || w.finished {
		return
	}
	w.finished = true
	status := w.status
	body := w.body.Bytes()
	mt, _, _ := mime.ParseMediaType(w.Header().Get("Content-Type"))
	if mt != "application/json" && mt != graphQLResponseJSON {
		w.ResponseWriter.WriteHeader(status)
		_, _ = w.ResponseWriter.Write(body)
		return
	}
	var result map[string]json.RawMessage
	if err := json.Unmarshal(body, &result); err == nil {
		if _, ok := result["errors"]; ok {
			delete(result, "data")
			if b, err := json.Marshal(result); err == nil {
				body = b
			}
			if mt == "application/json" && status == http.StatusUnprocessableEntity {
				status = http.StatusOK
			}
		}
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.ResponseWriter.WriteHeader(status)
	_, _ = w.ResponseWriter.Write(body)
}
