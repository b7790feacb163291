package codex

import (
	"context"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/codex/codextest"
)

// TestModelsReadsEveryPage lists the real Codex's models in pages of two
// (Codex 0.169.0 has 9 visible models, 0.171.0 has 11; nextCursor is an
// offset) and in one page, and gets the same list.
func TestModelsReadsEveryPage(t *testing.T) {
	model := codextest.StartModelServer(t)
	home := codextest.NewCodexHome(t, model.URL())
	list := func(pageLimit int) ([]string, int64) {
		var calls atomic.Int64
		r := New(Config{Bin: codextest.Binary(t), Env: append(os.Environ(), "CODEX_HOME="+home),
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), RequestTimeout: 30 * time.Second,
			OnSent: func(m string) {
				if m == "model/list" {
					calls.Add(1)
				}
			}})
		defer r.Close()
		r.modelPageLimit = pageLimit
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.Launch(ctx); err != nil {
			t.Fatal(err)
		}
		models, err := r.Models(ctx, agent.ProviderCodex)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range models {
			ids = append(ids, m.ID)
		}
		return ids, calls.Load()
	}
	whole, calls := list(modelPageLimit)
	paged, pages := list(2)
	if calls != 1 || len(whole) < 3 || pages != int64((len(whole)+1)/2) || !slices.Equal(whole, paged) {
		t.Fatalf("one page: %q (%d calls); pages of 2: %q (%d calls)", whole, calls, paged, pages)
	}
}
