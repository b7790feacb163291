package codex

import (
	"context"
	"encoding/json"
	"sync"

	"tuttid/agent"
)

// eventQueue delivers events in order and never drops one.
//
// It is unbounded on purpose: the producer is the goroutine that reads the
// app-server's stdout, which also carries the replies to requests. If it
// blocked on a slow consumer, a consumer that calls back into the Runtime
// (History from an event handler, say) would wait for a reply stuck behind
// its own unread events: a deadlock. Memory grows only while the consumer
// lags, by one small struct per notification.
type eventQueue struct {
	mu     sync.Mutex
	items  []agent.Event
	signal chan struct{}
	out    chan agent.Event
	// observe, when set, sees each event before it is queued, on the
	// pusher's goroutine (for notifications, the reader's: it must not call
	// Codex). It returns the event to queue and any to queue after it.
	observe func(agent.Event) (agent.Event, []agent.Event)
}

func newEventQueue() *eventQueue {
	return &eventQueue{signal: make(chan struct{}, 1), out: make(chan agent.Event, 64)}
}

func (q *eventQueue) push(e agent.Event) {
	var more []agent.Event
	if q.observe != nil {
		e, more = q.observe(e)
	}
	q.mu.Lock()
	q.items = append(q.items, e)
	q.items = append(q.items, more...)
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// run moves events to out until ctx ends, then closes out.
func (q *eventQueue) run(ctx context.Context) {
	defer close(q.out)
	for {
		q.mu.Lock()
		if len(q.items) == 0 {
			q.mu.Unlock()
			select {
			case <-q.signal:
				continue
			case <-ctx.Done():
				return
			}
		}
		e := q.items[0]
		q.items[0] = agent.Event{}
		q.items = q.items[1:]
		q.mu.Unlock()
		select {
		case q.out <- e:
		case <-ctx.Done():
			return
		}
	}
}

// toEvent projects one notification. Nothing is dropped: methods without a
// projection become EventOther with their raw params.
func toEvent(method string, params json.RawMessage) agent.Event {
	e := agent.Event{Provider: agent.ProviderCodex, Method: method}
	var route wireRouting
	_ = json.Unmarshal(params, &route)
	e.ThreadID, e.TurnID = route.ThreadID, route.TurnID

	switch method {
	case "thread/status/changed":
		var p wireThreadStatusChanged
		if json.Unmarshal(params, &p) == nil {
			e.Kind, e.Status = agent.EventThreadStatus, p.Status.Type
			return e
		}
	case "turn/started", "turn/completed":
		var p wireTurnNotification
		if json.Unmarshal(params, &p) == nil {
			e.TurnID = p.Turn.ID
			if method == "turn/started" {
				e.Kind, e.Status = agent.EventTurnStarted, string(agent.TurnInProgress)
				return e
			}
			e.Kind, e.Status = agent.EventTurnCompleted, string(turnStatus(p.Turn.Status))
			if p.Turn.Error != nil {
				f := p.Turn.Error.failure()
				e.Error, e.Failure = f.Message, &f
			}
			return e
		}
	case "error", "thread/tokenUsage/updated", "account/updated", "account/login/completed",
		"account/rateLimits/updated", "warning", "configWarning", "deprecationNotice":
		if accountEvent(&e, method, params) {
			return e
		}
	case "item/started", "item/completed":
		var p wireItemNotification
		if json.Unmarshal(params, &p) == nil && len(p.Item) > 0 {
			m := projectItem(p.TurnID, json.RawMessage(p.Item), method == "item/started")
			e.Kind, e.Message = agent.EventItemCompleted, &m
			if method == "item/started" {
				e.Kind = agent.EventItemStarted
			}
			return e
		}
	default:
		if kind, ok := deltaMethods[method]; ok {
			var p wireAgentMessageDelta
			if json.Unmarshal(params, &p) == nil {
				e.Kind, e.ItemID, e.Delta, e.ItemKind = agent.EventMessageDelta, p.ItemID, p.Delta, kind
				return e
			}
		}
	}
	// Unprojected, or a projected method whose params did not parse.
	e.Kind, e.Raw = agent.EventOther, append(json.RawMessage(nil), params...)
	return e
}

// deltaMethods are the streamed pieces of an item's text, by method, with
// the stream they feed: the item type, and for reasoning which part.
// All share the {threadId, turnId, itemId, delta} shape.
var deltaMethods = map[string]string{
	"item/agentMessage/delta":           "agentMessage",
	"item/commandExecution/outputDelta": "commandExecution",
	"item/fileChange/outputDelta":       "fileChange",
	"item/plan/delta":                   "plan",
	"item/reasoning/summaryTextDelta":   "reasoning.summary",
	"item/reasoning/textDelta":          "reasoning.text",
}
