package codex

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

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
		{"turn/completed", `{"threadId":"T","turn":{"id":"U","items":[],"status":"failed","error":{"message":"quota"}}}`,
			agent.Event{Kind: agent.EventTurnCompleted, ThreadID: "T", TurnID: "U", Status: "FAILED", Error: "quota"}, ""},
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
		{"thread/tokenUsage/updated", `{"threadId":"T","turnId":"U","tokenUsage":{}}`,
			agent.Event{Kind: agent.EventOther, ThreadID: "T", TurnID: "U"}, ""},
		{"account/rateLimits/updated", `{"rateLimits":{}}`,
			agent.Event{Kind: agent.EventOther}, ""},
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
			if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", c.want) {
				t.Fatalf("got  %+v\nwant %+v", got, c.want)
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
