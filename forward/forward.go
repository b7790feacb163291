// Package forward carries a command to the instance that owns its session.
// A session's Codex thread lives in the app-server of one instance (its
// owner, AgentSession.instance_id); a command that needs that Codex and
// reaches another instance is re-sent, as the same request, to the owner's
// advertise URL with the shared token, and the owner's answer is passed
// back as it is. A forwarded request carries Header and is never forwarded
// again.
package forward

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"tuttid/apperr"
	"tuttid/ent"
	"tuttid/ent/agentsession"
	"tuttid/instance"
)

const (
	// Header marks a forwarded request with the id of the instance that
	// forwarded it. The owner carries it out itself, whatever it finds.
	Header = "X-Tuttid-Forwarded-By"
	// DefaultTimeout bounds a forwarded command from its send to the end
	// of the owner's answer: a fork of a long session takes a while.
	DefaultTimeout = 5 * time.Minute
	// DefaultMaxAnswer bounds the owner's answer in bytes.
	DefaultMaxAnswer = 64 << 20
)

// Config configures a Forwarder.
type Config struct {
	Client   *ent.Client
	Registry *instance.Registry
	// Token is the shared --token, sent as a bearer token ("" with
	// --no-auth).
	Token     string
	Logger    *slog.Logger
	Timeout   time.Duration
	MaxAnswer int64
	// Transport is the HTTP transport (nil: http.DefaultTransport).
	Transport http.RoundTripper
}

// Forwarder decides where a session's commands run and carries them there.
type Forwarder struct {
	client    *ent.Client
	reg       *instance.Registry
	token     string
	log       *slog.Logger
	timeout   time.Duration
	maxAnswer int64
	http      *http.Client
}

// New returns a Forwarder.
func New(cfg Config) *Forwarder {
	f := &Forwarder{client: cfg.Client, reg: cfg.Registry, token: cfg.Token, log: cfg.Logger,
		timeout: cfg.Timeout, maxAnswer: cfg.MaxAnswer}
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	if f.timeout <= 0 {
		f.timeout = DefaultTimeout
	}
	if f.maxAnswer <= 0 {
		f.maxAnswer = DefaultMaxAnswer
	}
	tr := cfg.Transport
	if tr == nil {
		tr = http.DefaultTransport
	}
	// The owner's redirect is its answer: passed back, not followed.
	f.http = &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	return f
}

// Self is this instance's id.
func (f *Forwarder) Self() string { return f.reg.ID() }

// Owner says where a command on the session must run: nil when here (this
// instance owns it, or the session does not exist: this instance answers
// that), the owner when another live instance owns it. An owner that is
// down is apperr.SessionUnavailable naming it. forwardedBy is the Header
// of the request ("" when it came from a client): a forwarded command is
// never forwarded again.
func (f *Forwarder) Owner(ctx context.Context, workspaceID, sessionID, forwardedBy string) (*instance.Info, error) {
	if sessionID == "" {
		return nil, nil
	}
	ids, err := f.client.AgentSession.Query().
		Where(agentsession.ID(sessionID), agentsession.WorkspaceID(workspaceID)).
		Select(agentsession.FieldInstanceID).Strings(ctx)
	if err != nil {
		return nil, apperr.Storage(err, "read the session's instance")
	}
	if len(ids) == 0 || ids[0] == "" || ids[0] == f.reg.ID() {
		return nil, nil
	}
	owner := ids[0]
	if forwardedBy != "" {
		return nil, apperr.New(apperr.SessionUnavailable,
			"session %s is owned by instance %q; instance %q forwarded the command here, and a forwarded command is not forwarded again",
			sessionID, owner, forwardedBy)
	}
	info, err := f.reg.Get(ctx, owner)
	if err != nil {
		return nil, err
	}
	if !info.Alive {
		return nil, apperr.New(apperr.SessionUnavailable,
			"session %s is owned by instance %q, which is down (last heartbeat %s ago); its commands work again when it is back",
			sessionID, owner, time.Since(info.HeartbeatAt).Round(time.Second))
	}
	return &info, nil
}

// Answer is the owner's answer to a forwarded request.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// Send sends the request (method, path and query, headers to keep, body)
// to owner and reads its answer. An owner that cannot be reached, or goes
// away before its answer ends, is apperr.SessionUnavailable naming it: the
// command may or may not have been carried out.
func (f *Forwarder) Send(ctx context.Context, owner *instance.Info, method, pathQuery string, header http.Header, body []byte) (*Answer, error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	u := strings.TrimRight(owner.AdvertiseURL, "/") + pathQuery
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return nil, apperr.Wrap(err, apperr.SessionUnavailable, "instance %q has an advertise URL that does not work", owner.ID)
	}
	for _, k := range []string{"Content-Type", "Accept"} {
		if v := header.Get(k); v != "" {
			req.Header.Set(k, v)
		}
	}
	if f.token != "" {
		req.Header.Set("Authorization", "Bearer "+f.token)
	}
	req.Header.Set(Header, f.reg.ID())
	start := time.Now()
	resp, err := f.http.Do(req)
	if err != nil {
		return nil, f.lost(ctx, owner, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, f.maxAnswer+1))
	if err != nil {
		return nil, f.lost(ctx, owner, err)
	}
	if int64(len(b)) > f.maxAnswer {
		return nil, apperr.New(apperr.ResultTooLarge, "instance %q answered more than %d bytes", owner.ID, f.maxAnswer)
	}
	f.log.DebugContext(ctx, "forward: command carried out by its owner", "instance", owner.ID, "path", req.URL.Path,
		"status", resp.StatusCode, "took", time.Since(start))
	return &Answer{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

func (f *Forwarder) lost(ctx context.Context, owner *instance.Info, err error) error {
	what := "did not answer"
	if errors.Is(err, context.DeadlineExceeded) {
		what = fmt.Sprintf("did not answer within %s", f.timeout)
	}
	f.log.WarnContext(ctx, "forward: the owner did not answer", "instance", owner.ID, "err", err)
	return apperr.Wrap(err, apperr.SessionUnavailable,
		"instance %q, which owns the session, %s (it may have stopped while carrying out the command; read the session to see whether it was)",
		owner.ID, what)
}
