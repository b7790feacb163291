package lineage_test

import (
	"slices"
	"strings"
	"testing"

	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/lineage"
)

// printTree is r (titled, two lines) with a fork c of r at turn t1 and a
// whole-conversation fork w of c, untitled and archived.
func printTree() []lineage.Node {
	r := &ent.AgentSession{ID: "r", Title: "Root\n  task", Status: agentsession.StatusREADY, ProviderSessionID: "th-r"}
	c := &ent.AgentSession{ID: "c", Title: `say "hi" \ bye`, Status: agentsession.StatusWORKING, ProviderSessionID: "th-c"}
	w := &ent.AgentSession{ID: "w", Status: agentsession.StatusREADY, ProviderSessionID: "th-w", Archived: true}
	return []lineage.Node{
		{Session: r},
		{Session: c, ParentID: "r", Depth: 1, Fork: &ent.SessionFork{ForkTurnID: "t1"}},
		{Session: w, ParentID: "c", Depth: 2, Fork: &ent.SessionFork{}},
	}
}

func TestPrint(t *testing.T) {
	for _, tc := range []struct {
		format string
		want   string
	}{
		{"text", "Root task [READY] r\n  say \"hi\" \\ bye [WORKING] c\n    Untitled [READY] w\n"},
		{"", "Root task [READY] r\n  say \"hi\" \\ bye [WORKING] c\n    Untitled [READY] w\n"},
		{"json", `[
  {
    "id": "r",
    "title": "Root\n  task",
    "status": "READY",
    "providerSessionId": "th-r",
    "lastTurnId": null,
    "archived": false,
    "children": [
      {
        "id": "c",
        "title": "say \"hi\" \\ bye",
        "status": "WORKING",
        "providerSessionId": "th-c",
        "lastTurnId": "t1",
        "archived": false,
        "children": [
          {
            "id": "w",
            "title": "",
            "status": "READY",
            "providerSessionId": "th-w",
            "lastTurnId": null,
            "archived": true,
            "children": []
          }
        ]
      }
    ]
  }
]
`},
		{"dot", `digraph "tuttid ws" {
  node [shape=box];
  "r" [label="Root task\n[READY]"];
  "c" [label="say \"hi\" \\ bye\n[WORKING]"];
  "w" [label="Untitled\n[READY]"];
  "r" -> "c" [label="t1"];
  "c" -> "w" [label="whole"];
}
`},
	} {
		t.Run(tc.format, func(t *testing.T) {
			var b strings.Builder
			if err := lineage.Print(&b, printTree(), lineage.PrintOptions{Format: tc.format, WorkspaceID: "ws", Untitled: "Untitled"}); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
	if err := lineage.Print(&strings.Builder{}, printTree(), lineage.PrintOptions{Format: "svg"}); err == nil {
		t.Error("format svg: no error")
	}
}

func TestWithoutArchived(t *testing.T) {
	nodes := printTree()
	nodes[1].Session.Archived = true // c: leaves out c and w below it
	nodes = append(nodes, lineage.Node{Session: &ent.AgentSession{ID: "s"}, ParentID: "r", Depth: 1})
	var got []string
	for _, n := range lineage.WithoutArchived(nodes) {
		got = append(got, n.Session.ID)
	}
	if want := []string{"r", "s"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestPrintEscapesControlCharacters: a title or id with ESC, BEL, NUL, a
// C1 control or a bidi override reaches the terminal escaped, in every
// format: no escape sequence of a stored title runs in the terminal of
// the person who prints the tree (issue 22, 20).
func TestPrintEscapesControlCharacters(t *testing.T) {
	r := &ent.AgentSession{ID: "r\x1b[2J", Title: "evil\x1b]0;owned\x07\x00 \u009b31m \u202egnp.exe", Status: agentsession.StatusREADY}
	c := &ent.AgentSession{ID: "c", Title: "plain", Status: agentsession.StatusREADY}
	nodes := []lineage.Node{{Session: r}, {Session: c, ParentID: r.ID, Depth: 1, Fork: &ent.SessionFork{ForkTurnID: "t\x1b1"}}}
	for _, tc := range []struct {
		format string
		want   []string // shown escaped
	}{
		{"text", []string{`evil\x1b]0;owned\x07\x00 \u009b31m \u202egnp.exe [READY] r\x1b[2J`, "  plain [READY] c\n"}},
		{"dot", []string{`"r\\x1b[2J" [label="evil\\x1b]0;owned\\x07\\x00`, `-> "c" [label="t\\x1b1"]`}},
		{"json", []string{`"id": "r\u001b[2J"`, `\u001b]0;owned\u0007\u0000 \u009b31m \u202egnp.exe`}},
	} {
		t.Run(tc.format, func(t *testing.T) {
			var b strings.Builder
			if err := lineage.Print(&b, nodes, lineage.PrintOptions{Format: tc.format, WorkspaceID: "w\x1b", Untitled: "Untitled"}); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			for _, r := range out {
				if r != '\n' && (r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0)) {
					t.Errorf("raw control character %U in:\n%q", r, out)
				}
				if r == '\u202e' {
					t.Errorf("raw bidi override in:\n%q", out)
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}
