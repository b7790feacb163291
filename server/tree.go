package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/workspace"
	"tuttid/lineage"
	"tuttid/session"
	"tuttid/store"
)

// treeFormats are the output formats of `tuttid tree`.
var treeFormats = []string{"text", "json", "dot"}

// TreeConfig configures `tuttid tree`.
type TreeConfig struct {
	DBPath      string
	WorkspaceID string
	SessionID   string // "": every tree of the workspace
	Format      string // text (the default), json or dot
	// Archived includes archived sessions; by default an archived session
	// is left out with everything forked from it, unless SessionID is one
	// of them.
	Archived bool
}

// PrintTree prints a workspace's fork trees (api-contract.md, "Lineage
// tooling"), reading the database only, so it runs beside a server. An
// unknown workspace or session is agent.workspace_not_found or
// agent.session_not_found.
func PrintTree(ctx context.Context, cfg TreeConfig, out io.Writer) error {
	format := cfg.Format
	if format == "" {
		format = "text"
	}
	if !slices.Contains(treeFormats, format) {
		return apperr.New(apperr.InvalidInput, "--format %q is not one of %s", format, strings.Join(treeFormats, ", "))
	}
	if cfg.WorkspaceID == "" {
		return apperr.New(apperr.InvalidInput, "--workspace is required")
	}
	st, err := store.OpenReadOnly(ctx, cfg.DBPath)
	if err != nil {
		return fmt.Errorf("open the database %s: %w", cfg.DBPath, err)
	}
	defer st.Close()
	nodes, err := readTree(ctx, st.Client, cfg)
	if err != nil {
		return err
	}
	if !cfg.Archived {
		// A session asked for by name is shown, archived or not: then
		// its tree is printed whole.
		if kept := withoutArchived(nodes); cfg.SessionID == "" || hasSession(kept, cfg.SessionID) {
			nodes = kept
		}
	}
	switch format {
	case "json":
		return writeTreeJSON(out, nodes)
	case "dot":
		return writeTreeDOT(out, cfg.WorkspaceID, nodes)
	default:
		return writeTreeText(out, nodes)
	}
}

func readTree(ctx context.Context, c *ent.Client, cfg TreeConfig) ([]lineage.Node, error) {
	ok, err := c.Workspace.Query().Where(workspace.ID(cfg.WorkspaceID)).Exist(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "read the workspace")
	}
	if !ok {
		return nil, apperr.New(apperr.WorkspaceNotFound, "workspace %q does not exist", cfg.WorkspaceID)
	}
	var nodes []lineage.Node
	if cfg.SessionID == "" {
		nodes, err = lineage.Forest(ctx, c, cfg.WorkspaceID)
	} else {
		nodes, err = lineage.Tree(ctx, c, cfg.WorkspaceID, cfg.SessionID)
	}
	if err != nil {
		return nil, apperr.Storage(err, "read the fork trees")
	}
	if cfg.SessionID != "" && len(nodes) == 0 {
		return nil, apperr.New(apperr.SessionNotFound, "session %q does not exist in workspace %q", cfg.SessionID, cfg.WorkspaceID)
	}
	return nodes, nil
}

// withoutArchived leaves out archived sessions and everything below them
// (nodes are depth-first, so a subtree is the run of deeper nodes after
// its root).
func withoutArchived(nodes []lineage.Node) []lineage.Node {
	out := make([]lineage.Node, 0, len(nodes))
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

func hasSession(nodes []lineage.Node, id string) bool {
	return slices.ContainsFunc(nodes, func(n lineage.Node) bool { return n.Session.ID == id })
}

func textTitle(a *ent.AgentSession) string {
	if a.Title == "" {
		return session.UntitledTitle
	}
	return strings.Join(strings.Fields(a.Title), " ") // one line
}

// writeTreeText: one session a line, indented two spaces per depth,
// `<title> [<status>] <id>`.
func writeTreeText(out io.Writer, nodes []lineage.Node) error {
	var b strings.Builder
	for _, n := range nodes {
		fmt.Fprintf(&b, "%s%s [%s] %s\n", strings.Repeat("  ", n.Depth), textTitle(n.Session), n.Session.Status, n.Session.ID)
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// treeJSON is one node of the json format.
type treeJSON struct {
	ID                string      `json:"id"`
	Title             string      `json:"title"`
	Status            string      `json:"status"`
	ProviderSessionID string      `json:"providerSessionId"`
	LastTurnID        *string     `json:"lastTurnId"` // null for a root and a whole-conversation fork
	Archived          bool        `json:"archived"`
	Children          []*treeJSON `json:"children"`
}

// writeTreeJSON: an array of root nodes, each with its children.
func writeTreeJSON(out io.Writer, nodes []lineage.Node) error {
	roots := []*treeJSON{}
	var path []*treeJSON // path[d] is the last node seen at depth d
	for _, n := range nodes {
		j := &treeJSON{ID: n.Session.ID, Title: n.Session.Title, Status: string(n.Session.Status),
			ProviderSessionID: n.Session.ProviderSessionID, Archived: n.Session.Archived, Children: []*treeJSON{}}
		if n.Fork != nil && n.Fork.ForkTurnID != "" {
			j.LastTurnID = &n.Fork.ForkTurnID
		}
		path = append(path[:min(n.Depth, len(path))], j)
		if n.Depth == 0 || len(path) < 2 {
			roots = append(roots, j)
			continue
		}
		parent := path[len(path)-2]
		parent.Children = append(parent.Children, j)
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(roots)
}

// writeTreeDOT: a Graphviz digraph, one node per session, an edge parent
// -> child labelled with the fork's lastTurnId, or "whole".
func writeTreeDOT(out io.Writer, workspaceID string, nodes []lineage.Node) error {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n  node [shape=box];\n", dotQuote("tuttid "+workspaceID))
	for _, n := range nodes {
		label := textTitle(n.Session) + "\n[" + string(n.Session.Status) + "]"
		fmt.Fprintf(&b, "  %s [label=%s];\n", dotQuote(n.Session.ID), dotQuote(label))
	}
	for _, n := range nodes {
		if n.Fork == nil {
			continue
		}
		label := "whole"
		if n.Fork.ForkTurnID != "" {
			label = n.Fork.ForkTurnID
		}
		fmt.Fprintf(&b, "  %s -> %s [label=%s];\n", dotQuote(n.ParentID), dotQuote(n.Session.ID), dotQuote(label))
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
