package server

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"tuttid/store"
)

// MinTokenBits is the strength a token must have, counted from its
// length and the smallest alphabet that holds it (CheckToken).
const MinTokenBits = 128

// minTokenDistinct refuses a long run of a few characters ("aaaa…"),
// which the length count alone would take for a strong token.
const minTokenDistinct = 8

// TokenFile is where tuttid keeps its generated token: a file named token
// beside the database.
func TokenFile(dbPath string) string { return filepath.Join(filepath.Dir(dbPath), "token") }

// LoadOrCreateToken returns the token kept in path, creating it (256
// random bits, mode 0600) on first use. A token file that other users can
// read is refused (its token may be known to them), and so is one another
// user owns (they chose its token) or may write.
func LoadOrCreateToken(path string) (string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return createToken(path)
	}
	if err != nil {
		return "", fmt.Errorf("read the token file: %w", err)
	}
	defer f.Close()
	// The open file's own metadata: the file checked is the file read.
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("read the token file: %w", err)
	}
	// Another user's token file holds a token that user chose.
	if err := store.CheckOwned("the token file", path, fi); err != nil {
		return "", err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("the token file %s can be read by other users (mode %v): delete it to get a new token, or chmod 600 it", path, fi.Mode().Perm())
	}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", fmt.Errorf("read the token file: %w", err)
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

// CheckToken refuses a token that a header or URL would mangle, or one
// with fewer than MinTokenBits: its length times the bits a character
// carries in the smallest alphabet that holds it, so at least 32 hex
// digits, 22 base64url characters, or 20 other printable ASCII characters
// (openssl rand -hex 16 and -base64 16 pass). The message never holds the
// token.
func CheckToken(tok string) error {
	distinct := map[rune]bool{}
	for _, r := range tok {
		if r <= ' ' || r > '~' {
			return errors.New("the token may only hold printable ASCII characters without spaces")
		}
		distinct[r] = true
	}
	name, need := tokenAlphabet(tok)
	if len(tok) < need {
		return fmt.Errorf("the token is too weak: %d characters of %s carry fewer than %d bits (need at least %d; 32 hex digits or 22 base64url characters do)",
			len(tok), name, MinTokenBits, need)
	}
	if len(distinct) < minTokenDistinct {
		return fmt.Errorf("the token is too weak: it has fewer than %d different characters", minTokenDistinct)
	}
	return nil
}

// tokenAlphabet names the smallest alphabet holding tok and the length a
// token of it needs for MinTokenBits.
func tokenAlphabet(tok string) (name string, minLen int) {
	isHex, isB64 := true, true
	for _, r := range tok {
		hex := r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F'
		b64 := r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' || r == '_'
		isHex, isB64 = isHex && hex, isB64 && b64
	}
	switch {
	case isHex:
		return "hex digits", 32 // 4 bits each
	case isB64:
		return "base64url", 22 // 6 bits each
	}
	return "printable ASCII", 20 // log2(94) ≈ 6.55 bits each
}
