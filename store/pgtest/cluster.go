package pgtest

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// Cluster is a PostgreSQL cluster of one test's own, for the tests that
// stop or restart the server (the shared one serves every other test).
type Cluster struct {
	dir, bin string
	cred     *syscall.Credential
}

// NewCluster makes and starts a cluster for t, stopped and removed when t
// ends. Skipped (failed under CI) as URL is without PostgreSQL.
func NewCluster(t testing.TB) *Cluster {
	t.Helper()
	bin, err := binDir()
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("PostgreSQL: %v", err)
		}
		t.Fatalf("PostgreSQL: %v", err)
	}
	cred, err := account()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "tuttid-pgc-")
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{dir: dir, bin: bin, cred: cred}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			t.Fatal(err)
		}
	}
	if err := c.run("initdb", "-D", c.data(), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.run("pg_ctl", "stop", "-D", c.data(), "-m", "immediate", "-w")
		os.RemoveAll(dir)
	})
	c.Start(t)
	return c
}

func (c *Cluster) data() string { return filepath.Join(c.dir, "data") }

// URL is the cluster's maintenance database (the tests may use it as is).
func (c *Cluster) URL() string {
	return "postgres://postgres@/postgres?host=" + url.QueryEscape(c.dir) + "&sslmode=disable"
}

// Start starts the server and waits until it accepts connections.
func (c *Cluster) Start(t testing.TB) {
	t.Helper()
	opts := fmt.Sprintf("-k %s -c listen_addresses= -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200", c.dir)
	if err := c.run("pg_ctl", "start", "-D", c.data(), "-w", "-l", filepath.Join(c.dir, "server.log"), "-o", opts); err != nil {
		t.Fatal(err)
	}
}

// Stop stops the server at once (clients are cut off, as in a crash of
// the server; what was committed stays).
func (c *Cluster) Stop(t testing.TB) {
	t.Helper()
	if err := c.run("pg_ctl", "stop", "-D", c.data(), "-m", "fast", "-w"); err != nil {
		t.Fatal(err)
	}
}

// Restart stops and starts the server.
func (c *Cluster) Restart(t testing.TB) {
	t.Helper()
	c.Stop(t)
	c.Start(t)
}

func (c *Cluster) run(tool string, args ...string) error {
	cmd := exec.Command(filepath.Join(c.bin, tool), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w: %s", tool, err, out)
	}
	return nil
}
