package sessionread_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tuttid/paging"
	"tuttid/sessionread"
	"tuttid/store"
	"tuttid/store/pgtest"
	"tuttid/store/storetest"
)

// The raw SQL of this package on both backends, whatever TUTTID_TEST_DB
// says: each test runs once on a SQLite file and once on PostgreSQL.

// onBoth runs fn with an env on a SQLite file and one on PostgreSQL.
func onBoth(t *testing.T, fn func(t *testing.T, e *testEnv)) {
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			loc := filepath.Join(t.TempDir(), "tuttid.db")
			if name == "postgres" {
				loc = pgtest.URL(t)
			}
			st, err := store.Open(context.Background(), loc)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			fn(t, &testEnv{st: storetest.Wrap(t, st), svc: sessionread.New(sessionread.Config{Store: st})})
		})
	}
}

// TestPageBytesCountBytesOnBothBackends: the page bound sizes messages
// with octet_length, in bytes, on both (2-byte characters: a page of two
// 3 MiB messages; counted in characters it would be three).
func TestPageBytesCountBytesOnBothBackends(t *testing.T) {
	onBoth(t, func(t *testing.T, e *testEnv) {
		e.st.Workspace(storetest.Workspace{ID: "w"})
		a := e.st.Session(storetest.Session{ID: "s", Workspace: "w"})
		text := strings.Repeat("é", 3<<20/2) // 3 MiB
		e.insert(t, a, msg("m1", "assistant", text), msg("m2", "assistant", text), msg("m3", "assistant", text))
		p, err := e.svc.Messages(context.Background(), a.ID, paging.Args{First: intp(50)})
		if err != nil {
			t.Fatal(err)
		}
		if got := versions(p.Nodes); !slices.Equal(got, []int64{1, 2}) || !p.HasNextPage {
			t.Errorf("first page = %v (more: %v), want [1 2] and more", got, p.HasNextPage)
		}
		// The same bound on a list's pages (messagePages) and on turns (turnSizes).
		pages, err := sessionread.MessagePages(context.Background(), e.svc, []string{a.ID}, paging.Window{Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		if got := versions(pages[a.ID].Nodes); !slices.Equal(got, []int64{1, 2}) {
			t.Errorf("list page = %v, want [1 2]", got)
		}
	})
}
