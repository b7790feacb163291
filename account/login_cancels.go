package account

import "sync"

// A login the person cancels ends in Codex's account/login/completed with
// success false ("Login was not completed"). That is the answer to their
// own request, not a failure: published as one, it opened the sign-in
// dialog again with an error, and when Codex was slow (a busy machine) it
// came after the person had closed the dialog or signed in another way.
// So the completions of logins cancelled through tuttid are published
// without their error.

// maxLoginCancels bounds the cancelled login ids remembered; a login's
// completion follows its cancel within seconds.
const maxLoginCancels = 32

// loginCancels remembers the ids of logins cancelled through tuttid.
type loginCancels struct {
	mu  sync.Mutex
	ids []string
}

func (c *loginCancels) add(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.ids) == maxLoginCancels {
		c.ids = c.ids[1:]
	}
	c.ids = append(c.ids, id)
}

// take reports whether id was cancelled, forgetting it.
func (c *loginCancels) take(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, v := range c.ids {
		if v == id {
			c.ids = append(c.ids[:i], c.ids[i+1:]...)
			return true
		}
	}
	return false
}
