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
// The package knows nothing of storage, SQL or GraphQL.
package codex
