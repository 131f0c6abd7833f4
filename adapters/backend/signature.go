package backend

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
)

// Limits and names fixed by docs/protocol.md ("Signatures").
const (
	// SignatureHeader carries "t=<unix seconds>,v1=<hex>[,v1=<hex>…]".
	SignatureHeader = "Approvals-Signature"
	// MaxBody is the largest request or response body, in bytes, either way.
	MaxBody = 1 << 20
	// MaxSkew is how far t may be from the receiver's clock, either way.
	MaxSkew = 300 * time.Second
	// MaxSignatures caps the v1 entries of one header, bounding the HMAC
	// work an unauthenticated request can cause.
	MaxSignatures = 8
)

// ErrBadSignature is Verify's error for a request to answer 401; the
// wrapped reason never contains a secret or a signature value.
var ErrBadSignature = errors.New("bad signature")

// Sign returns the header value that signs body at time t with secret:
// "t=<unix seconds>,v1=<lowercase hex HMAC-SHA256(secret, t + "." + body)>".
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, ts, body))
}

// SignAll signs body with every secret, one v1 entry each, as a sender
// does while secrets rotate.
func SignAll(secrets [][]byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	var b strings.Builder
	b.WriteString("t=")
	b.WriteString(ts)
	for _, s := range secrets {
		b.WriteString(",v1=")
		b.WriteString(hex.EncodeToString(mac(s, ts, body)))
	}
	return b.String()
}

func mac(secret []byte, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Verifier checks the signature header of a received request. A replay
// within MaxSkew verifies again: receivers are idempotent.
type Verifier struct {
	// Secrets are the valid secrets; empty ones are ignored, since anybody
	// can compute an HMAC with an empty key.
	Secrets [][]byte
	// Now is the receiver's clock; nil means time.Now.
	Now func() time.Time
}

// Verify accepts header as a signature of body, or returns an error
// wrapping ErrBadSignature. The header is exactly one t and 1 to
// MaxSignatures v1, in one spelling each (docs/design.md#the-backend-client).
func (v Verifier) Verify(header string, body []byte) error {
	if header == "" {
		return badSignature("no " + SignatureHeader + " header")
	}
	// One part more than allowed detects "too many" without splitting an
	// arbitrarily long header.
	parts := strings.SplitN(header, ",", MaxSignatures+2)
	if len(parts) > MaxSignatures+1 {
		return badSignature(fmt.Sprintf("more than %d elements", MaxSignatures+1))
	}
	var (
		ts   string
		hasT bool
		sigs [][]byte
	)
	for _, p := range parts {
		key, val, ok := strings.Cut(p, "=")
		if !ok {
			return badSignature("an element is not key=value")
		}
		switch key {
		case "t":
			if hasT {
				return badSignature("t appears twice")
			}
			ts, hasT = val, true
		case "v1":
			sig, ok := decodeV1(val)
			if !ok {
				return badSignature("a v1 is not 64 lowercase hex digits")
			}
			sigs = append(sigs, sig)
		default:
			return badSignature("unknown element key")
		}
	}
	if !hasT {
		return badSignature("no t")
	}
	if len(sigs) == 0 {
		return badSignature("no v1")
	}
	sent, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || strconv.FormatInt(sent, 10) != ts {
		return badSignature("t is not decimal unix seconds")
	}
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	// Whole seconds on both sides, so |now − t| ≤ 300 s holds exactly as
	// docs/protocol.md states it; now.Unix() ± skew cannot overflow.
	nowS, skew := now().Unix(), int64(MaxSkew/time.Second)
	if sent < nowS-skew {
		return badSignature(fmt.Sprintf("t is more than %ds in the past", skew))
	}
	if sent > nowS+skew {
		return badSignature(fmt.Sprintf("t is more than %ds in the future", skew))
	}
	usable := 0
	for _, secret := range v.Secrets {
		if len(secret) == 0 {
			continue
		}
		usable++
		want := mac(secret, ts, body)
		for _, sig := range sigs {
			if hmac.Equal(want, sig) {
				return nil
			}
		}
	}
	if usable == 0 {
		return badSignature("no secret configured")
	}
	return badSignature("no v1 matches a configured secret")
}

// decodeV1 decodes exactly 64 lowercase hex digits.
func decodeV1(s string) ([]byte, bool) {
	if len(s) != 2*sha256.Size {
		return nil, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return nil, false
		}
	}
	b, err := hex.DecodeString(s)
	return b, err == nil
}

func badSignature(reason string) error {
	return fmt.Errorf("%w: %s", ErrBadSignature, reason)
}

// String keeps secrets out of %v and %+v.
func (v Verifier) String() string {
	return fmt.Sprintf("backend.Verifier{Secrets: %s}", redactedSecrets(v.Secrets))
}

// GoString keeps secrets out of %#v.
func (v Verifier) GoString() string { return v.String() }

// LogValue keeps secrets out of slog's JSON handler.
func (v Verifier) LogValue() slog.Value {
	return slog.StringValue(v.String())
}

// redactedSecrets says how many secrets there are, never what they are.
func redactedSecrets(secrets [][]byte) string {
	return fmt.Sprintf("[%d × <secret>]", len(secrets))
}
