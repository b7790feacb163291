package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"tuttid/instance"
	"tuttid/store"
)

// instancesCommand is `tuttid instances [--json]`: the tuttid instances
// registered in the database (--db), each with its advertise URL, last
// heartbeat and the sessions it owns (api-contract.md, "Past one machine").
func instancesCommand() command {
	return command{name: "instances", usage: "instances [--json] [--db FILE|URL]", setup: func(f *flags) runFunc {
		c := instancesConfig{}
		c.db = f.db()
		c.json = f.Bool("json", false, "print one JSON array")
		return c.run
	}}
}

type instancesConfig struct {
	db   *string
	json *bool
}

func (c instancesConfig) run(ctx context.Context, out stdio, args []string) error {
	if len(args) > 0 {
		return usageError{error: fmt.Errorf("unexpected argument %q", args[0])}
	}
	// Reading beside running servers: nothing created, nothing migrated.
	st, err := store.Open(ctx, *c.db, store.ReadOnly)
	if err != nil {
		return fmt.Errorf("database %s: %w", store.Redact(*c.db), err)
	}
	defer st.Close()
	list, err := instance.List(ctx, st.Client, time.Now())
	if err != nil {
		return err
	}
	return printInstances(out.stdout, list, *c.json)
}

// printInstances writes one instance a line
// (`<id> <advertiseUrl> <lastHeartbeat RFC 3339> <up|down> <sessions owned>`)
// or one JSON array.
func printInstances(out io.Writer, list []instance.Info, asJSON bool) error {
	if asJSON {
		if list == nil {
			list = []instance.Info{}
		}
		return json.NewEncoder(out).Encode(list)
	}
	for _, i := range list {
		state := "up"
		if !i.Alive {
			state = "down"
		}
		if _, err := fmt.Fprintf(out, "%s %s %s %s %d\n", i.ID, i.AdvertiseURL,
			i.HeartbeatAt.UTC().Format(time.RFC3339), state, i.Sessions); err != nil {
			return err
		}
	}
	return nil
}
