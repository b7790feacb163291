package graph

import (
	"time"

	"tuttid/agent"
	"tuttid/graph/model"
)

// Conversions of Codex's account side (account.graphqls): an empty value
// from Codex is null here.

func codexAccount(a agent.Account) *model.CodexAccount {
	return &model.CodexAccount{SignedIn: a.SignedIn, RequiresOpenaiAuth: a.RequiresAuth,
		AuthMode: optional(a.AuthMode), Email: optional(a.Email), PlanType: optional(a.PlanType)}
}

func codexLogin(l agent.Login) *model.CodexLogin {
	out := &model.CodexLogin{LoginID: optional(l.LoginID), AuthURL: optional(l.AuthURL),
		VerificationURL: optional(l.VerificationURL), UserCode: optional(l.UserCode)}
	if l.Account != nil {
		out.Account = codexAccount(*l.Account)
	}
	return out
}

func codexModels(ms []agent.Model) []*model.CodexModel {
	out := make([]*model.CodexModel, len(ms))
	for i, m := range ms {
		efforts := m.ReasoningEfforts
		if efforts == nil {
			efforts = []string{}
		}
		out[i] = &model.CodexModel{ID: m.ID, Model: m.Model, DisplayName: m.DisplayName, Description: m.Description,
			IsDefault: m.IsDefault, ReasoningEfforts: efforts, DefaultReasoningEffort: optional(m.DefaultReasoningEffort)}
	}
	return out
}

func codexRateLimits(l *agent.RateLimits) *model.CodexRateLimits {
	if l == nil {
		return nil
	}
	return &model.CodexRateLimits{Primary: rateLimitWindow(l.Primary), Secondary: rateLimitWindow(l.Secondary), UpdatedAt: l.UpdatedAt}
}

func rateLimitWindow(w *agent.RateLimitWindow) *model.RateLimitWindow {
	if w == nil {
		return nil
	}
	out := &model.RateLimitWindow{UsedPercent: w.UsedPercent}
	if w.WindowMinutes != 0 {
		m := w.WindowMinutes
		out.WindowMinutes = &m
	}
	if !w.ResetsAt.IsZero() {
		at := w.ResetsAt.UTC().Truncate(time.Second)
		out.ResetsAt = &at
	}
	return out
}

func tokenUsage(u *agent.TokenUsage) *model.TokenUsage {
	if u == nil {
		return nil
	}
	out := &model.TokenUsage{TotalTokens: u.TotalTokens, InputTokens: u.InputTokens, CachedInputTokens: u.CachedInputTokens,
		OutputTokens: u.OutputTokens, ReasoningOutputTokens: u.ReasoningOutputTokens, LastTurnTotalTokens: u.LastTurnTotalTokens}
	if u.ContextWindow != 0 {
		w := u.ContextWindow
		out.ContextWindow = &w
	}
	return out
}
