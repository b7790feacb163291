package codextest

// Replies scripted per model name. Explore's tests run several forks of one
// turn side by side, each with its own model setting, on one Codex and one
// model server; the request's "model" is the one thing that tells the
// branches apart before any of them has a thread id the test knows.

// Model is the request body's "model": the model the thread's settings (or
// turn/start's override) named. Codex's review sub-agent sends the thread's
// model too (docs/codex-explore-facts.md).
func (r Request) Model() string { return r.model }

// SetModelReply scripts the replies to requests whose model is name; the
// others keep going to SetReply's func (or DefaultReply). nil removes the
// script for name. f runs on the server's goroutine and must be safe for
// concurrent calls.
func (m *ModelServer) SetModelReply(name string, f func(Request) Reply) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if f == nil {
		delete(m.byModel, name)
		return
	}
	if m.byModel == nil {
		m.byModel = make(map[string]func(Request) Reply)
	}
	m.byModel[name] = f
}

// ModelRequests returns the model requests that named model, in arrival
// order.
func (m *ModelServer) ModelRequests(model string) []Request {
	var out []Request
	for _, r := range m.Requests() {
		if r.model == model {
			out = append(out, r)
		}
	}
	return out
}

// CommandThen is a reply script for one tool round trip a turn: a fresh
// turn's request is answered with an exec_command call running cmd (a shell
// command line), and the request that carries the command's output with
// text. The turn's sandbox must let cmd do its work (workspace-write for a
// file in the thread's cwd).
func CommandThen(cmd, text string) func(Request) Reply {
	return func(r Request) Reply {
		if r.AfterToolCall() {
			return Reply{Text: text}
		}
		return Reply{FunctionCall: &FunctionCall{Cmd: cmd}}
	}
}
