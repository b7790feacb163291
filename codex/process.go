package codex

import (
	"context"
	"errors"
	"fmt"
	"os/exec"

	"tuttid/agent"
	"tuttid/codex/appserver"
	"tuttid/jsonrpc"
)

// process is one running app-server (with the Conn talking to it) and
// which launch it is.
type process struct {
	*appserver.Process
	gen uint64 // which launch this is; threads loaded here remember it
}

// resolveBin finds the executable, with an error that says how to fix it.
func resolveBin(bin string) (string, error) {
	path, err := exec.LookPath(bin)
	if err != nil {
		return "", fmt.Errorf("%w: codex binary %q not found (%v): install it (npm install -g @openai/codex) or point tuttid at it with --codex-bin or CODEX_BIN",
			agent.ErrRuntimeUnavailable, bin, err)
	}
	return path, nil
}

// spawn starts the app-server and performs the initialize handshake.
func spawn(ctx context.Context, cfg Config, gen uint64, h jsonrpc.Handlers) (*process, error) {
	path, err := resolveBin(cfg.Bin)
	if err != nil {
		return nil, err
	}
	ap, err := appserver.Start(appserver.Config{
		Path:         path,
		Args:         cfg.Args,
		Env:          childEnv(cfg.Env),
		MaxLineBytes: cfg.MaxLineBytes,
		Nice:         cfg.Nice,
		Logger:       cfg.Logger,
		Handlers:     h,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", agent.ErrRuntimeUnavailable, err)
	}
	p := &process{Process: ap, gen: gen}
	if err := p.handshake(ctx, cfg); err != nil {
		p.Kill()
		<-p.Exited()
		if tail := p.Stderr(); tail != "" {
			err = fmt.Errorf("%w; codex said: %s", err, tail)
		}
		return nil, err
	}
	cfg.Logger.Info("codex app-server started", "bin", path, "gen", gen, "pid", p.Pid())
	return p, nil
}

func (p *process) handshake(ctx context.Context, cfg Config) error {
	ctx, cancel := context.WithTimeout(ctx, cfg.HandshakeTimeout)
	defer cancel()
	type clientInfo struct {
		Name    string  `json:"name"`
		Title   *string `json:"title"`
		Version string  `json:"version"`
	}
	type capabilities struct {
		ExperimentalAPI    bool `json:"experimentalApi"`
		RequestAttestation bool `json:"requestAttestation"`
	}
	params := struct {
		ClientInfo   clientInfo    `json:"clientInfo"`
		Capabilities *capabilities `json:"capabilities"`
	}{ClientInfo: clientInfo{Name: "tuttid", Version: cfg.ClientVersion}}
	if cfg.ExperimentalPlanMode {
		params.Capabilities = &capabilities{ExperimentalAPI: true}
	}
	if err := p.Conn().Call(ctx, "initialize", params, nil); err != nil {
		return handshakeError(callError("initialize", err))
	}
	if err := p.Conn().Notify("initialized", nil); err != nil {
		return handshakeError(callError("initialized", err))
	}
	return nil
}

func handshakeError(err error) error {
	if errors.Is(err, agent.ErrRuntimeUnavailable) {
		return fmt.Errorf("codex app-server handshake: %w", err)
	}
	return fmt.Errorf("%w: codex app-server handshake: %v", agent.ErrRuntimeUnavailable, err)
}
