package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tuttid/store"
)

// TestExclusiveLock: a second Exclusive open of one database is refused
// with ErrInUse naming the holder's pid, while plain, MustExist and
// ReadOnly opens (tuttid tree, orphans) work beside it; closing the store
// releases the lock.
func TestExclusiveLock(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tuttid.db")
	first, err := store.Open(ctx, path, store.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	_, err = store.Open(ctx, path, store.Exclusive)
	if !errors.Is(err, store.ErrInUse) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("second Exclusive open: %v, want ErrInUse naming pid %d", err, os.Getpid())
	}
	for _, opts := range [][]store.Option{{store.ReadOnly}, {store.MustExist}} {
		st, err := store.Open(ctx, path, opts...)
		if err != nil {
			t.Fatalf("Open(%v) beside the server: %v", opts, err)
		}
		st.Close()
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := store.Open(ctx, path, store.Exclusive)
	if err != nil {
		t.Fatalf("Exclusive open after Close: %v", err)
	}
	again.Close()
}
