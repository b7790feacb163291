package codextest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Config returns the config.toml that points Codex at the model server at
// modelURL (a base URL ending in /v1, as ModelServer.URL returns) and keeps it
// quiet and offline. Callers may append more TOML to it.
func Config(modelURL string) string {
	return fmt.Sprintf(`# Written by tuttid/codex/codextest: Codex against a local fake model, offline.
model = "mock-model"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "read-only"
# No update check (TUI only, but cheap to rule out).
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = %s
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"
trace_exporter = "none"
metrics_exporter = "none"

[history]
persistence = "none"

[features]
# The plugin sync runs "git ls-remote https://github.com/openai/plugins.git"
# and resolves api.github.com and chatgpt.com at startup.
plugins = false
remote_plugin = false
apps = false
# The shell snapshot runs "bash -lc" over the user's ~/.bashrc: slow and not
# hermetic.
shell_snapshot = false
`, strconv.Quote(modelURL))
}

// WriteCodexHome writes Config(modelURL) as dir/config.toml, creating dir.
// Start codex with CODEX_HOME=dir.
func WriteCodexHome(dir, modelURL string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("codextest: create codex home: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(Config(modelURL)), 0o644); err != nil {
		return fmt.Errorf("codextest: write config.toml: %w", err)
	}
	return nil
}

// NewCodexHome writes a codex home in a new t.TempDir and returns its path.
// Stop the codex process before the test ends: it writes there while running,
// and TempDir's cleanup fails on a directory still being written.
func NewCodexHome(t testing.TB, modelURL string) string {
	t.Helper()
	dir := t.TempDir()
	if err := WriteCodexHome(dir, modelURL); err != nil {
		t.Fatal(err)
	}
	return dir
}

// StrictWorkspaceWrite is TOML to append to Config: the workspace-write
// sandbox then leaves /tmp and $TMPDIR out of its writable roots, so a write
// to another t.TempDir is outside the sandbox and Codex asks for it.
const StrictWorkspaceWrite = `
[sandbox_workspace_write]
exclude_slash_tmp = true
exclude_tmpdir_env_var = true
`

// AppendConfig appends TOML to dir/config.toml.
func AppendConfig(t testing.TB, dir, toml string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(toml); err != nil {
		t.Fatal(err)
	}
}

// OpenAIConfig is Config with Codex's built-in "openai" provider (no
// model_provider line) pointed at the model server by openai_base_url:
// Codex then needs a sign-in (account/read says requiresOpenaiAuth: true)
// and sends the key it was given, as it does against OpenAI.
func OpenAIConfig(modelURL string) string {
	c := Config(modelURL)
	c = strings.Replace(c, `model_provider = "mock"`+"\n", "openai_base_url = "+strconv.Quote(modelURL)+"\n", 1)
	// The mock provider's table stays: unused, it changes nothing.
	return c
}

// NewOpenAICodexHome writes OpenAIConfig(modelURL) in a new t.TempDir.
func NewOpenAICodexHome(t testing.TB, modelURL string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(OpenAIConfig(modelURL)), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
