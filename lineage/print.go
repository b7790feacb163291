package lineage

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"tuttid/ent"
)

// PrintFormats are the formats Print writes (`tuttid tree --format`).
func PrintFormats() []string { return []string{"text", "json", "dot"} }

// PrintOptions says how Print writes fork trees.
type PrintOptions struct {
	// Format is one of PrintFormats; "" is text.
	Format string
	// WorkspaceID names the dot graph.
	WorkspaceID string
	// Untitled stands for a session without a title (text and dot).
	Untitled string
	// Code is the code side of the sessions that have one (in a git
	// repository), by session id; text shows each worktree and the files it
	// changed, json a "code" object (absent for the others).
	Code map[string]Code
}

// Code is what the tree shows of a session's code.
type Code struct {
	// Mode is SHARED or WORKTREE.
	Mode string `json:"mode"`
	// WorktreePath is the worktree tuttid made (WORKTREE).
	WorktreePath string `json:"worktreePath,omitempty"`
	// WorktreePresent is false while an archived worktree is removed.
	WorktreePresent bool `json:"worktreePresent"`
	// FilesChanged counts the files its changes hold (against its base for
	// WORKTREE, HEAD for SHARED); nil when they could not be read.
	FilesChanged *int `json:"filesChanged"`
}

// Print writes nodes, as Tree and Forest lay them out (depth-first), in
// the format of api-contract.md's "Lineage tooling":
//   - text: one session a line, indented two spaces per depth,
//     `<title> [<status>] <id>`;
//   - json: an array of root nodes, each with its children;
//   - dot: a Graphviz digraph, one node per session, an edge parent ->
//     child labelled with the fork's lastTurnId, or "whole".
func Print(out io.Writer, nodes []Node, o PrintOptions) error {
	switch o.Format {
	case "", "text":
		return printText(out, nodes, o.Untitled, o.Code)
	case "json":
		return printJSON(out, nodes, o.Code)
	case "dot":
		return printDOT(out, nodes, o)
	}
	return fmt.Errorf("lineage: unknown print format %q", o.Format)
}

// WithoutArchived leaves out archived sessions and everything below them
// (nodes are depth-first, so a subtree is the run of deeper nodes after
// its root).
func WithoutArchived(nodes []Node) []Node {
	out := make([]Node, 0, len(nodes))
	skipBelow := -1 // depth of the archived session being skipped
	for _, n := range nodes {
		if skipBelow >= 0 && n.Depth > skipBelow {
			continue
		}
		skipBelow = -1
		if n.Session.Archived {
			skipBelow = n.Depth
			continue
		}
		out = append(out, n)
	}
	return out
}

// oneLineTitle is a session's title on one line, or untitled, with its
// control characters escaped (terminalSafe).
func oneLineTitle(a *ent.AgentSession, untitled string) string {
	if a.Title == "" {
		return untitled
	}
	return terminalSafe(strings.Join(strings.Fields(a.Title), " "))
}

// terminalSafe escapes what a terminal would act on instead of showing:
// control characters (ESC starts an escape sequence that can rewrite the
// screen or the window title; NUL, BEL, C1 controls, DEL) as \xNN or
// \uNNNN, and the bidirectional overrides that reorder what is shown.
// The text and dot formats print stored titles and ids through it; json
// through jsonTerminalSafe.
func terminalSafe(s string) string {
	if !strings.ContainsFunc(s, unsafeRune) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !unsafeRune(r):
			b.WriteRune(r)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || r == utf8.RuneError ||
		(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) // bidi embeddings, overrides, isolates
}

func printText(out io.Writer, nodes []Node, untitled string, code map[string]Code) error {
	var b strings.Builder
	for _, n := range nodes {
		fmt.Fprintf(&b, "%s%s [%s] %s%s\n", strings.Repeat("  ", n.Depth), oneLineTitle(n.Session, untitled),
			terminalSafe(string(n.Session.Status)), terminalSafe(n.Session.ID), codeText(code, n.Session.ID))
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// codeText is a WORKTREE session's suffix on its text line: its own
// worktree and how many files it changed; "" for the others.
func codeText(code map[string]Code, id string) string {
	c, ok := code[id]
	if !ok || c.Mode != "WORKTREE" {
		return ""
	}
	where := "worktree " + terminalSafe(c.WorktreePath)
	if !c.WorktreePresent {
		where += " (archived)"
	}
	switch {
	case c.FilesChanged == nil:
		return " {" + where + ", changes unknown}"
	case *c.FilesChanged == 1:
		return " {" + where + ", 1 file changed}"
	default:
		return fmt.Sprintf(" {%s, %d files changed}", where, *c.FilesChanged)
	}
}

// jsonNode is one node of the json format.
type jsonNode struct {
	ID                string      `json:"id"`
	Title             string      `json:"title"`
	Status            string      `json:"status"`
	ProviderSessionID string      `json:"providerSessionId"`
	LastTurnID        *string     `json:"lastTurnId"` // null for a root and a whole-conversation fork
	Archived          bool        `json:"archived"`
	Code              *Code       `json:"code,omitempty"` // absent outside a repository
	Children          []*jsonNode `json:"children"`
}

func printJSON(out io.Writer, nodes []Node, code map[string]Code) error {
	roots := []*jsonNode{}
	var path []*jsonNode // path[d] is the last node seen at depth d
	for _, n := range nodes {
		j := &jsonNode{ID: n.Session.ID, Title: n.Session.Title, Status: string(n.Session.Status),
			ProviderSessionID: n.Session.ProviderSessionID, Archived: n.Session.Archived, Children: []*jsonNode{}}
		if n.Fork != nil && n.Fork.ForkTurnID != "" {
			j.LastTurnID = &n.Fork.ForkTurnID
		}
		if c, ok := code[n.Session.ID]; ok {
			j.Code = &c
		}
		path = append(path[:min(n.Depth, len(path))], j)
		if n.Depth == 0 || len(path) < 2 {
			roots = append(roots, j)
			continue
		}
		parent := path[len(path)-2]
		parent.Children = append(parent.Children, j)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(roots); err != nil {
		return err
	}
	_, err := io.WriteString(out, jsonTerminalSafe(b.String()))
	return err
}

// jsonTerminalSafe escapes, as JSON's \uNNNN, what encoding/json leaves
// raw and a terminal acts on: DEL, the C1 controls, the bidi overrides.
// They can only be inside strings, where the escape means the same.
func jsonTerminalSafe(s string) string {
	if !strings.ContainsFunc(s, unsafeRune) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r >= 0x7f && unsafeRune(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func printDOT(out io.Writer, nodes []Node, o PrintOptions) error {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n  node [shape=box];\n", dotQuote(terminalSafe("tuttid "+o.WorkspaceID)))
	for _, n := range nodes {
		label := oneLineTitle(n.Session, o.Untitled) + "\n[" + string(n.Session.Status) + "]"
		fmt.Fprintf(&b, "  %s [label=%s];\n", dotQuote(terminalSafe(n.Session.ID)), dotQuote(label))
	}
	for _, n := range nodes {
		if n.Fork == nil {
			continue
		}
		label := "whole"
		if n.Fork.ForkTurnID != "" {
			label = n.Fork.ForkTurnID
		}
		fmt.Fprintf(&b, "  %s -> %s [label=%s];\n", dotQuote(terminalSafe(n.ParentID)), dotQuote(terminalSafe(n.Session.ID)), dotQuote(terminalSafe(label)))
	}
	b.WriteString("}\n")
	_, err := io.WriteString(out, b.String())
	return err
}

// dotQuote is a DOT string: only `"` and `\` are escaped ("\n" is DOT's
// own line break in a label).
func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}
