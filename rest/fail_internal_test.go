package rest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"tuttid/apperr"
)

// TestFailLogs: a server-side failure is logged as an error, a request its
// client abandoned only at debug level; both answer with their code.
func TestFailLogs(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	storage := func(cause error) error { return apperr.Storage(fmt.Errorf("fork: %w", cause), "record the fork") }
	for _, tc := range []struct {
		name      string
		ctx       context.Context
		err       error
		wantLevel string
	}{
		{"the database failed", context.Background(), storage(errors.New("disk I/O error")), "level=ERROR"},
		{"the client went away", canceled, storage(context.Canceled), "level=DEBUG"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			h := &Handler{Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))}
			rec := httptest.NewRecorder()
			h.fail(tc.ctx, rec, tc.err)
			if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), string(apperr.StorageUnavailable)) {
				t.Errorf("answer = %d %s, want 503 with %s", rec.Code, rec.Body, apperr.StorageUnavailable)
			}
			if lines := strings.Split(strings.TrimSpace(buf.String()), "\n"); len(lines) != 1 || !strings.Contains(lines[0], tc.wantLevel) {
				t.Errorf("log = %q, want one line at %s", buf.String(), tc.wantLevel)
			}
		})
	}
}
