package codex

import (
	"log/slog"
	"time"

	"tuttid/jsonrpc"
)

// Config configures a Runtime. The zero value is usable: it runs `codex
// app-server` from PATH with the inherited environment.
type Config struct {
	// Bin is the codex executable, a path or a name looked up in PATH
	// (default "codex"). tuttid sets it from --codex-bin / CODEX_BIN.
	Bin string
	// Args are the arguments after Bin (default: "app-server").
	Args []string
	// Env is the child's environment; nil inherits os.Environ(). Codex
	// reads CODEX_HOME from it. Variables named TUTTID_* (tuttid's own
	// configuration, its token first) are dropped from it either way.
	Env []string
	// Logger receives the runtime's logs and the child's stderr (at debug
	// level). Default: slog.Default().
	Logger *slog.Logger
	// ClientVersion is sent as clientInfo.version in the handshake.
	ClientVersion string
	// RequestTimeout bounds every request to the app-server that the
	// caller's context does not bound sooner (default 60s).
	RequestTimeout time.Duration
	// HandshakeTimeout bounds a starting app-server's initialize handshake
	// (default 60s). Apart from RequestTimeout: a Codex starting on a busy
	// machine (node, then the binary) is slower than any request it then
	// answers, and a short request bound must not fail the start.
	HandshakeTimeout time.Duration
	// RestartBackoffMin and RestartBackoffMax bound the exponential delay
	// between restarts of a crashed app-server (defaults 250ms and 30s).
	RestartBackoffMin time.Duration
	RestartBackoffMax time.Duration
	// StopGrace is how long Close lets the app-server exit after its stdin
	// closes before it is killed (default 3s).
	StopGrace time.Duration
	// MaxLineBytes bounds one JSON-RPC line (default: a quarter of
	// GOMEMLIMIT when set, else 1 GiB). A reply over it fails its call with
	// agent.ErrProviderFailed; any other line over it ends the connection.
	MaxLineBytes int
	// ExperimentalPlanMode forwards ComposerSettings.PlanMode as Codex's
	// collaborationMode on turn/start. That field is experimental in
	// 0.169.0 and needs the experimentalApi capability in the handshake;
	// tuttid's server turns it on. When false, planMode is refused with
	// agent.ErrInvalidSettings.
	ExperimentalPlanMode bool
	// RequireSignIn refuses Start, SendTurn and Fork with
	// agent.ErrNotSignedIn while Codex says it needs a sign-in it does not
	// have (or a turn found its credentials refused), instead of starting a
	// turn Codex retries for minutes. A Codex that cannot report its
	// account is not refused.
	RequireSignIn bool
	// Nice is the app-server's nice value, and so of every command the
	// agent runs (--agent-nice); 0 keeps tuttid's.
	Nice int
	// SpoolDir is where a fork whose history comes in its reply spools
	// the turns as they are decoded (forkspool.go); empty is os.TempDir.
	SpoolDir string
	// OnSent, when set, is called with a request's method once it is
	// written to the app-server. tuttid's crash tests use it to stop the
	// process while Codex handles a request.
	OnSent func(method string)
}

func (c Config) withDefaults() Config {
	if c.Bin == "" {
		c.Bin = "codex"
	}
	if len(c.Args) == 0 {
		c.Args = []string{"app-server"}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.ClientVersion == "" {
		c.ClientVersion = "dev"
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 60 * time.Second
	}
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = 60 * time.Second
	}
	if c.RestartBackoffMin <= 0 {
		c.RestartBackoffMin = 250 * time.Millisecond
	}
	if c.RestartBackoffMax < c.RestartBackoffMin {
		c.RestartBackoffMax = max(30*time.Second, c.RestartBackoffMin)
	}
	if c.StopGrace <= 0 {
		c.StopGrace = 3 * time.Second
	}
	if c.MaxLineBytes <= 0 {
		c.MaxLineBytes = jsonrpc.DefaultMaxLineBytes()
	}
	return c
}
