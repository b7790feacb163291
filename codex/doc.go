// Package codex implements agent.Runtime on top of the Codex app-server
// (`codex app-server`), a JSON-RPC peer on a child process's stdio.
//
// One app-server process is shared by every session. The Runtime
// supervises it: it performs the initialize handshake, restarts the process
// with exponential backoff when it dies, reports the turns that the crash
// killed, and re-loads (thread/resume) each thread lazily before its next
// turn. Codex threads are Tutti provider sessions; Codex turns and items are
// projected to agent.RuntimeTurn and agent.RuntimeMessage.
//
// The child process (its process group, the watchdog that kills it with
// tuttid, its stderr, stop and reaping) is package codex/appserver; the
// JSON-RPC peer over its stdio is package jsonrpc (calls, notifications,
// Codex's requests, the line bound). This package gives their failures
// their meaning (errors.go's callError: a stream that ended is
// agent.ErrRuntimeUnavailable, a reply over the line bound
// agent.ErrProviderFailed).
//
// Where things are: runtime.go is the Runtime and what it remembers of
// threads; supervisor.go launches, watches and restarts the process and
// calls it; process.go is one launch (the binary found, the child started,
// the initialize handshake; env.go its environment); adapter.go the agent.Runtime methods (thread/start,
// turn/start, fork, history); history.go reads a thread in
// thread/turns/list pages; forkreply.go decodes a fork's reply turn by turn
// (a jsonrpc.ReplyDecoder) with jsonscan.go's strict scanner, into a
// historyspool spool (failedhistory.go: a history stream that failed
// before its first page); params.go the requests and the
// settings that build them, wire.go the replies and notifications as Codex
// sends them; events.go and items.go turn notifications and items into
// agent events and messages; approvals.go answers what Codex asks;
// threads.go lists and archives threads (the fork journal's search);
// errors.go maps Codex's errors to agent's. account.go implements
// agent.Accounts (account/*: sign-in state kept current from Codex's
// notifications, logins, logout, rate limits) and refuses turns while
// Codex is not signed in (Config.RequireSignIn); models.go is model/list
// and the reasoning efforts each model takes; steer.go is turn/steer;
// events_account.go and wire_account.go project the notifications of
// accounts, usage, retries and warnings; failure.go reads codexErrorInfo.
//
// The package knows nothing of storage, SQL or GraphQL.
package codex
