package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"tuttid/session"
)

// TestCrashAfterTurnStart kills tuttid (SIGKILL, at session.CrashTurnStartSent)
// right after turn/start is written, before Codex's reply is read, and
// checks that after a restart tuttid and Codex agree: no turn is left
// running or pending, the session is READY, and the next request to the
// model carries exactly the prompts the person sees.
//
// "codex outlives tuttid" runs Codex under a shell pipeline that keeps its
// stdin open 3 s after tuttid died (the parent-death signal reaches only
// the shell), so that Codex goes on to record the turn, as it did when it
// outlived tuttid: the turn is visible with the user's text, settled. Before the pending turn,
// tuttid had no record of it while Codex did. "codex dies with tuttid":
// Codex never records the turn, and the pending turn is removed.
func TestCrashAfterTurnStart(t *testing.T) {
	for _, outlives := range []bool{true, false} {
		name := "codex dies with tuttid"
		if outlives {
			name = "codex outlives tuttid"
		}
		t.Run(name, func(t *testing.T) {
			r := newCrashRig(t)
			p := r.tuttid()
			ws, parent := r.parent(p)
			p.kill()

			bin := r.bin
			if outlives {
				bin = filepath.Join(lingeringTempDir(t), "codex-under-sh")
				script := "#!/bin/sh\nexec setsid -w sh -c '(cat; sleep 3) | \"$0\" \"$@\" | (cat; cat >/dev/null)' " + r.bin + " \"$@\"\n"
				if err := os.WriteFile(bin, []byte(script), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			c := startTuttid(t, r.db, bin, r.home, "TUTTID_CRASH_AT="+session.CrashTurnStartSent)
			if errs, err := c.gql(`mutation($in: SendMessageInput!) { sendMessage(input: $in) { id } }`,
				map[string]any{"in": map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "text": "lost prompt"}}, nil); err == nil {
				t.Fatalf("sendMessage answered (%v) although tuttid should have died after turn/start", errs)
			}
			c.waitExit(10 * time.Second)
			if outlives {
				time.Sleep(5 * time.Second) // Codex records the turn, reads EOF and exits
			}

			q := r.tuttid()
			r.journalAndMessages()
			s := q.session(ws, parent.ID)
			t.Logf("after the restart: %s, turns %+v", s.Status, s.Turns)
			if s.Status != "READY" {
				t.Errorf("session %s after the restart, want READY", s.Status)
			}
			var shown []string // the user texts tuttid shows, in order
			for _, tr := range s.Turns {
				if tr.Status == "IN_PROGRESS" {
					t.Errorf("turn %s still IN_PROGRESS after the restart", tr.ID)
				}
				for _, m := range tr.Messages {
					if m.Role == "user" {
						shown = append(shown, m.Text)
					}
				}
			}
			if got := slices.Contains(shown, "lost prompt"); got != outlives {
				t.Errorf("the user's text visible after the restart: %v (texts %q), want %v", got, shown, outlives)
			}
			q.send(ws, parent.ID, "next")
			q.waitSession(ws, parent.ID, "next turn done", func(s sessionView) bool {
				last := s.Turns[len(s.Turns)-1]
				return idle(s) && last.Status == "COMPLETED" && len(last.Messages) >= 2
			})
			reqs := r.model.Requests()
			atModel := reqs[len(reqs)-1].UserTexts()
			if shown = append(shown, "next"); !slices.Equal(atModel, shown) {
				t.Errorf("the model was sent %q, the person sees %q", atModel, shown)
			}
		})
	}
}
