package codex

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"tuttid/agent"
)

func TestToEvent(t *testing.T) {
	for _, c := range []struct {
		method, params string
		want           agent.Event // Provider and Method are checked separately
		msgRole        string
	}{
		{"thread/status/changed", `{"threadId":"T","status":{"type":"active","activeFlags":[]}}`,
			agent.Event{Kind: agent.EventThreadStatus, ThreadID: "T", Status: "active"}, ""},
		{"turn/started", `{"threadId":"T","turn":{"id":"U","items":[],"status":"inProgress"}}`,
			agent.Event{Kind: agent.EventTurnStarted, ThreadID: "T", TurnID: "U", Status: "IN_PROGRESS"}, ""},
		{"turn/completed", `{"threadId":"T","turn":{"id":"U","items":[],"status":"failed","error":{"message":"quota","codexErrorInfo":"usageLimitExceeded"}}}`,
			agent.Event{Kind: agent.EventTurnCompleted, ThreadID: "T", TurnID: "U", Status: "FAILED", Error: "quota",
				Failure: &agent.TurnFailure{Message: "quota", Code: "usageLimitExceeded"}}, ""},
		{"turn/completed", `{"threadId":"T","turn":{"id":"U","items":[],"status":"interrupted","error":null}}`,
			agent.Event{Kind: agent.EventTurnCompleted, ThreadID: "T", TurnID: "U", Status: "INTERRUPTED"}, ""},
		{"item/started", `{"threadId":"T","turnId":"U","item":{"type":"agentMessage","id":"I","text":""},"startedAtMs":1}`,
			agent.Event{Kind: agent.EventItemStarted, ThreadID: "T", TurnID: "U"}, "assistant"},
		{"item/completed", `{"threadId":"T","turnId":"U","item":{"type":"userMessage","id":"I","content":[]},"completedAtMs":1}`,
			agent.Event{Kind: agent.EventItemCompleted, ThreadID: "T", TurnID: "U"}, "user"},
		{"item/agentMessage/delta", `{"threadId":"T","turnId":"U","itemId":"I","delta":"he"}`,
			agent.Event{Kind: agent.EventMessageDelta, ThreadID: "T", TurnID: "U", ItemID: "I", Delta: "he", ItemKind: "agentMessage"}, ""},
		{"item/commandExecution/outputDelta", `{"threadId":"T","turnId":"U","itemId":"C","delta":"out\n"}`,
			agent.Event{Kind: agent.EventMessageDelta, ThreadID: "T", TurnID: "U", ItemID: "C", Delta: "out\n", ItemKind: "commandExecution"}, ""},
		{"item/reasoning/summaryTextDelta", `{"threadId":"T","turnId":"U","itemId":"R","delta":"think","summaryIndex":0}`,
			agent.Event{Kind: agent.EventMessageDelta, ThreadID: "T", TurnID: "U", ItemID: "R", Delta: "think", ItemKind: "reasoning.summary"}, ""},
		{"item/reasoning/textDelta", `{"threadId":"T","turnId":"U","itemId":"R","delta":"raw","contentIndex":0}`,
			agent.Event{Kind: agent.EventMessageDelta, ThreadID: "T", TurnID: "U", ItemID: "R", Delta: "raw", ItemKind: "reasoning.text"}, ""},
		{"item/plan/delta", `{"threadId":"T","turnId":"U","itemId":"P","delta":"1."}`,
			agent.Event{Kind: agent.EventMessageDelta, ThreadID: "T", TurnID: "U", ItemID: "P", Delta: "1.", ItemKind: "plan"}, ""},
		{"thread/tokenUsage/updated", `{"threadId":"T","turnId":"U","tokenUsage":{"total":{"totalTokens":30,"inputTokens":20,"cachedInputTokens":3,"cacheWriteInputTokens":0,"outputTokens":10,"reasoningOutputTokens":1},"last":{"totalTokens":12},"modelContextWindow":258400}}`,
			agent.Event{Kind: agent.EventTokenUsage, ThreadID: "T", TurnID: "U", TokenUsage: &agent.TokenUsage{
				TotalTokens: 30, InputTokens: 20, CachedInputTokens: 3, OutputTokens: 10, ReasoningOutputTokens: 1,
				LastTurnTotalTokens: 12, ContextWindow: 258400}}, ""},
		{"account/rateLimits/updated", `{"rateLimits":{"limitId":"codex","primary":null,"secondary":null}}`,
			agent.Event{Kind: agent.EventRateLimits}, ""},
		{"account/rateLimits/updated", `{"rateLimits":{"primary":{"usedPercent":43,"windowDurationMins":300,"resetsAt":null},"secondary":null}}`,
			agent.Event{Kind: agent.EventRateLimits, RateLimits: &agent.RateLimits{Primary: &agent.RateLimitWindow{UsedPercent: 43, WindowMinutes: 300}}}, ""},
		{"error", `{"error":{"message":"Reconnecting... 1/5","codexErrorInfo":{"responseStreamDisconnected":{"httpStatusCode":null}},"additionalDetails":"x"},"willRetry":true,"threadId":"T","turnId":"U"}`,
			agent.Event{Kind: agent.EventTurnRetrying, ThreadID: "T", TurnID: "U", Error: "Reconnecting... 1/5",
				Failure: &agent.TurnFailure{Message: "Reconnecting... 1/5", Code: "responseStreamDisconnected"}}, ""},
		{"error", `{"error":{"message":"401","codexErrorInfo":{"httpConnectionFailed":{"httpStatusCode":401}}},"willRetry":false,"threadId":"T","turnId":"U"}`,
			agent.Event{Kind: agent.EventOther, ThreadID: "T", TurnID: "U", Error: "401",
				Failure: &agent.TurnFailure{Message: "401", Code: agent.ErrorUnauthorized, HTTPStatus: 401}}, ""},
		{"account/updated", `{"authMode":"apikey","planType":null}`,
			agent.Event{Kind: agent.EventAccountUpdated, Account: &agent.Account{SignedIn: true, AuthMode: "apiKey"}}, ""},
		{"account/login/completed", `{"loginId":"L","success":false,"error":"Login was not completed"}`,
			agent.Event{Kind: agent.EventAccountUpdated, LoginID: "L", Error: "Login was not completed"}, ""},
		{"configWarning", `{"summary":"bad key","details":"in config.toml"}`,
			agent.Event{Kind: agent.EventWarning, Notice: "bad key: in config.toml"}, ""},
		{"warning", `{"threadId":"T","message":"Falling back"}`,
			agent.Event{Kind: agent.EventWarning, ThreadID: "T", Notice: "Falling back"}, ""},
		{"turn/started", `{"threadId":"T","turn":"not an object"}`, // unparsable: kept raw
			agent.Event{Kind: agent.EventOther, ThreadID: "T"}, ""},
	} {
		t.Run(c.method, func(t *testing.T) {
			e := toEvent(c.method, json.RawMessage(c.params))
			if e.Provider != agent.ProviderCodex || e.Method != c.method {
				t.Fatalf("provider/method = %s %s", e.Provider, e.Method)
			}
			if e.Kind == agent.EventOther && string(e.Raw) != c.params {
				t.Fatalf("raw = %s", e.Raw)
			}
			if (e.Message == nil) != (c.msgRole == "") || (e.Message != nil && (e.Message.Role != c.msgRole || e.Message.ID != "I" || e.Message.TurnID != "U")) {
				t.Fatalf("message = %+v", e.Message)
			}
			got := e
			got.Provider, got.Method, got.Raw, got.Message = "", "", nil, nil
			if got.RateLimits != nil {
				if got.RateLimits.UpdatedAt.IsZero() {
					t.Fatal("rate limits without their time")
				}
				rl := *got.RateLimits
				rl.UpdatedAt = time.Time{}
				got.RateLimits = &rl
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got  %s\nwant %s", show(got), show(c.want))
			}
		})
	}
}

func TestEventQueueKeepsOrderWithoutBlockingTheProducer(t *testing.T) {
	q := newEventQueue()
	// Far more than the channel buffer, pushed before anyone reads: the
	// producer (the stdout reader) must never block.
	const n = 10000
	for i := 0; i < n; i++ {
		q.push(agent.Event{Delta: fmt.Sprint(i)})
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { q.run(ctx); close(done) }()
	for i := 0; i < n; i++ {
		if e := <-q.out; e.Delta != fmt.Sprint(i) {
			t.Fatalf("event %d = %s", i, e.Delta)
		}
	}
	cancel()
	<-done
	if _, ok := <-q.out; ok {
		t.Fatal("out not closed")
	}
}

// show prints an event with its payloads, not their addresses.
func show(e agent.Event) string {
	b, _ := json.Marshal(e)
	return string(b)
}
