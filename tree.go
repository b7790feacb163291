package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"tuttid/apperr"
	"tuttid/codebranch"
	"tuttid/ent"
	"tuttid/ent/workspace"
	"tuttid/lineage"
	"tuttid/sessionread"
	"tuttid/store"
)

// treeCommand is `tuttid tree`: a workspace's fork trees (api-contract.md,
// "Lineage tooling"), read from the database beside a running server.
// An unknown workspace or session exits 2.
func treeCommand() command {
	return command{name: "tree", usage: "tree --workspace ID [--session ID] [--format text|json|dot] [--archived] [--db FILE]", setup: func(f *flags) runFunc {
		var c treeConfig
		c.db = f.db()
		c.workspace = f.String("workspace", "", "workspace id (required)")
		c.session = f.String("session", "", "only the tree this session belongs to, from its root")
		c.format = f.String("format", "text", "text, json or dot")
		c.archived = f.Bool("archived", false, "include archived sessions (left out by default, with their forks)")
		return c.run
	}}
}

type treeConfig struct {
	db, workspace, session, format *string
	archived                       *bool
}

func (c treeConfig) run(ctx context.Context, out stdio, args []string) error {
	if len(args) > 0 {
		return usageError{error: fmt.Errorf("unexpected argument %q", args[0])}
	}
	if *c.format == "" {
		*c.format = "text"
	}
	if !slices.Contains(lineage.PrintFormats(), *c.format) {
		return usageError{error: apperr.New(apperr.InvalidInput, "--format %q is not one of %s", *c.format, strings.Join(lineage.PrintFormats(), ", "))}
	}
	if *c.workspace == "" {
		return usageError{error: apperr.New(apperr.InvalidInput, "--workspace is required")}
	}
	st, err := store.Open(ctx, *c.db, store.ReadOnly)
	if err != nil {
		return fmt.Errorf("open the database %s: %w", store.Redact(*c.db), err)
	}
	defer st.Close()
	nodes, err := c.read(ctx, st.Client)
	if err != nil {
		if code := apperr.CodeOf(err); code == apperr.WorkspaceNotFound || code == apperr.SessionNotFound {
			return usageError{error: err}
		}
		return err
	}
	if !*c.archived {
		// A session asked for by name is shown, archived or not: then
		// its tree is printed whole.
		kept := lineage.WithoutArchived(nodes)
		if *c.session == "" || slices.ContainsFunc(kept, func(n lineage.Node) bool { return n.Session.ID == *c.session }) {
			nodes = kept
		}
	}
	code, err := treeCode(ctx, st, nodes)
	if err != nil {
		return err
	}
	return lineage.Print(out.stdout, nodes, lineage.PrintOptions{Format: *c.format, WorkspaceID: *c.workspace,
		Untitled: sessionread.UntitledTitle, Code: code})
}

// treeCode is the code of the sessions shown that are in a repository:
// which have a worktree of their own, and how many files each changed.
func treeCode(ctx context.Context, st *store.Store, nodes []lineage.Node) (map[string]lineage.Code, error) {
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		ids[i] = n.Session.ID
	}
	sums, err := codebranch.New(codebranch.Config{Store: st, Logger: slog.New(slog.DiscardHandler)}).Summaries(ctx, ids)
	if err != nil {
		return nil, apperr.Storage(err, "read the sessions' code")
	}
	code := make(map[string]lineage.Code, len(sums))
	for id, s := range sums {
		c := lineage.Code{Mode: s.Mode, WorktreePath: s.WorktreePath, WorktreePresent: s.WorktreePresent}
		if s.FilesChanged >= 0 {
			n := s.FilesChanged
			c.FilesChanged = &n
		}
		code[id] = c
	}
	return code, nil
}

// read is the workspace's trees, or the tree of --session.
func (c treeConfig) read(ctx context.Context, db *ent.Client) ([]lineage.Node, error) {
	ok, err := db.Workspace.Query().Where(workspace.ID(*c.workspace)).Exist(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "read the workspace")
	}
	if !ok {
		return nil, apperr.New(apperr.WorkspaceNotFound, "workspace %q does not exist", *c.workspace)
	}
	var nodes []lineage.Node
	if *c.session == "" {
		nodes, err = lineage.Forest(ctx, db, *c.workspace)
	} else {
		nodes, err = lineage.Tree(ctx, db, *c.workspace, *c.session)
	}
	if err != nil {
		return nil, apperr.Storage(err, "read the fork trees")
	}
	if *c.session != "" && len(nodes) == 0 {
		return nil, apperr.New(apperr.SessionNotFound, "session %q does not exist in workspace %q", *c.session, *c.workspace)
	}
	return nodes, nil
}
