package codex

import (
	"os"
	"strings"
)

// secretPrefix starts the name of every variable that configures tuttid
// (TUTTID_TOKEN, TUTTID_DB, TUTTID_NO_AUTH, ...). None is Codex's business,
// and the token is a secret: the app-server runs the agent's commands, and
// anything they read (a prompt injection's `env`) must not let them drive
// tuttid.
const secretPrefix = "TUTTID_"

// childEnv is the app-server's environment: env (os.Environ() when nil)
// without any variable whose name starts with TUTTID_, in any case. The
// rest (PATH, HOME, CODEX_HOME, proxies, the provider's API keys) is
// Codex's and is kept, in order.
func childEnv(env []string) []string {
	if env == nil {
		env = os.Environ()
	}
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name := envName(kv)
		if len(name) >= len(secretPrefix) && strings.EqualFold(name[:len(secretPrefix)], secretPrefix) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// envName is the name of a NAME=value entry.
func envName(kv string) string {
	name, _, _ := strings.Cut(kv, "=")
	return name
}
