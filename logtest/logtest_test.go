package logtest_test

import (
	"log/slog"
	"strings"
	"testing"

	"tuttid/logtest"
)

func TestBuffer(t *testing.T) {
	t.Parallel()
	log, buf := logtest.New(slog.LevelInfo)
	log.Debug("hidden")
	log.Info("shown", "session", "s1")
	recs := buf.Records(t)
	if len(recs) != 1 || recs[0]["msg"] != "shown" || recs[0]["session"] != "s1" {
		t.Errorf("records %v", recs)
	}
	if !strings.Contains(buf.String(), `"msg":"shown"`) {
		t.Errorf("text %q", buf.String())
	}
	logtest.Discard().Info("nowhere")
}
