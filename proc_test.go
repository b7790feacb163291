package main

// Support for the crash tests: the test binary runs as tuttid itself (a
// child process started with asServerEnv runs main's run), so the tests
// kill -9 the real program without building it.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	asServerEnv = "TUTTID_TEST_RUN_AS_TUTTID"
	testToken   = "crash-test-token-0123456789abcdef"
)

func TestMain(m *testing.M) {
	if os.Getenv(asServerEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// proc is a tuttid child process.
type proc struct {
	t      testing.TB
	cmd    *exec.Cmd
	url    string
	exited chan struct{}
	mu     sync.Mutex
	log    bytes.Buffer
}

// tuttidEnv is the environment of a tuttid child: Codex's home, the token
// (for servers that check one), and extra (TUTTID_CRASH_AT=...; a later
// variable wins). Its Codex runs at tuttid's priority (TUTTID_AGENT_NICE=0):
// a niced Codex beside `go test`'s other packages would wait for the CPU
// (TestServeLowersTheAgentByDefault runs the default).
func tuttidEnv(home string, extra ...string) []string {
	env := append(os.Environ(), asServerEnv+"=1", "CODEX_HOME="+home, "TUTTID_TOKEN="+testToken, "TUTTID_LOG_LEVEL=info",
		"TUTTID_AGENT_NICE=0")
	return append(env, extra...)
}

// readyLine is the plain line tuttid prints on stderr once it listens
// (whatever --log-format), with the address it listens on.
var readyLine = regexp.MustCompile(`^tuttid is ready: open http://([^/]+)/app/`)

// startTuttid starts `tuttid --addr 127.0.0.1:0 --db db` and waits until it
// listens.
func startTuttid(t testing.TB, db, codexBin, home string, extra ...string) *proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "--addr", "127.0.0.1:0", "--db", db, "--codex-bin", codexBin)
	cmd.Env = tuttidEnv(home, extra...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, exited: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.log.WriteString(line + "\n")
			p.mu.Unlock()
			if m := readyLine.FindStringSubmatch(line); m != nil {
				addr <- m[1]
			}
		}
	}()
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("tuttid (pid %d) log:\n%s", cmd.Process.Pid, p.logs())
		}
	})
	select {
	case a := <-addr:
		p.url = "http://" + a
	case <-p.exited:
		t.Fatalf("tuttid exited at start:\n%s", p.logs())
	case <-time.After(60 * time.Second):
		t.Fatalf("tuttid did not listen within 60s:\n%s", p.logs())
	}
	return p
}

func (p *proc) logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// kill sends SIGKILL (kill -9) and waits for the exit.
func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// waitExit waits for the process to end by itself (a crash point).
func (p *proc) waitExit(d time.Duration) {
	p.t.Helper()
	select {
	case <-p.exited:
	case <-time.After(d):
		p.t.Fatalf("tuttid did not die within %s", d)
	}
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		p.t.Fatalf("tuttid ended with %v, want killed by SIGKILL", p.cmd.ProcessState)
	}
}

type gqlErr struct {
	Message    string         `json:"message"`
	Extensions map[string]any `json:"extensions"`
}

func (e gqlErr) code() string { s, _ := e.Extensions["code"].(string); return s }

// gql posts an operation; transport failures (the server died) come back
// as an error.
func (p *proc) gql(query string, vars map[string]any, out any) ([]gqlErr, error) {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.url+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var env struct {
		Data   json.RawMessage `json:"data"`
		Errors []gqlErr        `json:"errors"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, fmt.Errorf("status %d: %s", resp.StatusCode, raw)
	}
	if out != nil && len(env.Data) > 0 && string(env.Data) != "null" {
		if err := json.Unmarshal(env.Data, out); err != nil {
			return env.Errors, err
		}
	}
	return env.Errors, nil
}

func (p *proc) must(query string, vars map[string]any, out any) {
	p.t.Helper()
	errs, err := p.gql(query, vars, out)
	if err != nil || len(errs) > 0 {
		p.t.Fatalf("%s: %v %+v", strings.SplitN(query, "{", 3)[1], err, errs)
	}
}

// runCLI runs `tuttid <args>` (the orphans commands) to completion.
func runCLI(t *testing.T, home string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = tuttidEnv(home)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String(), fmt.Errorf("%w: %s", err, stderr.String())
	}
	return stdout.String(), nil
}
