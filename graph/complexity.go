package graph

import (
	"context"
	"fmt"
	"reflect"

	"github.com/99designs/gqlgen/complexity"
	"github.com/vektah/gqlparser/v2"

	"tuttid/explore"
	"tuttid/graph/generated"
)

// The complexity limit prices each field at what its resolver reads, in
// units of about 20 µs of tuttid's CPU, so that an operation at the limit
// costs about a second however it spends it (server's
// BenchmarkComplexityLimit measures the worst ones; docs/performance.md).
// A plain field costs 1 (gqlgen's default, more than it takes); what reads
// rows, git or Codex costs what it was measured to take on the largest
// data the API lists: 8 branches an exploration, 20 explorations listed,
// 20 checks a branch of 64 KiB of output each, pages of up to 500 rows
// and their bytes (8 MiB of messages, 4 MiB a page of turns with theirs,
// 16 MiB a turns list), worktrees of a repository of 1,000 files. A list
// the API does not bound (a session's approvals, a turn's messages, a
// lineage) is costed as assumedRows of them.
const (
	complexityLimit = 50_000

	// costRow: one row read by its key (a session, a workspace): 0.1-0.5
	// ms with the answer's encoding.
	costRow = 10
	// costRows: a query of a list's rows (a page, the approvals of a
	// session, the workspaces).
	costRows = 25
	// costLineage: a recursive lineage statement (fork tree, ancestors):
	// 8-120 ms on the 10,000-session tree of docs/performance.md.
	costLineage = 2_500
	// costGit: one read of a worktree's changed files (a snapshot of its
	// files: git status, the trees, a git diff): 6-9 ms alone on 1,000
	// files, 9-13 ms each when a request reads many at once, 20 ms the
	// first since tuttid started; kept 2 s, but a request may reach many
	// worktrees.
	costGit = 800
	// costGitSmall: a one-process git read (a checkout's branch, a diff of
	// two commits' files, kept once read): 2-3 ms, 4-5 ms the first of a
	// checkout since tuttid started.
	costGitSmall = 180
	// costPatch: a patch besides the files (git diff's text, up to its
	// bound): 10-15 ms more.
	costPatch = 600
	// costView: an exploration's rows (branches, their sessions, own
	// turns, checks without output, the queue): 1.5-2 ms.
	costView = 100
	// costCheck: a check's row whole, its 64 KiB of output read and
	// encoded: 1-1.3 ms.
	costCheck = 65
	// The bytes a page of messages may carry, read and encoded (12-16 ms a
	// MiB): a page of messages (8 MiB), of turns with their messages
	// (4 MiB), an unpaged turns list and a comparison (16 MiB).
	costMessagePage = 6_000
	costTurnPage    = 3_000
	costTurnList    = 12_000
	// costCodex: a call to Codex (its account, models, rate limits).
	costCodex = 100
	// costMutation: any mutation: it writes, and may start a fork, a turn,
	// git or a check (those are bounded where they run).
	costMutation = 500

	// assumedRows is the size assumed of a list the API does not bound.
	assumedRows = 20
	// defaultPage is a connection's page without first or last.
	defaultPage = 50
	maxBranches = explore.MaxBranches
)

// textMark is the cost of a message's text or item (Message.text,
// content) until the page it is in is known: its size is bounded by its
// page's bytes, not by itself (one reply may be megabytes). Each page
// (and each root field, for a message outside any) turns the marks in its
// rows into its bytes' cost, once: a page of 500 small messages costs its
// bytes' bound, not 500 times it. A mark is far above any other cost, so
// a child's complexity is plain + k marks.
const textMark = 1 << 24

// withText splits a child's complexity into its plain cost and the count
// of text fields it holds.
func withText(child int) (plain, texts int) { return child % textMark, child / textMark }

// keepText is a list of n rows of child: the plain cost n times, the text
// marks kept for the page above.
func keepText(n, child int) int {
	plain, texts := withText(child)
	return n*plain + texts*textMark
}

// page is n rows of child in a page whose text is bounded by bytes.
func page(n, child, bytes int) int {
	plain, texts := withText(child)
	if texts > 0 {
		return n*plain + bytes
	}
	return n * plain
}

// fieldCosts prices every field the limit should see (see above); the
// others cost gqlgen's default, 1 plus their children.
func fieldCosts() generated.ComplexityRoot {
	var c generated.ComplexityRoot
	// Every mutation first, whatever its arguments; a message it answers
	// costs a page of them.
	setAll(&c.Mutation, func(child int) int { return costMutation + page(1, child, costMessagePage) })

	size := func(first, last *int) int {
		switch {
		case first != nil:
			return *first
		case last != nil:
			return *last
		}
		return defaultPage
	}
	list := func(each int) func(int) int {
		return func(child int) int { return costRows + keepText(each, child) }
	}
	root := func(cost int) func(int) int {
		return func(child int) int { return cost + page(1, child, costMessagePage) }
	}

	c.Query.Workspace = func(child int, _ string) int { return root(costRow)(child) }
	c.Query.Workspaces = func(child int) int { return costRows + page(assumedRows, child, costMessagePage) }
	c.Query.Session = func(child int, _, _ string) int { return root(costRow)(child) }
	c.Query.Exploration = func(child int, _, _, _ string) int { return root(costView)(child) }
	c.Query.ForkTree = func(child int, _, _ string) int { return costLineage + page(assumedRows, child, costMessagePage) }
	// Both chains (a lineage read) and their turns, the messages up to
	// sessionread.MaxTurnListBytes.
	c.Query.CompareSessions = func(child int, _, _, _ string) int { return costLineage + page(1, child, costTurnList) }
	c.Query.CodexAccount = root(costCodex)
	c.Query.Models = func(child int) int { return costCodex + assumedRows*child }
	c.Query.RateLimits = root(costCodex)
	c.Subscription.Activity = func(child int, _ string, _ *string, _ *int64) int { return root(costRow)(child) }

	c.Workspace.Sessions = func(child int, first *int, _ *string, last *int, _ *string, _, _ *bool) int {
		return costRows + keepText(size(first, last), child)
	}
	c.Workspace.UnavailableSessions = list(assumedRows)

	c.AgentSession.Messages = func(child int, first *int, _ *string, last *int, _ *string) int {
		return costRows + page(size(first, last), child, costMessagePage)
	}
	c.AgentSession.TurnConnection = func(child int, first *int, _ *string, last *int, _ *string) int {
		return costRows + page(size(first, last), child, costTurnPage)
	}
	// An unpaged turns list: costed as a default page of turns, and its
	// bytes' bound (sessionread.MaxTurnList, MaxTurnListBytes).
	c.AgentSession.Turns = func(child int, first *int, _ *string, last *int, _ *string) int {
		return costRows + page(size(first, last), child, costTurnList)
	}
	c.AgentSession.Children = list(assumedRows)
	c.AgentSession.Ancestors = func(child int) int { return costLineage + keepText(assumedRows, child) }
	c.AgentSession.ForkTree = func(child int) int { return costLineage + keepText(assumedRows, child) }
	c.AgentSession.ForkPoints = list(assumedRows)
	c.AgentSession.Approvals = list(assumedRows)
	c.AgentSession.PendingApprovals = list(assumedRows)
	c.AgentSession.Explorations = func(child int) int {
		return costView + keepText(explore.MaxListed, child) + explore.MaxListed*costView/2
	}
	c.AgentSession.Exploration = func(child int) int { return costRow + costView + child }

	c.Message.Text = func(int) int { return textMark }
	c.Message.Content = func(int) int { return textMark }
	c.Turn.Messages = func(child int) int { return keepText(assumedRows, child) }
	c.Turn.Diff = func(child int) int { return costGitSmall + child }
	c.SessionCode.Changes = func(child int) int { return costGit + child }
	c.SessionCode.Branch = func(child int) int { return costGitSmall + child }
	c.CodeDiff.Patch = func(child int) int { return costPatch + child }
	c.SessionComparison.Code = func(child int) int { return 3*costGit + child }
	c.SessionComparison.SharedTurns = list(assumedRows)
	c.SessionComparison.AOnly = list(assumedRows)
	c.SessionComparison.BOnly = list(assumedRows)

	// The branches' changes and ranks are read once a view, from every
	// branch's worktree (explore.View.Stand); each field that needs them is
	// costed as that read's share, so that asking several over-counts.
	c.Exploration.Branches = func(child int) int { return keepText(maxBranches, child) }
	c.Exploration.Ranking = func(child int) int { return keepText(maxBranches, child) + maxBranches*costGit }
	c.ExplorationBranch.Rank = func(child int) int { return costGit + child }
	c.ExplorationBranch.FilesChanged = func(child int) int { return costGit + child }
	c.ExplorationBranch.LinesAdded = func(child int) int { return costGit + child }
	c.ExplorationBranch.LinesDeleted = func(child int) int { return costGit + child }
	c.ExplorationBranch.Check = func(child int) int { return costCheck + child }
	c.ExplorationBranch.Checks = func(child int) int {
		return keepText(explore.MaxChecksListed, child) + explore.MaxChecksListed*costCheck
	}
	return c
}

// setAll sets every func of a ComplexityRoot part (c.Mutation) to cost,
// whatever the field's arguments.
func setAll(part any, cost func(child int) int) {
	v := reflect.ValueOf(part).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		f.Set(reflect.MakeFunc(f.Type(), func(args []reflect.Value) []reflect.Value {
			return []reflect.Value{reflect.ValueOf(cost(int(args[0].Int())))}
		}))
	}
}

// Complexity is the complexity the limit computes for the operation named
// operationName ("" when the document has one) of query with vars: what
// the tests and benchmarks price operations with.
func Complexity(ctx context.Context, query, operationName string, vars map[string]any) (int, error) {
	es := generated.NewExecutableSchema(generated.Config{Resolvers: &Resolver{}, Complexity: fieldCosts()})
	doc, errs := gqlparser.LoadQueryWithRules(es.Schema(), query, nil) // nil: the default rules
	if len(errs) > 0 {
		return 0, fmt.Errorf("the operation does not validate: %w", errs)
	}
	op := doc.Operations.ForName(operationName)
	if op == nil {
		return 0, fmt.Errorf("no operation %q", operationName)
	}
	return settleText(complexity.Calculate(ctx, es, op, vars)), nil
}

// ComplexityLimit is the limit an operation's Complexity must not pass.
const ComplexityLimit = complexityLimit
