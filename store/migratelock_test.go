package store_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"tuttid/store"
	"tuttid/store/pgtest"
)

// Environment of TestPostgresMigrationChild, the store.Open of one
// separate process.
const (
	envMigrateURL = "TUTTID_TEST_MIGRATE_URL"
	envMigrateAt  = "TUTTID_TEST_MIGRATE_AT" // unix nanoseconds: all start then
)

// TestPostgresInstancesMigrateAtOnce: two, then four, tuttid processes
// opening one fresh PostgreSQL database at the same moment all come up
// (without the migration lock the ones that lost the race exit with
// `relation "..." already exists`), and the schema is there once. Each
// store is opened by its own process (this test binary re-executed), as
// separate instances do: within one process ent's migration writes
// package-level table descriptions, which -race reports when two run at
// once (storetest serializes them for that reason).
func TestPostgresInstancesMigrateAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	for _, n := range []int{2, 4} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			url := pgtest.URL(t)
			// Every process waits for the same instant after it has
			// started, so that their migrations overlap.
			at := time.Now().Add(2 * time.Second)
			var wg sync.WaitGroup
			outs := make([][]byte, n)
			errs := make([]error, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					cmd := exec.Command(os.Args[0], "-test.run=^TestPostgresMigrationChild$", "-test.count=1", "-test.v")
					cmd.Env = append(os.Environ(), envMigrateURL+"="+url, fmt.Sprintf("%s=%d", envMigrateAt, at.UnixNano()))
					outs[i], errs[i] = cmd.CombinedOutput()
				}()
			}
			wg.Wait()
			for i := range n {
				if errs[i] != nil {
					t.Errorf("instance %d of %d did not come up: %v\n%s", i, n, errs[i], outs[i])
				}
			}
			db := rawPG(t, url)
			// Every table of the schema once (a table cannot be there
			// twice; what could is a second copy under another name or a
			// half-made schema: count them against a single open's).
			var tables int
			if err := db.QueryRow(`SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`).Scan(&tables); err != nil {
				t.Fatal(err)
			}
			single := pgtest.URL(t)
			openPG(t, single).Close()
			var want int
			if err := rawPG(t, single).QueryRow(`SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`).Scan(&want); err != nil {
				t.Fatal(err)
			}
			if tables != want {
				t.Errorf("%d tables after %d instances started at once, want %d (one open's)", tables, n, want)
			}
			// And the store opens again with nothing left to migrate.
			openPG(t, url, store.MustExist)
		})
	}
}

// TestPostgresMigrationChild is one instance of
// TestPostgresInstancesMigrateAtOnce: it opens (and migrates) the database
// its parent names, at the instant it names.
func TestPostgresMigrationChild(t *testing.T) {
	url := os.Getenv(envMigrateURL)
	if url == "" {
		t.Skip("run by TestPostgresInstancesMigrateAtOnce")
	}
	at, err := strconv.ParseInt(os.Getenv(envMigrateAt), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(time.Unix(0, at)))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.Open(ctx, url)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// TestPostgresOpenWaitsForAnotherMigration: while another instance holds
// the migration lock, Open waits for it, past lock_timeout (a migration may
// rewrite a large table), and comes up once it is released.
func TestPostgresOpenWaitsForAnotherMigration(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t) + "&lock_timeout=200ms"
	holder, err := rawPG(t, url).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if _, err := holder.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, store.MigrationLockKey); err != nil {
		t.Fatal(err)
	}
	opened := make(chan error, 1)
	go func() {
		st, err := store.Open(ctx, url)
		if err == nil {
			st.Close()
		}
		opened <- err
	}()
	select {
	case err := <-opened:
		t.Fatalf("Open returned while another instance held the migration lock: %v", err)
	case <-time.After(time.Second): // five lock timeouts
	}
	if _, err := holder.ExecContext(ctx, `SELECT pg_advisory_unlock($1)`, store.MigrationLockKey); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-opened:
		if err != nil {
			t.Fatalf("Open after the lock was released: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Open still waits after the lock was released")
	}
}
