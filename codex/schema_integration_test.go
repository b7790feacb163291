package codex

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"tuttid/agent"
	"tuttid/codex/codextest"
)

// protocolSchema is the installed codex's `app-server generate-json-schema
// --experimental` (tuttid negotiates experimentalApi for plan mode).
type protocolSchema struct {
	defs          map[string]json.RawMessage
	requests      map[string]string // client request method -> params definition
	notifications map[string]string // client notification method -> params definition ("" = none)
	serverReqs    map[string]string // server request method -> response definition
}

func loadSchema(t *testing.T, bin string) protocolSchema {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command(bin, "app-server", "generate-json-schema", "--experimental", "--out", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("generate-json-schema: %v\n%s", err, out)
	}
	s := protocolSchema{defs: map[string]json.RawMessage{}, requests: map[string]string{},
		notifications: map[string]string{}, serverReqs: map[string]string{}}
	read := func(name string, into map[string]string, suffixFrom, suffixTo string) {
		var f struct {
			Definitions map[string]json.RawMessage `json:"definitions"`
			OneOf       []struct {
				Properties struct {
					Method struct{ Enum []string } `json:"method"`
					Params struct {
						Ref string `json:"$ref"`
					} `json:"params"`
				} `json:"properties"`
			} `json:"oneOf"`
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatal(err)
		}
		for k, v := range f.Definitions {
			s.defs[k] = v
		}
		for _, o := range f.OneOf {
			def := strings.TrimPrefix(o.Properties.Params.Ref, "#/definitions/")
			if suffixFrom != "" {
				def = strings.TrimSuffix(def, suffixFrom) + suffixTo
				if b, err := os.ReadFile(filepath.Join(dir, def+".json")); err == nil {
					s.defs[def] = b
					var sub struct {
						Definitions map[string]json.RawMessage `json:"definitions"`
					}
					_ = json.Unmarshal(b, &sub)
					for k, v := range sub.Definitions {
						if _, ok := s.defs[k]; !ok {
							s.defs[k] = v
						}
					}
				}
			}
			for _, m := range o.Properties.Method.Enum {
				into[m] = def
			}
		}
	}
	read("ClientRequest.json", s.requests, "", "")
	read("ClientNotification.json", s.notifications, "", "")
	read("ServerRequest.json", s.serverReqs, "Params", "Response")
	return s
}

// check reports every key of v (recursively) that the schema node does not
// define. A node without properties (a map, a scalar, any JSON) accepts all.
func (s protocolSchema) check(t *testing.T, where string, node json.RawMessage, v any) {
	t.Helper()
	for _, p := range s.unknown(where, node, v) {
		t.Errorf("%s: not in the protocol schema", p)
	}
}

func (s protocolSchema) unknown(where string, node json.RawMessage, v any) []string {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	props, open := s.properties(node, 0)
	if open || props == nil {
		return nil
	}
	var out []string
	for k, val := range obj {
		sub, ok := props[k]
		if !ok {
			out = append(out, where+"."+k)
			continue
		}
		out = append(out, s.unknown(where+"."+k, sub, val)...)
	}
	return out
}

// properties merges the properties of a node and its $ref / allOf / anyOf
// / oneOf alternatives; open says some alternative accepts any key.
func (s protocolSchema) properties(node json.RawMessage, depth int) (map[string]json.RawMessage, bool) {
	if depth > 20 {
		return nil, true
	}
	var n struct {
		Ref        string                     `json:"$ref"`
		Properties map[string]json.RawMessage `json:"properties"`
		Additional json.RawMessage            `json:"additionalProperties"`
		AllOf      []json.RawMessage          `json:"allOf"`
		AnyOf      []json.RawMessage          `json:"anyOf"`
		OneOf      []json.RawMessage          `json:"oneOf"`
	}
	if json.Unmarshal(node, &n) != nil {
		return nil, true
	}
	if n.Ref != "" {
		def, ok := s.defs[strings.TrimPrefix(n.Ref, "#/definitions/")]
		if !ok {
			return nil, true
		}
		return s.properties(def, depth+1)
	}
	if len(n.Additional) > 0 && string(n.Additional) != "false" {
		return nil, true
	}
	var out map[string]json.RawMessage
	add := func(p map[string]json.RawMessage) {
		if out == nil {
			out = map[string]json.RawMessage{}
		}
		for k, v := range p {
			out[k] = v
		}
	}
	if n.Properties != nil {
		add(n.Properties)
	}
	for _, alt := range slices.Concat(n.AllOf, n.AnyOf, n.OneOf) {
		p, open := s.properties(alt, depth+1)
		if open && p == nil && !isNullType(alt) && !isScalar(alt) {
			return nil, true
		}
		add(p)
	}
	return out, false
}

func isNullType(node json.RawMessage) bool {
	var n struct{ Type any }
	_ = json.Unmarshal(node, &n)
	return n.Type == "null"
}

func isScalar(node json.RawMessage) bool {
	var n struct {
		Type any
		Enum []any
	}
	_ = json.Unmarshal(node, &n)
	if len(n.Enum) > 0 {
		return true
	}
	switch n.Type {
	case "string", "integer", "number", "boolean", "array":
		return true
	}
	return false
}

// methodsCalled lists every client method tuttid's runtime sends.
var methodsCalled = []string{
	"initialize", "thread/start", "thread/resume", "thread/fork", "turn/start", "turn/interrupt",
	"thread/turns/list", "thread/read", "thread/archive",
	"account/read", "account/login/start", "account/login/cancel", "account/logout", "account/rateLimits/read",
	"model/list", "turn/steer",
}

// TestProtocolSchemaCoversWhatTuttidSends runs tuttid's runtime against the
// installed codex through a recorder and checks every message it wrote
// against that binary's own protocol schema; and every answer tuttid can
// give a server request against the request's response schema. A protocol
// change of a new Codex version fails here, loudly.
func TestProtocolSchemaCoversWhatTuttidSends(t *testing.T) {
	bin, record := codextest.RecordingBinary(t)
	schema := loadSchema(t, codextest.Binary(t))
	// The check itself catches what is not there.
	bogus := map[string]any{"threadId": "T", "bogusField": 1, "config": map[string]any{"any": 1},
		"collaborationMode": map[string]any{"mode": "plan", "settings": map[string]any{"model": "m", "nope": 1}}}
	if got := schema.unknown("turn/start", schema.defs[schema.requests["turn/start"]], bogus); !slices.Equal(sortedCopy(got),
		[]string{"turn/start.bogusField", "turn/start.collaborationMode.settings.nope", "turn/start.config"}) {
		t.Fatalf("schema check found %v", got)
	}
	for _, m := range methodsCalled {
		if _, ok := schema.requests[m]; !ok {
			t.Errorf("method %s is not in the protocol schema", m)
		}
	}
	for m := range requestShapes {
		if _, ok := schema.serverReqs[m]; !ok {
			t.Errorf("server request %s that tuttid answers is not in the protocol schema", m)
		}
	}

	// Every answer tuttid gives, for every decision.
	for m, shape := range requestShapes {
		def, ok := schema.defs[schema.serverReqs[m]]
		if !ok {
			continue
		}
		for _, d := range agent.ApprovalDecisions() {
			details := json.RawMessage(`{"availableDecisions":["accept",{"acceptWithExecpolicyAmendment":{"execpolicy_amendment":["ls"]}}],"permissions":{"network":{"enabled":true}}}`)
			b, _ := json.Marshal(shape.encode(d, details, json.RawMessage(`{"q":{"answers":["a"]}}`)))
			var v any
			_ = json.Unmarshal(b, &v)
			schema.check(t, m+" answer "+string(d), def, v)
		}
	}

	// A session's life through the real app-server, recorded.
	model := codextest.StartModelServer(t)
	home := codextest.NewCodexHome(t, model.URL())
	model.SetReply(func(r codextest.Request) codextest.Reply {
		if strings.HasPrefix(r.LastUserText(), "slow") {
			return codextest.Reply{Text: "slow reply", Delay: 20 * time.Second}
		}
		if len(r.FunctionCallOutputs()) >= len(r.UserTexts()) || r.LastUserText() != "escalate" {
			return codextest.Reply{Text: "ok"}
		}
		return codextest.Reply{FunctionCall: codextest.EscalatedCommand("echo hi", "why")}
	})
	rt := New(Config{Bin: bin, Env: append(os.Environ(), "CODEX_HOME="+home), ExperimentalPlanMode: true,
		RequestTimeout: 30 * time.Second})
	ev := RecordEvents(rt.Events())
	t.Cleanup(func() { _ = rt.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := rt.Launch(ctx); err != nil {
		t.Fatal(err)
	}
	ev.AnswerApprovals(t, rt, func(agent.ApprovalRequest) agent.ApprovalResponse {
		return agent.ApprovalResponse{Decision: agent.DecisionAccept}
	})
	s := agent.ComposerSettings{Model: "mock-model", ReasoningEffort: "high", PermissionModeID: agent.PermissionWorkspaceWrite,
		PlanMode: true, BrowserUse: true}
	cwd := t.TempDir()
	// The account side (models are listed by the first Start's effort check).
	if _, err := rt.Account(ctx, agent.ProviderCodex); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.RateLimits(ctx, agent.ProviderCodex); err != nil {
		t.Fatal(err)
	}
	for _, in := range []agent.LoginInput{{Method: agent.LoginAPIKey, APIKey: "sk-schema-test"}, {Method: agent.LoginChatGPT}} {
		in.Provider = agent.ProviderCodex
		l, err := rt.StartLogin(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if l.LoginID != "" {
			if err := rt.CancelLogin(ctx, agent.ProviderCodex, l.LoginID); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := rt.Logout(ctx, agent.ProviderCodex); err != nil {
		t.Fatal(err)
	}
	sess, err := rt.Start(ctx, agent.StartInput{Provider: agent.ProviderCodex, Cwd: cwd, Settings: s})
	if err != nil {
		t.Fatal(err)
	}
	thread := sess.ThreadID
	turn := func(text string, s agent.ComposerSettings) string {
		t.Helper()
		tr, err := rt.SendTurn(ctx, agent.SendTurnInput{Provider: agent.ProviderCodex, ThreadID: thread, Cwd: cwd,
			Settings: s, Text: text, ModelProvider: sess.ModelProvider})
		if err != nil {
			t.Fatal(err)
		}
		return tr.ID
	}
	first := turn("escalate", s)
	ev.Wait(t, 60*time.Second, "first turn", TurnDone(first))
	ro := s
	ro.PermissionModeID, ro.PlanMode = agent.PermissionReadOnly, false
	second := turn("read only", ro) // a mode change: sandboxPolicy on turn/start
	ev.Wait(t, 60*time.Second, "second turn", TurnDone(second))
	if _, err := rt.Fork(ctx, agent.RuntimeForkInput{Provider: agent.ProviderCodex, ParentThreadID: thread, Cwd: cwd,
		Settings: s, ModelProvider: sess.ModelProvider, LastTurnID: first}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.History(ctx, agent.HistoryInput{Provider: agent.ProviderCodex, ThreadID: thread}); err != nil {
		t.Fatal(err)
	}
	if err := KillAppServer(rt); err != nil { // the next turn resumes the thread
		t.Fatal(err)
	}
	ev.Wait(t, 60*time.Second, "restart", func(e agent.Event) bool { return e.Kind == agent.EventRuntimeRestarted })
	slow := turn("slow", s)
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := rt.Interrupt(ctx, agent.InterruptInput{Provider: agent.ProviderCodex, ThreadID: thread, TurnID: slow})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("interrupt: %v", err)
		}
		time.Sleep(50 * time.Millisecond) // Codex refuses until the turn really runs
	}
	ev.Wait(t, 60*time.Second, "interrupted", TurnDone(slow))
	before := len(model.Requests())
	steered := turn("slow, then steered", s)
	if _, err := model.WaitRequests(ctx, before+1); err != nil {
		t.Fatal(err)
	}
	if err := rt.Steer(ctx, agent.SteerInput{Provider: agent.ProviderCodex, ThreadID: thread, TurnID: steered,
		Text: "slow down"}); err != nil {
		t.Fatal(err)
	}
	if err := rt.Interrupt(ctx, agent.InterruptInput{Provider: agent.ProviderCodex, ThreadID: thread, TurnID: steered}); err != nil {
		t.Fatal(err)
	}
	ev.Wait(t, 60*time.Second, "steered turn interrupted", TurnDone(steered))
	if err := rt.Archive(ctx, agent.ProviderCodex, thread); err != nil {
		t.Fatal(err)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}

	f, err := os.Open(record)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params any             `json:"params"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Errorf("unparsable line %q: %v", sc.Text(), err)
			continue
		}
		if m.Method == "" {
			continue // an answer to a server request: checked above
		}
		seen[m.Method] = true
		table := schema.requests
		if len(m.ID) == 0 {
			table = schema.notifications
		}
		def, ok := table[m.Method]
		if !ok {
			t.Errorf("tuttid sent %s, which is not in the protocol schema", m.Method)
			continue
		}
		if def != "" {
			schema.check(t, m.Method, schema.defs[def], m.Params)
		}
	}
	for _, m := range []string{"initialize", "initialized", "thread/start", "turn/start", "thread/fork", "thread/turns/list", "thread/resume", "turn/interrupt", "thread/archive",
		"account/read", "account/login/start", "account/login/cancel", "account/logout", "account/rateLimits/read", "model/list", "turn/steer"} {
		if !seen[m] {
			t.Errorf("the recorded exchange has no %s (the test did not exercise it)", m)
		}
	}
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}
