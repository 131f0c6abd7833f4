package approval

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// Canonical JSON is RFC 8785, made by github.com/gowebpki/jcs; why
// Canonicalize wraps it: docs/design.md#canonical-json.

// CanonicalMaxDepth bounds the nesting Canonicalize accepts, so that a
// hostile document cannot cost deep recursion.
const CanonicalMaxDepth = 1000

// digestPrefix starts every args_sha256 (docs/protocol.md).
const digestPrefix = "sha256:"

// Errors Canonicalize wraps, so callers can tell a bad document from a
// document we refuse on purpose.
var (
	// ErrInvalidJSON: the input is not one JSON text (syntax, duplicate
	// keys, lone surrogates, trailing data).
	ErrInvalidJSON = errors.New("invalid JSON")
	// ErrInvalidUTF8: the input is not UTF-8, which RFC 8785 requires.
	ErrInvalidUTF8 = errors.New("invalid UTF-8")
	// ErrTooDeep: arrays and objects nest deeper than CanonicalMaxDepth.
	ErrTooDeep = errors.New("nested too deep")
	// ErrNumberRange: a number is not a finite double (1e400).
	ErrNumberRange = errors.New("number out of range")
)

// Canonicalize returns the RFC 8785 form of the JSON text raw. Errors wrap
// ErrInvalidJSON, ErrInvalidUTF8, ErrTooDeep or ErrNumberRange and quote at
// most one character of raw. Numbers too small for a double (1e-400) round
// to 0, as JSON.parse does.
func Canonicalize(raw []byte) ([]byte, error) {
	if !utf8.Valid(raw) {
		return nil, fmt.Errorf("canonicalize: %w", ErrInvalidUTF8)
	}
	if err := precheck(raw); err != nil {
		return nil, fmt.Errorf("canonicalize: %w", err)
	}
	out, err := jcs.Transform(raw)
	if err != nil {
		return nil, fmt.Errorf("canonicalize: %w", classify(raw, err))
	}
	return out, nil
}

// Digest returns "sha256:" and the lowercase hex SHA-256 of the canonical
// form of raw: the args_sha256 of the arguments raw.
func Digest(raw []byte) (string, error) {
	c, err := Canonicalize(raw)
	if err != nil {
		return "", fmt.Errorf("digest: %w", err)
	}
	sum := sha256.Sum256(c)
	return digestPrefix + hex.EncodeToString(sum[:]), nil
}

// ValidDigest reports whether s has the form of a digest: "sha256:" and 64
// lowercase hex digits. Uppercase is refused because digests are compared
// as strings.
func ValidDigest(s string) bool {
	if len(s) != len(digestPrefix)+2*sha256.Size || s[:len(digestPrefix)] != digestPrefix {
		return false
	}
	for i := len(digestPrefix); i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// precheck enforces CanonicalMaxDepth and finds numbers that overflow a
// double before jcs sees them; syntax it leaves to jcs.
func precheck(raw []byte) error {
	depth := 0
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '"':
			for i++; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
		case c == '[' || c == '{':
			depth++
			if depth > CanonicalMaxDepth {
				return fmt.Errorf("%w: more than %d levels at byte %d", ErrTooDeep, CanonicalMaxDepth, i)
			}
		case c == ']' || c == '}':
			depth--
		case c == '-' || (c >= '0' && c <= '9'):
			start := i
			for i+1 < len(raw) && isNumberByte(raw[i+1]) {
				i++
			}
			_, err := strconv.ParseFloat(string(raw[start:i+1]), 64)
			if errors.Is(err, strconv.ErrRange) {
				// ParseFloat reports ErrRange only for overflow to ±Inf;
				// underflow rounds to 0 without error.
				return fmt.Errorf("%w: number at byte %d is not a finite double", ErrNumberRange, start)
			}
		}
	}
	return nil
}

func isNumberByte(c byte) bool {
	return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

// classify turns a jcs error into ours without jcs's text, which may quote
// the input: a syntax error, or (duplicate keys, lone surrogates) a kind.
func classify(raw []byte, jcsErr error) error {
	if !json.Valid(raw) {
		return syntaxError(raw)
	}
	return fmt.Errorf("%w: duplicate key, lone surrogate or other I-JSON violation", ErrInvalidJSON)
}

// syntaxError says why raw is not JSON; encoding/json's message quotes one
// character at most, so it is safe to log.
func syntaxError(raw []byte) error {
	var syn *json.SyntaxError
	if err := json.Unmarshal(raw, new(json.RawMessage)); errors.As(err, &syn) {
		return fmt.Errorf("%w at byte %d: %s", ErrInvalidJSON, syn.Offset, syn.Error())
	}
	return ErrInvalidJSON
}
