//go:build !unix

package appserver

import (
	"os/exec"
)

func setProcessGroup(*exec.Cmd) {}

func startProcess(cmd *exec.Cmd) error { return cmd.Start() }

func signalGroup(cmd *exec.Cmd, _ bool) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

type groupWatchdog struct{}

func startWatchdog(int, []string) (*groupWatchdog, error) { return nil, nil }

func (*groupWatchdog) stop() {}
