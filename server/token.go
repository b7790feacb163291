package server

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// MinTokenLen bounds how short a --token may be.
const MinTokenLen = 16

// TokenFile is where tuttid keeps its generated token: a file named token
// beside the database.
func TokenFile(dbPath string) string { return filepath.Join(filepath.Dir(dbPath), "token") }

// LoadOrCreateToken returns the token kept in path, creating it (256
// random bits, mode 0600) on first use. A token file that other users can
// read is refused: its token may be known to them.
func LoadOrCreateToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return createToken(path)
	}
	if err != nil {
		return "", fmt.Errorf("read the token file: %w", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("read the token file: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("the token file %s can be read by other users (mode %v): delete it to get a new token, or chmod 600 it", path, fi.Mode().Perm())
	}
	tok := strings.TrimSpace(string(b))
	if err := CheckToken(tok); err != nil {
		return "", fmt.Errorf("the token file %s: %w (delete it to get a new token)", path, err)
	}
	return tok, nil
}

func createToken(path string) (string, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("generate a token: %w", err)
	}
	tok := base64.RawURLEncoding.EncodeToString(raw)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("create the token's directory: %w", err)
	}
	// O_EXCL: two first starts at once must not each write their own.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return LoadOrCreateToken(path)
	}
	if err != nil {
		return "", fmt.Errorf("create the token file: %w", err)
	}
	if _, err := f.WriteString(tok + "\n"); err != nil {
		f.Close()
		os.Remove(path)
		return "", fmt.Errorf("write the token file: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return "", fmt.Errorf("write the token file: %w", err)
	}
	return tok, nil
}

// CheckToken refuses a token too short to resist guessing, or one that a
// header or URL would mangle.
func CheckToken(tok string) error {
	if len(tok) < MinTokenLen {
		return fmt.Errorf("the token is shorter than %d characters", MinTokenLen)
	}
	for _, r := range tok {
		if r <= ' ' || r > '~' {
			return errors.New("the token may only hold printable ASCII characters without spaces")
		}
	}
	return nil
}
