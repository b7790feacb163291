package session

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/agent/agenttest"
	"tuttid/ent/agentsession"
	"tuttid/store"
)

// fullDisk is a store whose disk can be filled and freed. Where the test
// may mount (root on Linux) the database lives on a small tmpfs made for
// the test and fill writes a file until the disk is full (SQLite answers
// SQLITE_FULL); elsewhere it falls back to SQLite triggers that abort
// every write to the turns, messages and sessions tables.
type fullDisk struct {
	st     *store.Store
	tmpfs  bool
	filler string
	mu     sync.Mutex
}

// newFullDisk opens the store. The test must not be parallel: store.Open
// migrates with ent's package-level tables (storetest serializes its own).
func newFullDisk(t *testing.T) *fullDisk {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	d := &fullDisk{}
	if err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs", dir).Run(); err == nil {
		d.tmpfs = true
		t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
		t.Log("fault: a 16 MB tmpfs filled to the last block")
	} else {
		t.Logf("fault: SQLite triggers (no tmpfs: %v)", err)
	}
	st, err := store.Open(context.Background(), filepath.Join(dir, "tuttid.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	d.st, d.filler = st, filepath.Join(dir, "filler")
	return d
}

var faultTables = []string{"workspace_agent_turns", "workspace_agent_messages", "workspace_agent_sessions"}

// fill makes every write fail until free.
func (d *fullDisk) fill(t *testing.T) {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.tmpfs {
		for i, tbl := range faultTables {
			for _, op := range []string{"INSERT", "UPDATE"} {
				q := "CREATE TRIGGER full_" + op + string(rune('a'+i)) + " BEFORE " + op + " ON " + tbl +
					" BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;"
				if _, err := d.st.DB.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
		}
		return
	}
	f, err := os.Create(d.filler)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	small := make([]byte, 512)
	for {
		if _, err := f.Write(small); err != nil {
			break
		}
	}
}

// free gives the disk back.
func (d *fullDisk) free() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.tmpfs {
		for i := range faultTables {
			for _, op := range []string{"INSERT", "UPDATE"} {
				_, _ = d.st.DB.Exec("DROP TRIGGER IF EXISTS full_" + op + string(rune('a'+i)))
			}
		}
		return
	}
	_ = os.Remove(d.filler)
}

// seed stores workspace w and a WORKING session s1 on thread-1.
func (d *fullDisk) seed(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if err := d.st.Client.Workspace.Create().SetID("w").SetName("w").SetRootPath("/work/w").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := d.st.Client.AgentSession.Create().SetID("s1").SetWorkspaceID("w").SetProvider(agent.ProviderCodex).
		SetProviderSessionID("thread-1").SetStatus(agentsession.StatusWORKING).SetCwd("/work/w").
		SetSettings(agent.ComposerSettings{}).Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// recordRuntime is agenttest's runtime whose History can fail or wait.
type recordRuntime struct {
	*agenttest.Runtime
	mu     sync.Mutex
	fail   error
	block  map[string]chan struct{}
	onSend func(agent.SendTurnInput) // called before SendTurn answers
}

func (r *recordRuntime) SendTurn(ctx context.Context, in agent.SendTurnInput) (agent.RuntimeTurn, error) {
	if r.onSend != nil {
		r.onSend(in)
	}
	return r.Runtime.SendTurn(ctx, in)
}

func newRecordRuntime() *recordRuntime {
	return &recordRuntime{Runtime: agenttest.New(), block: map[string]chan struct{}{}}
}

func (r *recordRuntime) failHistory(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail = err
}

// holdHistory makes History of a thread wait until the returned func runs.
func (r *recordRuntime) holdHistory(thread string) (release func()) {
	ch := make(chan struct{})
	r.mu.Lock()
	r.block[thread] = ch
	r.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

func (r *recordRuntime) History(ctx context.Context, in agent.HistoryInput) ([]agent.RuntimeTurn, error) {
	r.mu.Lock()
	fail, ch := r.fail, r.block[in.ThreadID]
	r.mu.Unlock()
	if ch != nil {
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if fail != nil {
		return nil, fail
	}
	return r.Runtime.History(ctx, in)
}

// eventually polls cond until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, got := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %s after %s", what, got, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
