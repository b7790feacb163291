package server_test

import (
	"strings"
	"testing"
	"time"

	"tuttid/codex/codextest"
)

// reviewAsk begins the review's instructions (explore.reviewInstructions),
// which Codex sends the reviewer as its user text.
const reviewAsk = "Review the code changes this branch made since it was forked from "

// reviewFindings is the reviewer's answer in the tests.
const reviewFindings = "REVIEW-FINDINGS check.sh ignores its arguments"

// orReview answers a review request with reviewFindings and any other
// request with reply: a branch's model also reviews it.
func orReview(reply func(codextest.Request) codextest.Reply) func(codextest.Request) codextest.Reply {
	return func(r codextest.Request) codextest.Reply {
		if strings.HasPrefix(r.LastUserText(), reviewAsk) {
			return codextest.Reply{Text: reviewFindings}
		}
		return reply(r)
	}
}

// TestExploreReviewBranch: reviewExplorationBranch has Codex review a
// branch's change (review/start on a throwaway fork of its thread): it
// answers RUNNING at once, EXPLORATION_UPDATED follows, and the review
// ends DONE with the reviewer's text; the reviewer was asked about the
// change since the explored turn's checkpoint, in the branch's worktree;
// the branch's own conversation is left as it was (its next model request
// carries no trace of the review).
func TestExploreReviewBranch(t *testing.T) {
	h := startServer(t, harnessOpts{})
	repo := gitRepo(t)
	ws := h.createWorkspaceAt("review", repo, "")
	parent := h.startSession(ws, "parent")
	turn1 := h.send(ws, parent.ID, "hello")
	h.model.SetModelReply("mock-pass", orReview(codextest.CommandThen("printf 'exit 0\\n' > check.sh", "wrote a check")))
	h.model.SetModelReply("mock-fail", codextest.CommandThen("printf 'exit 3\\n' > check.sh", "wrote a failing check"))
	x, _, errs := h.explore(map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "requestId": "review-1", "lastTurnId": turn1,
		"prompt": "write check.sh", "checkCommand": "",
		"branches": []any{
			map[string]any{"name": "pass", "settings": map[string]any{"model": "mock-pass"}},
			map[string]any{"name": "fail", "settings": map[string]any{"model": "mock-fail"}},
		}})
	if len(errs) > 0 {
		t.Fatalf("exploreSession: %+v", errs)
	}
	x = h.settledExploration(ws, parent.ID, x.ID)

	c := h.ws(protoTransportWS)
	sub := c.subscribe(`subscription($ws: ID!) { activity(workspaceId: $ws) { kind seq workspaceId agentSessionId at explorationId } }`, map[string]any{"ws": ws})
	h.awaitLive(sub, ws)

	type reviewView struct {
		State       string
		Text, Error *string
		StartedAt   string
		EndedAt     *string
	}
	const reviewFields = `review { state text error startedAt endedAt }`
	var out struct {
		ReviewExplorationBranch struct {
			Name   string
			Review *reviewView
		}
	}
	in := map[string]any{"workspaceId": ws, "agentSessionId": parent.ID, "explorationId": x.ID, "branchName": "pass"}
	h.must(`mutation($in: ReviewExplorationBranchInput!) { reviewExplorationBranch(input: $in) { name `+reviewFields+` } }`,
		map[string]any{"in": in}, &out)
	if r := out.ReviewExplorationBranch.Review; r == nil || (r.State != "RUNNING" && r.State != "DONE") {
		t.Fatalf("reviewExplorationBranch answered %+v, want the review RUNNING", r)
	}
	var got reviewView
	h.eventually("the review DONE", 2*time.Minute, func() bool {
		var q struct {
			Exploration struct {
				Branches []struct {
					Name   string
					Review *reviewView
				}
			}
		}
		h.must(`query($ws: ID!, $s: ID!, $x: ID!) { exploration(workspaceId: $ws, agentSessionId: $s, explorationId: $x) { branches { name `+reviewFields+` } } }`,
			map[string]any{"ws": ws, "s": parent.ID, "x": x.ID}, &q)
		for _, b := range q.Exploration.Branches {
			if b.Name == "pass" && b.Review != nil && b.Review.State != "RUNNING" {
				got = *b.Review
				return true
			}
		}
		return false
	})
	if got.State != "DONE" || got.Text == nil || !strings.Contains(*got.Text, reviewFindings) || got.EndedAt == nil {
		t.Fatalf("the review = %+v (error %v), want DONE with the reviewer's text", got, got.Error)
	}
	updated := 0
	for updated < 2 {
		r, ok, timedOut := sub.next(10 * time.Second)
		if !ok || timedOut {
			break
		}
		if strings.Contains(string(r.Data), `"EXPLORATION_UPDATED"`) && strings.Contains(string(r.Data), x.ID) {
			updated++
		}
	}
	if updated < 2 {
		t.Errorf("%d EXPLORATION_UPDATED for the review, want one as it started and one as it ended", updated)
	}

	// The reviewer's request: the instructions name the explored turn's
	// checkpoint; it ran on a thread other than the branch's.
	pass := x.branch(t, "pass")
	var reviewReq *codextest.Request
	for _, r := range h.model.ModelRequests("mock-pass") {
		if strings.HasPrefix(r.LastUserText(), reviewAsk) {
			reviewReq = &r
		}
	}
	if reviewReq == nil {
		t.Fatal("no review request reached the model server")
	}
	if reviewReq.ThreadID() == pass.Session.ProviderSessionID {
		t.Errorf("the review ran on the branch's own thread %s, want a fork of it", reviewReq.ThreadID())
	}
	if strings.Contains(reviewReq.LastUserText(), "forked from HEAD") {
		t.Errorf("the review's instructions %q name no checkpoint", reviewReq.LastUserText())
	}

	// The branch's conversation has no trace of the review.
	before := len(h.model.RequestsFor(pass.Session.ProviderSessionID))
	h.send(ws, pass.Session.ID, "next")
	reqs := h.model.RequestsFor(pass.Session.ProviderSessionID)
	if len(reqs) <= before {
		t.Fatal("the branch's next turn made no model request")
	}
	for _, r := range reqs[before:] {
		if strings.Contains(string(r.Body), "REVIEW-FINDINGS") || strings.Contains(string(r.Body), "<user_action>") {
			t.Fatalf("the branch's next model request carries the review")
		}
	}
}
