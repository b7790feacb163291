package graph

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"tuttid/apperr"
)

// TestPresentErrorLogs: a server-side failure is logged as an error, a
// request its client abandoned only at debug level, and both answers keep
// their code.
func TestPresentErrorLogs(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	storage := func(cause error) error {
		return apperr.Storage(fmt.Errorf("read: %w", cause), "read the session's code")
	}
	for _, tc := range []struct {
		name      string
		ctx       context.Context
		err       error
		wantLevel string
	}{
		{"the database failed", context.Background(), storage(fmt.Errorf("disk I/O error")), "level=ERROR"},
		{"the client went away", canceled, storage(context.Canceled), "level=DEBUG"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
			got := presentError(log)(tc.ctx, tc.err)
			if got.Extensions["code"] != string(apperr.StorageUnavailable) {
				t.Errorf("code = %v, want %s", got.Extensions["code"], apperr.StorageUnavailable)
			}
			if lines := strings.Split(strings.TrimSpace(buf.String()), "\n"); len(lines) != 1 || !strings.Contains(lines[0], tc.wantLevel) {
				t.Errorf("log = %q, want one line at %s", buf.String(), tc.wantLevel)
			}
		})
	}
}
