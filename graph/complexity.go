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
// 20 checks a branch of 64 KiB of output each, pages of up to 500 rows.
// A list the API does not bound (a session's approvals, a turn's
// messages, a lineage) is costed as assumedRows of them.
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
	// costCompare: both sessions' chains and their turns, up to
	// sessionread.MaxTurnListBytes of messages.
	costCompare = 2_500
	// costGit: one read of a checkout's changed files (a snapshot of its
	// files and a git diff): 3-6 ms a worktree, 15-20 ms the first of a
	// repository (then cached for 2 s; a request may ask for many).
	costGit = 200
	// costGitSmall: a one-process git read (a checkout's branch, a diff of
	// two commits' files, kept once read): 2-3 ms.
	costGitSmall = 125
	// costPatch: a patch besides the files (git diff's text, up to its
	// bound): 10-15 ms more.
	costPatch = 600
	// costView: an exploration's rows (branches, their sessions, own
	// turns, checks without output, the queue): 1.5-2 ms.
	costView = 100
	// costCheck: a check's row whole, its 64 KiB of output read and
	// encoded: about 1 ms.
	costCheck = 50
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

// fieldCosts prices every field the limit should see (see above); the
// others cost gqlgen's default, 1 plus their children.
func fieldCosts() generated.ComplexityRoot {
	var c generated.ComplexityRoot
	// Every mutation first, whatever its arguments.
	setAll(&c.Mutation, costMutation)

	connection := func(childComplexity int, first *int, _ *string, last *int, _ *string) int {
		n := defaultPage
		if first != nil {
			n = *first
		} else if last != nil {
			n = *last
		}
		return costRows + n*childComplexity
	}
	list := func(each int) func(int) int {
		return func(child int) int { return costRows + each*child }
	}
	plus := func(cost int) func(int) int {
		return func(child int) int { return cost + child }
	}

	c.Query.Workspace = func(child int, _ string) int { return costRow + child }
	c.Query.Workspaces = list(assumedRows)
	c.Query.Session = func(child int, _, _ string) int { return costRow + child }
	c.Query.Exploration = func(child int, _, _, _ string) int { return costView + child }
	c.Query.ForkTree = func(child int, _, _ string) int { return costLineage + assumedRows*child }
	c.Query.CompareSessions = func(child int, _, _, _ string) int { return costCompare + child }
	c.Query.CodexAccount = plus(costCodex)
	c.Query.Models = func(child int) int { return costCodex + assumedRows*child }
	c.Query.RateLimits = plus(costCodex)

	c.Workspace.Sessions = func(child int, first *int, after *string, last *int, before *string, _, _ *bool) int {
		return connection(child, first, after, last, before)
	}
	c.Workspace.UnavailableSessions = list(assumedRows)

	c.AgentSession.Messages = connection
	c.AgentSession.TurnConnection = connection
	// An unpaged turns list is costed as a default page: what it answers
	// is bounded when it runs (sessionread.MaxTurnList, MaxTurnListBytes).
	c.AgentSession.Turns = connection
	c.AgentSession.Children = list(assumedRows)
	c.AgentSession.Ancestors = func(child int) int { return costLineage + assumedRows*child }
	c.AgentSession.ForkTree = func(child int) int { return costLineage + assumedRows*child }
	c.AgentSession.ForkPoints = list(assumedRows)
	c.AgentSession.Approvals = list(assumedRows)
	c.AgentSession.PendingApprovals = list(assumedRows)
	c.AgentSession.Explorations = func(child int) int { return costView + explore.MaxListed*(costView/2+child) }
	c.AgentSession.Exploration = plus(costRow + costView)

	c.Turn.Messages = func(child int) int { return assumedRows * child }
	c.Turn.Diff = plus(costGitSmall)
	c.SessionCode.Changes = plus(costGit)
	c.SessionCode.Branch = plus(costGitSmall)
	c.CodeDiff.Patch = plus(costPatch)
	c.SessionComparison.Code = plus(3 * costGit)
	c.SessionComparison.SharedTurns = list(assumedRows)
	c.SessionComparison.AOnly = list(assumedRows)
	c.SessionComparison.BOnly = list(assumedRows)

	// The branches' changes and ranks are read once a view, from every
	// branch's worktree (explore.View.Stand); each field that needs them is
	// costed as that read's share, so that asking several over-counts.
	c.Exploration.Branches = func(child int) int { return maxBranches * child }
	c.Exploration.Ranking = func(child int) int { return maxBranches * (costGit + child) }
	c.Exploration.Winner = plus(costGit)
	c.ExplorationBranch.Rank = plus(costGit)
	c.ExplorationBranch.FilesChanged = plus(costGit)
	c.ExplorationBranch.LinesAdded = plus(costGit)
	c.ExplorationBranch.LinesDeleted = plus(costGit)
	c.ExplorationBranch.Check = plus(costCheck)
	c.ExplorationBranch.Checks = func(child int) int { return explore.MaxChecksListed * (costCheck + child) }
	return c
}

// setAll sets every func of a ComplexityRoot part (c.Mutation) to cost plus
// its children, whatever the field's arguments.
func setAll(part any, cost int) {
	v := reflect.ValueOf(part).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		f.Set(reflect.MakeFunc(f.Type(), func(args []reflect.Value) []reflect.Value {
			return []reflect.Value{reflect.ValueOf(cost + int(args[0].Int()))}
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
	return complexity.Calculate(ctx, es, op, vars), nil
}

// ComplexityLimit is the limit an operation's Complexity must not pass.
const ComplexityLimit = complexityLimit
