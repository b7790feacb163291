//go:build unix && !linux

package priority

// fromKernel: these systems' getpriority answers the nice value itself.
func fromKernel(p int) int { return p }
