// Command testreport runs go test with -json and says what happens as it
// goes: each package as it starts and ends (with its counts and time), a
// line every minute naming the packages still running, the output of
// every failed test, and one summary line at the end (passed, failed,
// skipped, time). It exits as go test does. `make test` runs it.
//
// gotestsum does much of this, but names a package only once it ends: in
// this suite two packages take five minutes each, and the point is to see
// which.
//
//	go run ./tools/testreport [go test flags and packages]
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run runs go test -json args and reports on out; its result is go
// test's exit code (2 when go test could not start).
func run(ctx context.Context, args []string, out, errOut io.Writer) int {
	goBin := os.Getenv("GO")
	if goBin == "" {
		goBin = "go"
	}
	cmd := exec.CommandContext(ctx, goBin, append([]string{"test", "-json"}, args...)...)
	cmd.Stderr = errOut // build failures without -json's build events
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(errOut, "testreport:", err)
		return 2
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(errOut, "testreport:", err)
		return 2
	}
	r := newReport(out, start)
	ticker := time.NewTicker(time.Minute)
	defer ticker.Stop()
	done := make(chan error, 1)
	go func() { done <- r.read(stdout) }()
	var readErr error
wait:
	for {
		select {
		case readErr = <-done:
			break wait
		case now := <-ticker.C:
			r.still(now)
		}
	}
	waitErr := cmd.Wait()
	r.summary(time.Now())
	if readErr != nil {
		fmt.Fprintln(errOut, "testreport: reading go test's output:", readErr)
	}
	var exit *exec.ExitError
	switch {
	case errors.As(waitErr, &exit):
		return exit.ExitCode()
	case waitErr != nil:
		fmt.Fprintln(errOut, "testreport:", waitErr)
		return 2
	case readErr != nil || r.failed > 0:
		return 1
	}
	return 0
}
