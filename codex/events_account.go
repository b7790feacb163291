package codex

import (
	"encoding/json"
	"strings"
	"time"

	"tuttid/agent"
)

// accountEvent projects the notifications of accounts, usage and turn
// health into e; false when params do not parse (e stays EventOther).
// The account events carry what the notification says; the runtime merges
// them with what it knew (Runtime.observe) before they are delivered.
func accountEvent(e *agent.Event, method string, params json.RawMessage) bool {
	switch method {
	case "error":
		var p wireErrorNotification
		if json.Unmarshal(params, &p) != nil {
			return false
		}
		f := p.Error.failure()
		e.Failure, e.Error = &f, f.Message
		if !p.WillRetry {
			// The turn fails with the same error in turn/completed, which
			// is what tuttid stores; this one is kept whole for the log.
			e.Kind, e.Raw = agent.EventOther, rawOf(params)
			return true
		}
		e.Kind = agent.EventTurnRetrying
		return true
	case "thread/tokenUsage/updated":
		var p wireTokenUsageUpdated
		if json.Unmarshal(params, &p) != nil {
			return false
		}
		u := p.TokenUsage
		e.Kind = agent.EventTokenUsage
		e.TokenUsage = &agent.TokenUsage{
			TotalTokens:           u.Total.TotalTokens,
			InputTokens:           u.Total.InputTokens,
			CachedInputTokens:     u.Total.CachedInputTokens,
			OutputTokens:          u.Total.OutputTokens,
			ReasoningOutputTokens: u.Total.ReasoningOutputTokens,
			LastTurnTotalTokens:   u.Last.TotalTokens,
		}
		if u.ModelContextWindow != nil {
			e.TokenUsage.ContextWindow = *u.ModelContextWindow
		}
		return true
	case "account/updated":
		var p wireAccountUpdated
		if json.Unmarshal(params, &p) != nil {
			return false
		}
		a := agent.Account{AuthMode: authModeOf(strOr(p.AuthMode, "")), PlanType: strOr(p.PlanType, "")}
		a.SignedIn = a.AuthMode != ""
		e.Kind, e.Account = agent.EventAccountUpdated, &a
		return true
	case "account/login/completed":
		var p wireLoginCompleted
		if json.Unmarshal(params, &p) != nil {
			return false
		}
		e.Kind, e.LoginID = agent.EventAccountUpdated, strOr(p.LoginID, "")
		if !p.Success {
			e.Error = strOr(p.Error, "")
			if e.Error == "" {
				e.Error = "login failed"
			}
		}
		return true
	case "account/rateLimits/updated":
		var p wireRateLimits
		if json.Unmarshal(params, &p) != nil {
			return false
		}
		e.Kind, e.RateLimits = agent.EventRateLimits, rateLimitsOf(p.RateLimits, time.Now())
		return true
	case "warning", "configWarning", "deprecationNotice":
		var p wireNotice
		if json.Unmarshal(params, &p) != nil {
			return false
		}
		e.Kind, e.Notice = agent.EventWarning, noticeText(p)
		if p.ThreadID != nil {
			e.ThreadID = *p.ThreadID
		}
		return true
	}
	return false
}

// authModeOf spells account/updated's AuthMode ("apikey") as account/read's
// account type ("apiKey"), the one the contract shows.
func authModeOf(mode string) string {
	if mode == "apikey" {
		return "apiKey"
	}
	return mode
}

func noticeText(p wireNotice) string {
	text := p.Message
	if text == "" {
		text = p.Summary
	}
	if d := strings.TrimSpace(strOr(p.Details, "")); d != "" {
		text += ": " + d
	}
	return text
}

// rateLimitsOf maps a snapshot; nil when it has no window.
func rateLimitsOf(s wireRateLimitSnapshot, now time.Time) *agent.RateLimits {
	if s.Primary == nil && s.Secondary == nil {
		return nil
	}
	return &agent.RateLimits{Primary: windowOf(s.Primary), Secondary: windowOf(s.Secondary), UpdatedAt: now}
}

func windowOf(w *wireRateLimitWindow) *agent.RateLimitWindow {
	if w == nil {
		return nil
	}
	out := &agent.RateLimitWindow{UsedPercent: w.UsedPercent}
	if w.WindowDurationMins != nil {
		out.WindowMinutes = *w.WindowDurationMins
	}
	if w.ResetsAt != nil {
		out.ResetsAt = time.Unix(*w.ResetsAt, 0)
	}
	return out
}
