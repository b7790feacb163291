package fork_test

import (
	"fmt"
	"slices"
	"testing"

	"tuttid/ent/turn"
	"tuttid/fork"
	"tuttid/sessionread"
	"tuttid/store/storetest"
)

func TestForkTitleRules(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(e *env) // seeds the parent and whatever else
		// forks are run in order; each is (source, explicit title or nil).
		forks []titleFork
		want  []string
	}{
		{
			name:  "default title is <parent title>(fork1)",
			setup: func(e *env) { e.st.Session(defaultParent()) },
			forks: []titleFork{{source: parentID}},
			want:  []string{"Build login(fork1)"},
		},
		{
			name:  "repeated direct forks count up",
			setup: func(e *env) { e.st.Session(defaultParent()) },
			forks: []titleFork{{source: parentID}, {source: parentID}, {source: parentID}},
			want:  []string{"Build login(fork1)", "Build login(fork2)", "Build login(fork3)"},
		},
		{
			name: "a title already taken in the workspace is skipped",
			setup: func(e *env) {
				e.st.Session(defaultParent())
				e.st.Session(storetest.Session{ID: "other", Workspace: wsID, Title: "Build login(fork1)", Thread: "thread-other"})
			},
			forks: []titleFork{{source: parentID}, {source: parentID}},
			want:  []string{"Build login(fork2)", "Build login(fork3)"},
		},
		{
			name: "numbers are not reused while a higher one exists (fork1 deleted, fork2 kept)",
			setup: func(e *env) {
				e.st.Session(defaultParent())
				e.st.Session(storetest.Session{ID: "kept", Workspace: wsID, Title: "Build login(fork2)", Thread: "thread-kept"})
			},
			forks: []titleFork{{source: parentID}, {source: parentID}},
			want:  []string{"Build login(fork3)", "Build login(fork4)"},
		},
		{
			name: "only <base>(fork<num>) titles of exactly that base count",
			setup: func(e *env) {
				e.st.Session(defaultParent())
				e.st.Session(storetest.Session{ID: "case", Workspace: wsID, Title: "build login(fork7)", Thread: "thread-case"})
				e.st.Session(storetest.Session{ID: "nested", Workspace: wsID, Title: "Build login(fork9)(fork1)", Thread: "thread-nested"})
				e.st.Session(storetest.Session{ID: "words", Workspace: wsID, Title: "Build login(forkX)", Thread: "thread-words"})
			},
			forks: []titleFork{{source: parentID}},
			want:  []string{"Build login(fork1)"},
		},
		{
			name: "a title taken in another workspace does not count",
			setup: func(e *env) {
				e.st.Session(defaultParent())
				e.st.Session(storetest.Session{ID: "elsewhere", Workspace: otherWsID, Title: "Build login(fork1)", Thread: "thread-elsewhere"})
			},
			forks: []titleFork{{source: parentID}},
			want:  []string{"Build login(fork1)"},
		},
		{
			name: "untitled parent uses the first line of its first user message",
			setup: func(e *env) {
				p := defaultParent()
				p.Title = ""
				p.Turns = []storetest.Turn{{ID: "t1", Status: turn.StatusCOMPLETED, Messages: []storetest.Message{
					{ID: "a0", Role: "assistant", Text: "Hello"},
					{ID: "u1", Role: "user", Text: "\n  Fix the   flaky test\nIt fails on CI"},
					{ID: "u2", Role: "user", Text: "Second request"},
				}}}
				e.st.Session(p)
			},
			forks: []titleFork{{source: parentID}, {source: parentID}},
			want:  []string{"Fix the flaky test(fork1)", "Fix the flaky test(fork2)"},
		},
		{
			name: "untitled parent without user messages is Untitled session",
			setup: func(e *env) {
				p := defaultParent()
				p.Title = ""
				p.Turns = nil
				e.st.Session(p)
			},
			forks: []titleFork{{source: parentID}},
			want:  []string{sessionread.UntitledTitle + "(fork1)"},
		},
		{
			name:  "explicit title is used as given without a suffix",
			setup: func(e *env) { e.st.Session(defaultParent()) },
			forks: []titleFork{{source: parentID, title: ptr("Try OAuth instead")}},
			want:  []string{"Try OAuth instead"},
		},
		{
			name: "explicit title equal to an existing title is still used as given",
			setup: func(e *env) {
				e.st.Session(defaultParent())
			},
			forks: []titleFork{{source: parentID, title: ptr(parentTitle)}},
			want:  []string{parentTitle},
		},
		{
			name:  "fork of a fork appends to the forked title",
			setup: func(e *env) { e.st.Session(defaultParent()) },
			forks: []titleFork{{source: parentID}, {source: "$0"}, {source: "$1"}},
			want:  []string{"Build login(fork1)", "Build login(fork1)(fork1)", "Build login(fork1)(fork1)(fork1)"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			c.setup(e)
			var ids, got []string
			for i, f := range c.forks {
				src := f.source
				var k int
				if _, err := fmt.Sscanf(src, "$%d", &k); err == nil {
					src = ids[k] // a child made by an earlier fork
				}
				res := e.mustFork(titleInput(src, fmt.Sprintf("req-%d", i), f.title))
				ids = append(ids, res.Session.ID)
				got = append(got, e.session(res.Session.ID).Title)
				if res.Session.Title != got[i] {
					t.Errorf("result title %q differs from the stored %q", res.Session.Title, got[i])
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("titles = %s, want %s", fmtTitles(got), fmtTitles(c.want))
			}
			// The runtime was given the same titles.
			var rtTitles []string
			for _, in := range e.rt.ForkInputs() {
				rtTitles = append(rtTitles, in.Title)
			}
			if !slices.Equal(rtTitles, c.want) {
				t.Errorf("runtime titles = %s, want %s", fmtTitles(rtTitles), fmtTitles(c.want))
			}
		})
	}
}

type titleFork struct {
	source string // a session id, or "$k" for the child of the k-th fork
	title  *string
}

func titleInput(source, requestID string, title *string) (in fork.Input) {
	in = input(requestID)
	in.ParentSessionID = source
	in.Title = title
	return in
}
