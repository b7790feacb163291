package codex

import (
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"
)

// A strict JSON scanner for the bytes of a large reply (a fork's history:
// megabytes of escaped text). encoding/json validates a value before it
// decodes it and steps through every byte of a string with its state
// machine; profiled on an 80 MB fork those passes were most of tuttid's
// time. This scanner finds a value's extent in one tight pass, accepting
// exactly what JSON allows (so it never takes a value encoding/json would
// refuse), and leaves decoding of anything unusual to encoding/json.

var (
	// errShort: the input ended inside a value (more may come).
	errShort  = errors.New("json: value continues past the input")
	errSyntax = errors.New("json: syntax error")
)

// maxScanDepth bounds nesting (encoding/json allows 10,000).
const maxScanDepth = 10000

// skipSpace returns the index of the first non-space byte at or after i.
func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// scanValue returns the end (exclusive) of the JSON value starting at b[i]
// (no leading space). It reaches the end of b only with errShort: a
// number is never taken as ended by the input's end.
func scanValue(b []byte, i int) (int, error) {
	return scanValueDepth(b, i, 0, false)
}

// scanWhole is scanValue on input known to be complete: a number may end
// at its end.
func scanWhole(b []byte, i int) (int, error) {
	return scanValueDepth(b, i, 0, true)
}

func scanValueDepth(b []byte, i, depth int, complete bool) (int, error) {
	if i >= len(b) {
		return i, errShort
	}
	switch c := b[i]; {
	case c == '"':
		return scanString(b, i)
	case c == '{' || c == '[':
		if depth >= maxScanDepth {
			return i, errSyntax
		}
		return scanComposite(b, i, depth+1)
	case c == '-' || (c >= '0' && c <= '9'):
		return scanNumber(b, i, complete)
	case c == 't':
		return scanLiteral(b, i, "true")
	case c == 'f':
		return scanLiteral(b, i, "false")
	case c == 'n':
		return scanLiteral(b, i, "null")
	}
	return i, errSyntax
}

func scanComposite(b []byte, i, depth int) (int, error) {
	object := b[i] == '{'
	closing := byte(']')
	if object {
		closing = '}'
	}
	i = skipSpace(b, i+1)
	if i >= len(b) {
		return i, errShort
	}
	if b[i] == closing {
		return i + 1, nil
	}
	for {
		var err error
		if object {
			if i >= len(b) {
				return i, errShort
			}
			if b[i] != '"' {
				return i, errSyntax
			}
			if i, err = scanString(b, i); err != nil {
				return i, err
			}
			i = skipSpace(b, i)
			if i >= len(b) {
				return i, errShort
			}
			if b[i] != ':' {
				return i, errSyntax
			}
			i = skipSpace(b, i+1)
		}
		if i, err = scanValueDepth(b, i, depth, false); err != nil {
			return i, err
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return i, errShort
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case closing:
			return i + 1, nil
		default:
			return i, errSyntax
		}
	}
}

// scanString returns the end of the string starting at b[i] ('"').
func scanString(b []byte, i int) (int, error) {
	i++
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			return i + 1, nil
		case c == '\\':
			if i+1 >= len(b) {
				return i, errShort
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return i, errShort
				}
				for _, h := range b[i+2 : i+6] {
					if !isHex(h) {
						return i, errSyntax
					}
				}
				i += 6
			default:
				return i, errSyntax
			}
		case c < 0x20:
			return i, errSyntax
		default:
			i++
		}
	}
	return i, errShort
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// scanNumber: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func scanNumber(b []byte, i int, complete bool) (int, error) {
	digits := func(i int) (int, error) {
		if i >= len(b) {
			return i, errShort
		}
		if !isDigit(b[i]) {
			return i, errSyntax
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
		return i, nil
	}
	if b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return i, errShort
	}
	var err error
	if b[i] == '0' {
		i++
	} else if i, err = digits(i); err != nil {
		return i, err
	}
	if i < len(b) && b[i] == '.' {
		if i, err = digits(i + 1); err != nil {
			return i, err
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i, err = digits(i); err != nil {
			return i, err
		}
	}
	if i >= len(b) && !complete {
		return i, errShort // more digits may follow
	}
	return i, nil
}

func scanLiteral(b []byte, i int, lit string) (int, error) {
	for k := 0; k < len(lit); k++ {
		if i+k >= len(b) {
			return i, errShort
		}
		if b[i+k] != lit[k] {
			return i, errSyntax
		}
	}
	return i + len(lit), nil
}

// objectMembers calls f with each member of the object b (a whole, valid
// value, as scanValue found it): the key still quoted, and the value.
func objectMembers(b []byte, f func(key, value []byte) error) error {
	if len(b) == 0 || b[0] != '{' {
		return errSyntax
	}
	i := skipSpace(b, 1)
	if i < len(b) && b[i] == '}' {
		return nil
	}
	for i < len(b) {
		kend, err := scanString(b, i)
		if err != nil {
			return err
		}
		key := b[i:kend]
		i = skipSpace(b, kend)
		if i >= len(b) || b[i] != ':' {
			return errSyntax
		}
		i = skipSpace(b, i+1)
		vend, err := scanValue(b, i)
		if err != nil {
			return err
		}
		if err := f(key, b[i:vend]); err != nil {
			return err
		}
		i = skipSpace(b, vend)
		if i >= len(b) {
			return errSyntax
		}
		if b[i] == '}' {
			return nil
		}
		i = skipSpace(b, i+1)
	}
	return errSyntax
}

// arrayElements calls f with each element of the array b (whole, valid).
func arrayElements(b []byte, f func(value []byte) error) error {
	if len(b) == 0 || b[0] != '[' {
		return errSyntax
	}
	i := skipSpace(b, 1)
	if i < len(b) && b[i] == ']' {
		return nil
	}
	for i < len(b) {
		end, err := scanValue(b, i)
		if err != nil {
			return err
		}
		if err := f(b[i:end]); err != nil {
			return err
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return errSyntax
		}
		if b[i] == ']' {
			return nil
		}
		i = skipSpace(b, i+1)
	}
	return errSyntax
}

// unquote decodes a JSON string exactly as json.Unmarshal into a string
// does ("" for anything else, as str always answered): the common case
// (valid UTF-8, the short escapes) here, the rest by encoding/json.
func unquote(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return unquoteStd(raw)
	}
	body := raw[1 : len(raw)-1]
	var out strings.Builder
	out.Grow(len(body))
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '\\' && i+1 < len(body):
			var r byte
			switch body[i+1] {
			case '"', '\\', '/':
				r = body[i+1]
			case 'b':
				r = '\b'
			case 'f':
				r = '\f'
			case 'n':
				r = '\n'
			case 'r':
				r = '\r'
			case 't':
				r = '\t'
			default: // \u and anything odd
				return unquoteStd(raw)
			}
			out.WriteByte(r)
			i += 2
		case c == '\\' || c == '"' || c < 0x20:
			return unquoteStd(raw)
		default:
			start := i
			for i < len(body) && body[i] != '\\' && body[i] != '"' && body[i] >= 0x20 {
				i++
			}
			out.Write(body[start:i])
		}
	}
	if !utf8.ValidString(out.String()) {
		// encoding/json replaces invalid bytes with U+FFFD.
		return unquoteStd(raw)
	}
	return out.String(), true
}

func unquoteStd(raw []byte) (string, bool) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// wholeValue says whether b is exactly one valid JSON value (with space
// around it), as json.Unmarshal requires.
func wholeValue(b []byte) bool {
	end, err := scanWhole(b, skipSpace(b, 0))
	return err == nil && skipSpace(b, end) == len(b)
}
