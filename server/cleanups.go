package server

import "errors"

// cleanups undoes what New opened, the last first, when a later step of
// the assembly fails.
type cleanups []func() error

func (c *cleanups) push(f func() error) { *c = append(*c, f) }

// run calls every cleanup in reverse order and joins their errors.
func (c *cleanups) run() error {
	var errs []error
	for i := len(*c) - 1; i >= 0; i-- {
		errs = append(errs, (*c)[i]())
	}
	*c = nil
	return errors.Join(errs...)
}
