//go:build unix && !linux

package appserver

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the child in its own process group: the npm `codex`
// entry point is a node wrapper that spawns the real binary, and killing
// only the wrapper would leave the app-server running. Without Linux's
// Pdeathsig, the group's watchdog is what stops it when tuttid dies.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func startProcess(cmd *exec.Cmd) error { return cmd.Start() }
