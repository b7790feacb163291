package gitrepo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"tuttid/benchtest"
)

// BenchmarkCheckpoint compares, on one repository of
// TUTTID_BENCH_FILES files (10,000 by default) of 10 KB (about 100 MB),
// after a turn that changed 10 files, in the same run:
//   - status: git status --porcelain, the floor (every file is stat'ed);
//   - checkpoint: Repo.Checkpoint from a copy of the user's index;
//   - kept: Repo.Checkpoint with a kept per-session index;
//   - naive: a fresh temporary index, read-tree HEAD, add -A, write-tree,
//     commit-tree (re-hashes every file), TUTTID_BENCH_NAIVE times (3).
//
// Each iteration runs status, checkpoint and kept one after the other (a
// loaded machine slows all three alike); the medians and their ratios are
// reported as metrics. The bounds: checkpoint <= 1.5x status and
// <= 0.3x naive.
func BenchmarkCheckpoint(b *testing.B) {
	n := envInt("TUTTID_BENCH_FILES", 10_000)
	ctx := context.Background()
	repo := benchRepo(b, n)
	g := New(Config{Bin: gitBin})
	r, err := g.Open(ctx, repo)
	if err != nil {
		b.Fatal(err)
	}
	kept := filepath.Join(b.TempDir(), "session.index")
	turn := 0
	changeTen := func() {
		turn++
		for i := 0; i < 10; i++ {
			path := filepath.Join(repo, fmt.Sprintf("d%02d", i), fmt.Sprintf("f%04d.txt", i))
			if err := os.WriteFile(path, []byte(fmt.Sprintf("turn %d file %d\n", turn, i)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	timed := func(into *[]time.Duration, f func()) {
		changeTen()
		start := time.Now()
		f()
		*into = append(*into, time.Since(start))
	}
	var status, checkpoint, keptIndex, naive []time.Duration
	for b.Loop() {
		// The floor as an editor's background status runs it: without
		// rewriting the index (a rewrite would also make every kept index
		// look older than the user's, and be seeded again).
		timed(&status, func() { benchGit(b, repo, []string{"GIT_OPTIONAL_LOCKS=0"}, "status", "--porcelain") })
		timed(&checkpoint, func() {
			if _, err := r.Checkpoint(ctx, CheckpointOptions{Ref: TurnRef("bench", strconv.Itoa(turn))}); err != nil {
				b.Fatal(err)
			}
		})
		timed(&keptIndex, func() {
			if _, err := r.Checkpoint(ctx, CheckpointOptions{Ref: TurnRef("kept", strconv.Itoa(turn)), Index: kept}); err != nil {
				b.Fatal(err)
			}
		})
		// The kept index is refreshed in the background, while the agent's
		// next turn begins; it must not slow the next measurements.
		if err := g.awaitRefresh(ctx, kept); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	for i := 0; i < envInt("TUTTID_BENCH_NAIVE", 3); i++ {
		timed(&naive, func() {
			tmp := b.TempDir()
			env := []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
			benchGit(b, repo, env, "read-tree", "HEAD")
			benchGit(b, repo, env, "add", "-A")
			tree := benchGit(b, repo, env, "write-tree")
			benchGit(b, repo, nil, "-c", "user.name=b", "-c", "user.email=b@b", "commit-tree", tree, "-p", "HEAD", "-m", "naive")
		})
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	s, c, k := benchtest.Median(status), benchtest.Median(checkpoint), benchtest.Median(keptIndex)
	b.ReportMetric(ms(s), "status-ms")
	b.ReportMetric(ms(c), "checkpoint-ms")
	b.ReportMetric(ms(k), "kept-ms")
	b.ReportMetric(float64(c)/float64(s), "checkpoint/status")
	b.ReportMetric(float64(k)/float64(s), "kept/status")
	if len(naive) > 0 {
		nv := benchtest.Median(naive)
		b.ReportMetric(ms(nv), "naive-ms")
		b.ReportMetric(float64(c)/float64(nv), "checkpoint/naive")
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func benchGit(b *testing.B, dir string, env []string, args ...string) string {
	b.Helper()
	cmd := exec.Command(gitBin, args...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), env...)
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// benchRepo makes a repository of n files of 10 KB in 100 directories,
// committed.
func benchRepo(b *testing.B, n int) string {
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
		path := filepath.Join(dir, fmt.Sprintf("d%02d", i%100), fmt.Sprintf("f%04d.txt", i/100))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, buf, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	benchGit(b, dir, nil, "init", "-q")
	benchGit(b, dir, nil, "add", "-A")
	benchGit(b, dir, nil, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "bench")
	return dir
}

// BenchmarkCheckpointStorage reports the bytes a checkpoint adds to the
// object store per turn that changed 10 files of 10 KB (turn-bytes), per
// turn that changed nothing (idle-bytes: the previous checkpoint is
// reused), and the bytes git gc --prune=now reclaims once the session's
// refs are deleted (reclaimed-bytes, of added-bytes; left-after-gc-bytes
// is what stays). Sizes are disk usage (git count-objects -v: loose
// objects take whole blocks).
func BenchmarkCheckpointStorage(b *testing.B) {
	ctx := context.Background()
	repo := benchRepo(b, envInt("TUTTID_BENCH_FILES", 2_000))
	g := New(Config{Bin: gitBin})
	r, err := g.Open(ctx, repo)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, 10_000)
	// Packed first: what gc does to the repository's own objects is not
	// the checkpoints' doing.
	benchGit(b, repo, nil, "gc", "--quiet", "--prune=now")
	start := objectBytes(b, repo)
	var prev string
	turns, idle := 0, int64(0)
	for b.Loop() {
		turns++
		for i := 0; i < 10; i++ {
			for j := range buf {
				buf[j] = 'a' + byte(rng.IntN(26))
			}
			path := filepath.Join(repo, fmt.Sprintf("d%02d", i), fmt.Sprintf("f%04d.txt", i))
			if err := os.WriteFile(path, buf, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		cp, err := r.Checkpoint(ctx, CheckpointOptions{Ref: TurnRef("store", strconv.Itoa(turns)), Previous: prev})
		if err != nil {
			b.Fatal(err)
		}
		before := objectBytes(b, repo)
		same, err := r.Checkpoint(ctx, CheckpointOptions{Ref: TurnRef("store", strconv.Itoa(turns)+"-idle"), Previous: cp.Commit})
		if err != nil {
			b.Fatal(err)
		}
		if !same.Reused {
			b.Fatal("an idle turn made a new checkpoint")
		}
		idle += objectBytes(b, repo) - before
		prev = cp.Commit
	}
	added := objectBytes(b, repo) - start
	b.StopTimer()
	if err := r.DeleteRefs(ctx, SessionRefPrefix("store")); err != nil {
		b.Fatal(err)
	}
	benchGit(b, repo, nil, "-c", "gc.reflogExpire=now", "-c", "gc.reflogExpireUnreachable=now", "gc", "--quiet", "--prune=now")
	after := objectBytes(b, repo)
	b.ReportMetric(float64(added)/float64(turns), "turn-bytes")
	b.ReportMetric(float64(idle)/float64(turns), "idle-bytes")
	b.ReportMetric(float64(added), "added-bytes")
	b.ReportMetric(float64(start+added-after), "reclaimed-bytes")
	b.ReportMetric(float64(after-start), "left-after-gc-bytes")
}

// objectBytes is the size of the object store: loose objects and packs.
func objectBytes(b *testing.B, repo string) int64 {
	b.Helper()
	var total int64
	for _, line := range strings.Split(benchGit(b, repo, nil, "count-objects", "-v"), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		if k == "size" || k == "size-pack" {
			n, _ := strconv.ParseInt(v, 10, 64)
			total += n * 1024
		}
	}
	return total
}
