// The `Sign in to Codex` dialog: shown while Codex has no account (or an
// operation answered agent.provider_not_signed_in). A non-modal
// role="dialog" (no Radix Dialog: its scroll lock injects <style>, which
// the page's CSP refuses). The API key lives in the field until it is
// sent, then the field is emptied.
import { Button, Card, Code, Flex, Heading, Link, Text, TextField } from "@radix-ui/themes";
import { useState } from "react";
import type { CodexAccountHook } from "./state/useCodexAccount";

export function CodexSignIn({ acc }: { acc: CodexAccountHook }) {
  const [key, setKey] = useState("");
  const [sending, setSending] = useState(false);
  if (!acc.open) return null;
  const p = acc.pending;
  const run = async (fn: () => Promise<void>) => {
    setSending(true);
    try {
      await fn();
    } finally {
      setSending(false);
    }
  };
  return (
    <div className="codex-signin" role="dialog" aria-labelledby="codex-signin-title" data-testid="codex-sign-in">
      <Card size="3">
        <Flex direction="column" gap="3">
          <Heading as="h2" size="4" id="codex-signin-title">
            Sign in to Codex
          </Heading>
          <Text size="2">Codex needs an account to run turns. Use an OpenAI API key, ChatGPT in a browser on this machine, or a device code.</Text>
          {acc.error && (
            <Text size="2" color="red" data-testid="codex-sign-in-error">
              {acc.error}
            </Text>
          )}
          <form
            onSubmit={(e) => {
              e.preventDefault();
              const k = key.trim();
              if (!k) return;
              setKey("");
              void run(() => acc.signInWithKey(k));
            }}
          >
            <Flex gap="2" align="center">
              <label htmlFor="codex-api-key">
                <Text size="2">API key</Text>
              </label>
              <TextField.Root
                id="codex-api-key"
                type="password"
                autoComplete="off"
                placeholder="sk-…"
                value={key}
                onChange={(e) => setKey(e.target.value)}
                data-testid="codex-api-key"
                style={{ flex: 1 }}
              />
              <Button type="submit" disabled={sending || !key.trim()}>
                Use API key
              </Button>
            </Flex>
          </form>
          <Flex gap="2">
            <Button variant="soft" disabled={sending || !!p} onClick={() => void run(() => acc.signInWith("CHATGPT"))}>
              Sign in with ChatGPT
            </Button>
            <Button variant="soft" disabled={sending || !!p} onClick={() => void run(() => acc.signInWith("DEVICE_CODE"))}>
              Use a device code
            </Button>
          </Flex>
          {p && (
            <Flex direction="column" gap="2" data-testid="codex-login-pending">
              {p.authUrl && (
                <Text size="2">
                  Open{" "}
                  <Link href={p.authUrl} target="_blank" rel="noreferrer" data-testid="codex-auth-url">
                    the ChatGPT sign-in
                  </Link>{" "}
                  in a browser on this machine; this closes when it is done.
                </Text>
              )}
              {p.userCode && (
                <Text size="2">
                  Open{" "}
                  <Link href={p.verificationUrl} target="_blank" rel="noreferrer" data-testid="codex-verification-url">
                    {p.verificationUrl}
                  </Link>{" "}
                  in any browser and enter <Code data-testid="codex-user-code">{p.userCode}</Code>.
                </Text>
              )}
              <Flex>
                <Button variant="outline" color="gray" onClick={() => void acc.cancelLogin()}>
                  Cancel sign-in
                </Button>
              </Flex>
            </Flex>
          )}
          <Flex justify="end">
            <Button variant="ghost" color="gray" onClick={() => acc.dispatch({ type: "close" })}>
              Not now
            </Button>
          </Flex>
        </Flex>
      </Card>
    </div>
  );
}
