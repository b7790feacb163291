package server

import "net/http"

// Every answer is the API's or a page's unless a route serves built files:
// none may be stored by a cache (an answer holds data, a page's address
// may hold ?token=), and none may be sniffed into another type.
const (
	cacheControlNoStore = "no-store"
	noSniff             = "nosniff"
)

// answerHeaders sets Cache-Control: no-store and X-Content-Type-Options:
// nosniff on every answer, refusals included, before anything else runs.
// A route of built files (route.files) replaces Cache-Control with its own.
func answerHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", cacheControlNoStore)
		h.Set("X-Content-Type-Options", noSniff)
		next.ServeHTTP(w, r)
	})
}

// forceNoStore keeps Cache-Control: no-store on a page whose handler sets
// its own (webasset revalidates pages): it is set again as the header is
// written. Pages do not hijack, so the wrapper needs no Hijacker.
func forceNoStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&noStoreWriter{ResponseWriter: w}, r)
	})
}

type noStoreWriter struct {
	http.ResponseWriter
	wrote bool
}

func (w *noStoreWriter) WriteHeader(status int) {
	if !w.wrote {
		w.wrote = true
		w.Header().Set("Cache-Control", cacheControlNoStore)
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *noStoreWriter) Write(p []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

func (w *noStoreWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
