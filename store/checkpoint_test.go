package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tuttid/store"
)

// TestStoreCheckpointsInBackground: with SQLite's automatic checkpoint off
// (a commit never copies the WAL into the database, which made a large
// fork's commit wait for it), what a transaction wrote reaches the
// database file within a few of the store's ticks, with no further
// statement; and the database reads the same before and after.
func TestStoreCheckpointsInBackground(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tuttid.db")
	st, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var auto int
	if err := st.DB.QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&auto); err != nil || auto != 0 {
		t.Fatalf("wal_autocheckpoint = %d, %v; want 0", auto, err)
	}
	const size = 8 << 20
	if _, err := st.DB.ExecContext(ctx, "CREATE TABLE big (b BLOB)"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB.ExecContext(ctx, "INSERT INTO big VALUES (?)", []byte(strings.Repeat("x", size))); err != nil {
		t.Fatal(err)
	}
	// Ticks of 250 ms: under the whole suite's load (other packages
	// writing large databases at once) 10 s once passed without one.
	deadline := time.Now().Add(30 * time.Second)
	for {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() >= size {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the database file is %d bytes 30 s after an %d-byte commit: no checkpoint ran", fi.Size(), size)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var n int
	if err := st.DB.QueryRowContext(ctx, "SELECT length(b) FROM big").Scan(&n); err != nil || n != size {
		t.Fatalf("read back %d bytes, %v", n, err)
	}
}
