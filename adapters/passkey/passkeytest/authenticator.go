// Package passkeytest is a software WebAuthn authenticator for tests: it
// answers the creation and request options the passkey package sends a
// browser with the JSON a browser would post back (attestation "none",
// ES256 keys), and lets a test spoil each part an attacker or a broken
// device could: the user verification flag, the signature count, the
// origin, the challenge, the credential.
package passkeytest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
)

// Authenticator holds credentials and answers ceremonies as a platform
// authenticator with user verification would. Safe for concurrent use.
type Authenticator struct {
	// Origin is what the client data says the page's origin was, as a
	// browser on the bot's page says it ("http://localhost:8080").
	Origin string

	mu    sync.Mutex
	creds []*Credential
}

// Credential is one key the authenticator made.
type Credential struct {
	ID         []byte
	Key        *ecdsa.PrivateKey
	RPID       string
	UserHandle []byte
	// Count is the signature count the next assertion carries, less one:
	// each assertion adds one first. A test sets it back to play a clone.
	Count uint32
}

// IDText is the credential id as the passkey package writes it.
func (c *Credential) IDText() string { return base64.RawURLEncoding.EncodeToString(c.ID) }

// Spoil changes one answer: a test sets the fields it means to break.
type Spoil struct {
	// NoUserVerification leaves the UV flag off.
	NoUserVerification bool
	// Origin replaces the authenticator's Origin in the client data.
	Origin string
	// Challenge replaces the challenge the options carried.
	Challenge []byte
	// CrossOrigin says the page was framed by another site.
	CrossOrigin bool
	// KeepCount signs with the count as it is, not one more.
	KeepCount bool
}

// New is an authenticator for pages at origin.
func New(origin string) *Authenticator { return &Authenticator{Origin: origin} }

func text(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func bytesOf(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(s)
}

// Flags of authenticator data.
const (
	flagUP = 0x01
	flagUV = 0x04
	flagAT = 0x40
)

// creationOptions is what Create reads of {"publicKey": …}.
type creationOptions struct {
	PublicKey struct {
		Challenge string `json:"challenge"`
		RP        struct {
			ID string `json:"id"`
		} `json:"rp"`
		User struct {
			ID string `json:"id"`
		} `json:"user"`
		Exclude []struct {
			ID string `json:"id"`
		} `json:"excludeCredentials"`
	} `json:"publicKey"`
}

// Create answers creation options (the JSON of {"publicKey": …}) with a
// new credential's JSON, as navigator.credentials.create's result
// serialises.
func (a *Authenticator) Create(optionsJSON []byte, spoil Spoil) ([]byte, *Credential, error) {
	var o creationOptions
	if err := json.Unmarshal(optionsJSON, &o); err != nil {
		return nil, nil, fmt.Errorf("passkeytest: creation options: %w", err)
	}
	challenge, err := bytesOf(o.PublicKey.Challenge)
	if err != nil {
		return nil, nil, fmt.Errorf("passkeytest: challenge: %w", err)
	}
	user, err := bytesOf(o.PublicKey.User.ID)
	if err != nil {
		return nil, nil, fmt.Errorf("passkeytest: user id: %w", err)
	}
	a.mu.Lock()
	for _, ex := range o.PublicKey.Exclude {
		for _, c := range a.creds {
			if ex.ID == c.IDText() {
				a.mu.Unlock()
				return nil, nil, errors.New("passkeytest: a credential of this authenticator is excluded (InvalidStateError)")
			}
		}
	}
	a.mu.Unlock()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	c := &Credential{ID: id, Key: key, RPID: o.PublicKey.RP.ID, UserHandle: user}

	pub, err := key.PublicKey.ECDH()
	if err != nil {
		return nil, nil, err
	}
	point := pub.Bytes() // 0x04 ‖ X ‖ Y
	cose, err := webauthncbor.Marshal(webauthncose.EC2PublicKeyData{
		PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.EllipticKey), Algorithm: int64(webauthncose.AlgES256)},
		Curve:         int64(webauthncose.P256), XCoord: point[1:33], YCoord: point[33:]})
	if err != nil {
		return nil, nil, err
	}
	flags := byte(flagUP | flagAT)
	if !spoil.NoUserVerification {
		flags |= flagUV
	}
	auth := authData(c.RPID, flags, 0)
	auth = append(auth, make([]byte, 16)...) // AAGUID: none
	auth = binary.BigEndian.AppendUint16(auth, uint16(len(id)))
	auth = append(auth, id...)
	auth = append(auth, cose...)
	attObj, err := webauthncbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": auth})
	if err != nil {
		return nil, nil, err
	}
	cdj := a.clientData("webauthn.create", challenge, spoil)
	out, err := json.Marshal(map[string]any{
		"id": text(id), "rawId": text(id), "type": "public-key", "authenticatorAttachment": "platform",
		"clientExtensionResults": map[string]any{},
		"response": map[string]any{"clientDataJSON": text(cdj), "attestationObject": text(attObj),
			"transports": []string{"internal"}},
	})
	if err != nil {
		return nil, nil, err
	}
	a.mu.Lock()
	a.creds = append(a.creds, c)
	a.mu.Unlock()
	return out, c, nil
}

// requestOptions is what Get reads of {"publicKey": …}.
type requestOptions struct {
	PublicKey struct {
		Challenge string `json:"challenge"`
		RPID      string `json:"rpId"`
		Allow     []struct {
			ID string `json:"id"`
		} `json:"allowCredentials"`
	} `json:"publicKey"`
}

// Get answers request options with an assertion by c, which need not
// be allowed by them (a test of a credential that is not the member's
// passes one); nil picks the first allowed credential the authenticator
// holds.
func (a *Authenticator) Get(optionsJSON []byte, c *Credential, spoil Spoil) ([]byte, error) {
	var o requestOptions
	if err := json.Unmarshal(optionsJSON, &o); err != nil {
		return nil, fmt.Errorf("passkeytest: request options: %w", err)
	}
	challenge, err := bytesOf(o.PublicKey.Challenge)
	if err != nil {
		return nil, fmt.Errorf("passkeytest: challenge: %w", err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if c == nil {
		for _, al := range o.PublicKey.Allow {
			for _, held := range a.creds {
				if al.ID == held.IDText() && c == nil {
					c = held
				}
			}
		}
		if c == nil {
			return nil, errors.New("passkeytest: no allowed credential is held (NotAllowedError)")
		}
	}
	if !spoil.KeepCount {
		c.Count++
	}
	flags := byte(flagUP)
	if !spoil.NoUserVerification {
		flags |= flagUV
	}
	auth := authData(o.PublicKey.RPID, flags, c.Count)
	cdj := a.clientData("webauthn.get", challenge, spoil)
	cdHash := sha256.Sum256(cdj)
	digest := sha256.Sum256(append(append([]byte{}, auth...), cdHash[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, c.Key, digest[:])
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{
		"id": c.IDText(), "rawId": c.IDText(), "type": "public-key", "authenticatorAttachment": "platform",
		"clientExtensionResults": map[string]any{},
		"response": map[string]any{"clientDataJSON": text(cdj), "authenticatorData": text(auth),
			"signature": text(sig), "userHandle": text(c.UserHandle)},
	})
}

// authData is the fixed part of authenticator data.
func authData(rpID string, flags byte, count uint32) []byte {
	h := sha256.Sum256([]byte(rpID))
	out := append(h[:], flags)
	return binary.BigEndian.AppendUint32(out, count)
}

func (a *Authenticator) clientData(typ string, challenge []byte, spoil Spoil) []byte {
	origin := a.Origin
	if spoil.Origin != "" {
		origin = spoil.Origin
	}
	if spoil.Challenge != nil {
		challenge = spoil.Challenge
	}
	b, _ := json.Marshal(map[string]any{"type": typ, "challenge": text(challenge), "origin": origin,
		"crossOrigin": spoil.CrossOrigin})
	return b
}
