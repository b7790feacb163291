//go:build unix

package priority

import (
	"fmt"
	"syscall"
)

func lowerGroup(pgid, nice int) error {
	own, err := Own()
	if err != nil {
		return err
	}
	if err := syscall.Setpriority(syscall.PRIO_PGRP, pgid, max(nice, own)); err != nil {
		return fmt.Errorf("priority: nice %d for process group %d: %w", max(nice, own), pgid, err)
	}
	return nil
}

// Own is the calling thread's nice value (tuttid's, unless it was changed
// for one thread).
func Own() (int, error) {
	p, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	if err != nil {
		return 0, fmt.Errorf("priority: own nice value: %w", err)
	}
	return fromKernel(p), nil
}
