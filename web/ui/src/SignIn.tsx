// The page shown when the server wants the token: how to get in, and a
// field to paste the token into (kept in this origin's localStorage, see
// client.ts; the page then reloads on the same view).
import { Button, Card, Code, Flex, Heading, Text, TextField } from "@radix-ui/themes";
import { useState } from "react";
import { getToken, setToken, tokenFromAddress } from "./client";

export function SignIn() {
  const [token, setTyped] = useState("");
  // A token kept from before that the server refuses (a new tuttid token).
  const [refused] = useState(() => getToken() !== "");
  return (
    <main className="signin" data-testid="sign-in">
      <Card size="3">
        <Flex direction="column" gap="3">
          <Heading as="h1" size="5">
            Sign in to tuttid
          </Heading>
          <Text size="2">
            tuttid needs its access token. Open the address it printed when it started (it ends in <Code>?token=…</Code>), or paste the token
            here. The token is in the file <Code>token</Code> beside tuttid's database.
          </Text>
          {refused && (
            <Text size="2" color="red" role="alert" data-testid="token-error">
              {tokenFromAddress
                ? "The token in the address you opened is not this tuttid's: open the address it printed when it last started, or paste its token."
                : "The token this browser kept from an earlier visit is no longer this tuttid's (it got a new one): open its new address, or paste the token."}
            </Text>
          )}
          <form
            onSubmit={(e) => {
              e.preventDefault();
              if (!token.trim()) return;
              setToken(token.trim());
              location.reload();
            }}
          >
            <Flex gap="2">
              <TextField.Root
                type="password"
                aria-label="Token"
                placeholder="token"
                value={token}
                onChange={(e) => setTyped(e.target.value)}
                data-testid="token-input"
                style={{ flex: 1 }}
              />
              <Button type="submit">Sign in</Button>
            </Flex>
          </form>
        </Flex>
      </Card>
    </main>
  );
}
