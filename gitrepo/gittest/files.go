// Package gittest holds what tests of checkouts share.
package gittest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Files is every file under dir (but .git) with its mode and bytes, one
// a line in path order: two checkouts with the same files give the same
// string.
func Files(t testing.TB, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		b.WriteString(rel + " " + fi.Mode().String() + " " + string(data) + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
