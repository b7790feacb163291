package session

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"tuttid/codebranch"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/ent/turn"
	"tuttid/store/storetest"
)

// BenchmarkTurnEndToReady measures what checkpoints add to a turn's end:
// completeTurn (the turn stored ended, the session READY, both published)
// of a session working in one repository of TUTTID_BENCH_FILES files
// (10,000 by default) of 10 KB, with checkpoints on and off, interleaved
// in the same run. Each iteration ends, on and off, a turn that changed
// nothing ("idle") and one that changed 10 files ("edit"). It reports p50
// and p95 of each, the p50/p95 added by checkpoints, and the p50 of git
// status --porcelain on the repository (the floor of a checkpoint).
func BenchmarkTurnEndToReady(b *testing.B) {
	ctx := context.Background()
	n := 10_000
	if v, err := strconv.Atoi(os.Getenv("TUTTID_BENCH_FILES")); err == nil {
		n = v
	}
	repo := benchCodeRepo(b, n)
	st := storetest.New(b)
	st.Workspace(storetest.Workspace{ID: "w", RootPath: repo})
	code := codebranch.New(codebranch.Config{Store: st.Store, DataDir: b.TempDir()})
	on := New(Config{Store: st.Store, Code: code.Hooks()})
	off := New(Config{Store: st.Store})
	sessions := map[*Service]*ent.AgentSession{
		on:  st.Session(storetest.Session{ID: "on", Workspace: "w", Cwd: repo}),
		off: st.Session(storetest.Session{ID: "off", Workspace: "w", Cwd: repo}),
	}
	code.SessionStarted(ctx, sessions[on])
	turnN := 0
	end := func(svc *Service, edit bool) time.Duration {
		a := sessions[svc]
		turnN++
		id := fmt.Sprintf("t%d", turnN)
		if err := st.Client.Turn.Create().SetAgentSessionID(a.ID).SetTurnID(id).SetStartedAt(time.Now()).Exec(ctx); err != nil {
			b.Fatal(err)
		}
		if err := st.Client.AgentSession.UpdateOneID(a.ID).SetStatus(agentsession.StatusWORKING).Exec(ctx); err != nil {
			b.Fatal(err)
		}
		if edit {
			for i := 0; i < 10; i++ {
				p := filepath.Join(repo, fmt.Sprintf("d%02d", i), fmt.Sprintf("f%04d.txt", i))
				if err := os.WriteFile(p, []byte(fmt.Sprintf("turn %d file %d\n", turnN, i)), 0o644); err != nil {
					b.Fatal(err)
				}
			}
		}
		start := time.Now()
		if err := svc.completeTurn(ctx, a, id, turn.StatusCOMPLETED, "", ""); err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		// The kept index is refreshed in the background (about 25 ms of
		// git) while the next turn runs: at least one model call, which
		// the bench does not have, so it lets the refresh end first.
		if err := code.Wait(ctx); err != nil {
			b.Fatal(err)
		}
		return took
	}
	var idleOn, idleOff, editOn, editOff, status []time.Duration
	for b.Loop() {
		// The floor a checkpoint is measured against, in the same run.
		cmd := exec.Command("git", "status", "--porcelain")
		cmd.Dir, cmd.Env = repo, append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		status = append(status, time.Since(start))
		// "off" first: its edits are then part of the "on" turn's ten
		// files, and the "on" idle turn that follows sees no change.
		editOff = append(editOff, end(off, true))
		editOn = append(editOn, end(on, true))
		idleOn = append(idleOn, end(on, false))
		idleOff = append(idleOff, end(off, false))
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(percentile(status, 50)), "git-status-p50-ms")
	for _, m := range []struct {
		name    string
		on, off []time.Duration
	}{{"idle", idleOn, idleOff}, {"edit", editOn, editOff}} {
		p50on, p95on := percentile(m.on, 50), percentile(m.on, 95)
		p50off, p95off := percentile(m.off, 50), percentile(m.off, 95)
		b.ReportMetric(ms(p50on), m.name+"-on-p50-ms")
		b.ReportMetric(ms(p95on), m.name+"-on-p95-ms")
		b.ReportMetric(ms(p50off), m.name+"-off-p50-ms")
		b.ReportMetric(ms(p95off), m.name+"-off-p95-ms")
		b.ReportMetric(ms(p50on-p50off), m.name+"-added-p50-ms")
		b.ReportMetric(ms(p95on-p95off), m.name+"-added-p95-ms")
	}
}

func percentile(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

// benchCodeRepo makes a committed repository of n files of 10 KB in 100
// directories (gitrepo's BenchmarkCheckpoint's).
func benchCodeRepo(b *testing.B, n int) string {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "repo")
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 10_000)
	for i := 0; i < n; i++ {
		for j := range buf {
			buf[j] = 'a' + byte(rng.IntN(26))
			if j%80 == 79 {
				buf[j] = '\n'
			}
		}
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%100), fmt.Sprintf("f%04d.txt", i/100))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, buf, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "bench"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}
