package rest

import (
	_ "embed"
	"net/http"
)

// openAPI documents the REST endpoint; a test checks it against the
// handler's real requests, responses and error codes.
//
//go:embed openapi.json
var openAPI []byte

func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(openAPI)
}
