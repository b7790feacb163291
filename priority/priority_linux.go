package priority

// fromKernel: Linux's getpriority system call answers 20-nice (1..40, so
// that no answer is negative); the C library converts, Go's syscall does
// not.
func fromKernel(p int) int { return 20 - p }
