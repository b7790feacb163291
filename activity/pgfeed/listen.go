package pgfeed

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"tuttid/activity"
)

// channel is the NOTIFY channel; a payload is "workspace seq".
const channel = "tuttid_activity"

// listen keeps a LISTEN connection open until ctx ends: at each
// (re)connection it catches up every started workspace from the table
// (notifications sent while it was away are lost, the rows are not), then
// brings a workspace up to date at each notification.
func (f *Feed) listen(ctx context.Context) {
	backoff := 50 * time.Millisecond
	lost := false // logged once an outage, not at each attempt
	for ctx.Err() == nil {
		err := f.listenOnce(ctx, func() {
			backoff = 50 * time.Millisecond
			if lost {
				f.log.InfoContext(ctx, "activity: listening again, caught up")
				lost = false
			}
		})
		if ctx.Err() != nil {
			return
		}
		if !lost {
			f.log.WarnContext(ctx, "activity: LISTEN connection lost; reconnecting", "err", err)
			lost = true
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return
		}
		backoff = min(2*backoff, time.Second)
	}
}

// listenOnce runs one LISTEN connection until it fails; connected is
// called once it listens and has caught up.
func (f *Feed) listenOnce(ctx context.Context, connected func()) error {
	conn, err := pgx.Connect(ctx, f.url)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
		return err
	}
	for _, ws := range f.started() {
		if err := f.advance(ctx, ws, 1<<62, nil); err != nil {
			return err
		}
	}
	connected()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		ws, seq, e, err := parse(n.Payload)
		if err != nil {
			f.log.WarnContext(ctx, "activity: notification not understood", "err", err)
			continue
		}
		if err := f.advance(ctx, ws, seq, e); err != nil {
			return err
		}
	}
}

// parse reads a notification (see insert): the workspace, the seq, and the
// event when it came inline (else nil: it is read from the table).
func parse(payload string) (ws string, seq int64, e *activity.Event, err error) {
	ws, rest, ok := strings.Cut(payload, " ")
	seqText, rest, inline := strings.Cut(rest, " ")
	if seq, err = strconv.ParseInt(seqText, 10, 64); !ok || err != nil {
		return "", 0, nil, fmt.Errorf("no workspace and seq in %.80q", payload)
	}
	if !inline {
		return ws, seq, nil, nil
	}
	atText, body, _ := strings.Cut(rest, " ")
	micros, err := strconv.ParseInt(atText, 10, 64)
	if err != nil {
		return "", 0, nil, fmt.Errorf("no time in the notification of %s %d", ws, seq)
	}
	ev, err := decode(seq, time.UnixMicro(micros), []byte(body))
	if err != nil {
		return "", 0, nil, err
	}
	return ws, seq, &ev, nil
}
