package apperr_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"tuttid/apperr"
)

func TestAbandoned(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	timedOut, stop := context.WithTimeout(context.Background(), 0)
	defer stop()
	<-timedOut.Done()
	storage := apperr.Storage(fmt.Errorf("read: %w", context.Canceled), "read the session's code")
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		want bool
	}{
		{"the client went away", canceled, storage, true},
		{"the cancellation unwrapped", canceled, context.Canceled, true},
		{"the request still open", context.Background(), storage, false},
		{"another failure after the client went", canceled, apperr.Storage(errors.New("disk I/O error"), "read"), false},
		{"a deadline is no client leaving", timedOut, apperr.Storage(context.DeadlineExceeded, "read"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := apperr.Abandoned(tc.ctx, tc.err); got != tc.want {
				t.Errorf("Abandoned = %v, want %v", got, tc.want)
			}
		})
	}
}
