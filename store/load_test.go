package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"tuttid/agent"
	"tuttid/ent"
	"tuttid/store"
)

// Fifty concurrent writers, half of them through a second connection pool
// on the same file (as `tuttid orphans clean` beside a running server),
// doing read-then-write transactions and single inserts: none sees
// SQLITE_BUSY (immediate transactions and the busy timeout serialize
// them), and every write lands.
func TestConcurrentWritersSeeNoBusy(t *testing.T) {
	st, path := openStore(t)
	ctx := context.Background()
	other, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	seed(t, st, map[string]string{"s": "w"})

	const writers, rounds = 50, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds*2)
	for w := range writers {
		db := st
		if w%2 == 1 {
			db = other
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				// Read, then write, in one transaction.
				err := db.WithTx(ctx, func(tx *ent.Tx) error {
					a, err := tx.AgentSession.Get(ctx, "s")
					if err != nil {
						return err
					}
					return tx.AgentSession.UpdateOne(a).SetLastMessageVersion(a.LastMessageVersion + 1).Exec(ctx)
				})
				if err != nil {
					errs <- fmt.Errorf("writer %d tx %d: %w", w, i, err)
				}
				err = db.Client.ForkJournal.Create().SetWorkspaceID("w").SetRequestID(fmt.Sprintf("r-%d-%d", w, i)).
					SetFingerprint("f").SetParentAgentSessionID("s").SetProvider(agent.ProviderCodex).Exec(ctx)
				if err != nil {
					errs <- fmt.Errorf("writer %d insert %d: %w", w, i, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	n := 0
	for err := range errs {
		if n++; n <= 5 {
			t.Error(err)
		}
	}
	if n > 0 {
		t.Fatalf("%d of %d writes failed", n, writers*rounds*2)
	}
	a := st.Client.AgentSession.GetX(ctx, "s")
	if a.LastMessageVersion != writers*rounds {
		t.Errorf("counter %d, want %d: a read-then-write lost an update", a.LastMessageVersion, writers*rounds)
	}
	if c := st.Client.ForkJournal.Query().CountX(ctx); c != writers*rounds {
		t.Errorf("%d rows, want %d", c, writers*rounds)
	}
}

// The pragmas the README promises hold on every pooled connection.
func TestPragmas(t *testing.T) {
	sqliteOnly(t, "TestPostgresConnectionSettings")
	st, _ := openStore(t)
	ctx := context.Background()
	want := map[string]string{"journal_mode": "wal", "synchronous": "1", "busy_timeout": "30000", "foreign_keys": "1"}
	for i := 0; i < 3; i++ { // several connections of the pool
		conn, err := st.DB.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for p, w := range want {
			var got string
			if err := conn.QueryRowContext(ctx, "PRAGMA "+p).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != w {
				t.Errorf("PRAGMA %s = %s, want %s", p, got, w)
			}
		}
	}
}
