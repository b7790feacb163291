// The page shown when the server wants the token: how to get in, and a
// field to paste the token into (it goes to /app?token=..., which sets the
// cookie and comes back without it).
import { Button, Card, Code, Flex, Heading, Text, TextField } from "@radix-ui/themes";
import { useState } from "react";

export function SignIn() {
  const [token, setToken] = useState("");
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
          <form
            onSubmit={(e) => {
              e.preventDefault();
              if (token.trim()) location.assign(`${location.pathname}?token=${encodeURIComponent(token.trim())}${location.hash}`);
            }}
          >
            <Flex gap="2">
              <TextField.Root
                type="password"
                aria-label="Token"
                placeholder="token"
                value={token}
                onChange={(e) => setToken(e.target.value)}
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
