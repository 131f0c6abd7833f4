package passkey

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"approvalsbot/approval"
	"approvalsbot/internal/memberlimit"
	"approvalsbot/internal/seal"
	"approvalsbot/store"
	"approvalsbot/tenant"
)

// Lifetimes.
const (
	// ChallengeTTL is how long a challenge may be answered: the browser
	// is told as much (the options' timeout).
	ChallengeTTL = 5 * time.Minute
	// EnrolTTL is how long an enrolment link opens its page.
	EnrolTTL = 15 * time.Minute
)

// Store is what the passkeys are kept in; store.Store satisfies it.
type Store interface {
	PasskeyAdd(ctx context.Context, p store.PasskeyAddParams) error
	PasskeyList(ctx context.Context, p store.PasskeyListParams) ([]*store.Passkey, error)
	PasskeyRemove(ctx context.Context, p store.PasskeyRemoveParams) error
	PasskeyUse(ctx context.Context, p store.PasskeyUseParams) error
	PasskeyChallengeAdd(ctx context.Context, c *store.PasskeyChallenge) error
	PasskeyChallengeTake(ctx context.Context, p store.PasskeyChallengeTakeParams) (*store.PasskeyChallenge, error)
}

var _ Store = store.Store(nil)

// Tenants finds a tenant by id; threads.Tenants (the running
// configuration) satisfies it.
type Tenants interface {
	Tenant(id string) (*tenant.Tenant, bool)
}

// Errors a ceremony ends with. Each says, as a sentence a person reads,
// why the passkey was not taken (Why); a store failure is none of them
// and wraps store.ErrUnavailable when it may pass.
var (
	ErrNoPasskey = errors.New("you have no passkey enrolled here: ask the bot for an enrolment link " +
		"(/approvals passkey in Slack or Discord) and add one")
	ErrMissing = errors.New("approving this call needs your passkey, which the page asks for with its script: " +
		"turn JavaScript on for the bot's page and approve again")
	ErrUnknownRequest = errors.New("this passkey request is not one the bot made, or it was altered: ask again")
	ErrUsed           = errors.New("this passkey request was answered already: each is used once, so ask again")
	ErrExpired        = errors.New("this passkey request took longer than 5 minutes to answer: ask again")
	ErrWrongBinding   = errors.New("this passkey request was made for another approval, revision, call or person")
	ErrNotYours       = errors.New("that passkey is not one of yours")
	ErrNotVerified    = errors.New("the passkey did not check that it was you (fingerprint, face or PIN): use a device that does")
	ErrCloned         = errors.New("that passkey's signature counter went backwards, as a copied key's does, so it is refused: " +
		"remove it and enrol your device again")
	ErrRefused     = errors.New("the passkey's answer did not check out")
	ErrEnrolled    = errors.New("that passkey is enrolled already")
	ErrNotMember   = errors.New("this link's person is no longer a member of the tenant")
	ErrLinkBroken  = errors.New("the link is not one this bot made, or it was altered")
	ErrLinkExpired = errors.New("the link has expired: ask the bot for a new one")
)

// reasons are the errors Why says as they are; any other is errUnavailable.
var reasons = []error{ErrNoPasskey, ErrMissing, ErrUnknownRequest, ErrUsed, ErrExpired, ErrWrongBinding, ErrNotYours, ErrNotVerified,
	ErrCloned, ErrRefused, ErrEnrolled, ErrNotMember, ErrLinkBroken, ErrLinkExpired}

var errUnavailable = errors.New("the passkey could not be checked just now: try again in a moment")

// Why is the sentence a person reads for err: the reason's own, or for
// any other failure (a store down) that it could not be checked now.
func Why(err error) string {
	msg := errUnavailable.Error()
	for _, r := range reasons {
		if errors.Is(err, r) {
			msg = r.Error()
			break
		}
	}
	return strings.ToUpper(msg[:1]) + msg[1:] + "."
}

// Binding is what an approval's passkey assertion is bound to: one
// member approving one revision of one approval, having been shown the
// call whose digest is Digest.
type Binding struct {
	Tenant     string
	ApprovalID string
	Revision   int
	Digest     string
	Member     string // the tenant user id ("user:kevin")
}

func (b Binding) valid() bool {
	return b.Tenant != "" && b.ApprovalID != "" && b.Revision >= 1 && b.Member != ""
}

// Request is a ceremony begun: the options the browser passes to
// navigator.credentials.get or create, and the reference it carries
// back with the answer.
type Request struct {
	// Ref names the kept challenge: an opaque, unguessable string.
	Ref string `json:"ref"`
	// Options is the JSON of {"publicKey": …}: the
	// PublicKeyCredentialRequestOptions (an approval) or
	// PublicKeyCredentialCreationOptions (an enrolment), binary fields
	// in unpadded base64url.
	Options json.RawMessage `json:"options"`
	Expires time.Time       `json:"-"`
}

// Used is the passkey an assertion was verified with.
type Used struct {
	ID   string // the credential id, unpadded base64url
	Name string
}

// Options configure New.
type Options struct {
	// PublicURL is the bot's address as a browser reaches it: its host
	// is the relying party id (a name: never an IP address), its scheme,
	// host and port the one origin assertions are taken from. Required.
	PublicURL string
	// Secrets are the link secrets, the signing one first: enrolment
	// links, the page's form checks and sealed bindings are signed with
	// keys of their own derived from them. Required.
	Secrets []string
	Store   Store   // required
	Tenants Tenants // required
	// Name is what the browser calls the relying party when it asks for
	// the device's lock; default "Approvals bot".
	Name string
	// Now is the clock; nil uses time.Now.
	Now func() time.Time
	// Logger gets a line per ceremony that ends and per refusal; nil
	// discards.
	Logger *slog.Logger
}

// Service runs the passkey ceremonies and serves the enrolment page and
// the script (Handler). It is safe for concurrent use.
type Service struct {
	wa      *webauthn.WebAuthn
	links   *Links // enrolment links
	store   Store
	tenants Tenants
	now     func() time.Time
	log     *slog.Logger
	forms   *seal.Sealer // the enrolment page's form checks
	binds   *seal.Sealer // bindings sealed into the decision page
	// asks limits the challenges each member's pages may ask for:
	// each is a row written to the store.
	asks *memberlimit.Limit
}

// Challenges a member's pages may ask for: ChallengeBurst at once, then
// one every ChallengeEvery (each writes a row to the store, and a page
// asks for one per Approve or enrolment).
const (
	ChallengeBurst = 10
	ChallengeEvery = 6 * time.Second
)

// New checks o and builds the service.
func New(o Options) (*Service, error) {
	if o.Store == nil || o.Tenants == nil {
		return nil, errors.New("passkey: Store and Tenants are required")
	}
	rpID, origin, err := RelyingParty(o.PublicURL)
	if err != nil {
		return nil, err
	}
	name := o.Name
	if name == "" {
		name = "Approvals bot"
	}
	wa, err := webauthn.New(&webauthn.Config{
		RPID:          rpID,
		RPDisplayName: name,
		RPOrigins:     []string{origin},
		// RPAllowCrossOrigin stays false: a passkey's yes is given on the
		// bot's own page, never in a frame of another site's.
		AttestationPreference: protocol.PreferNoAttestation,
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			ResidentKey:      protocol.ResidentKeyRequirementPreferred,
			UserVerification: protocol.VerificationRequired,
		},
		Timeouts: webauthn.TimeoutsConfig{
			Login:        webauthn.TimeoutConfig{Timeout: ChallengeTTL, TimeoutUVD: ChallengeTTL},
			Registration: webauthn.TimeoutConfig{Timeout: ChallengeTTL, TimeoutUVD: ChallengeTTL},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("passkey: %w", err)
	}
	s := &Service{wa: wa, store: o.Store, tenants: o.Tenants, now: o.Now, log: o.Logger,
		asks: &memberlimit.Limit{Burst: ChallengeBurst, Every: ChallengeEvery}}
	if s.now == nil {
		s.now = time.Now
	}
	if s.links, err = NewLinks(o.PublicURL, o.Secrets, s.now); err != nil {
		return nil, err
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	for _, k := range []struct {
		dst   **seal.Sealer
		label string
	}{{&s.forms, formKeyLabel}, {&s.binds, bindingKeyLabel}} {
		if *k.dst, err = sealNew(o.Secrets, k.label); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// RelyingParty is the relying party id and the origin of a public URL:
// its host, which must be a name (WebAuthn takes no IP address;
// localhost is a name), and its scheme, host and port.
func RelyingParty(publicURL string) (rpID, origin string, err error) {
	u, err := url.Parse(publicURL)
	if publicURL == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", "", fmt.Errorf("passkey: public URL %q is not an absolute http(s) URL", publicURL)
	}
	host := u.Hostname()
	if net.ParseIP(host) != nil {
		return "", "", fmt.Errorf("passkey: public URL %q: the host is an IP address, and a passkey's relying party is a host name", publicURL)
	}
	if err := protocol.ValidateRPID(host); err != nil {
		return "", "", fmt.Errorf("passkey: public URL %q: the host is no relying party id: %w", publicURL, err)
	}
	return host, u.Scheme + "://" + u.Host, nil
}

// member is a tenant member as the WebAuthn library sees a user.
type member struct {
	tenant, user string
	creds        []webauthn.Credential
}

// userHandle is the member's WebAuthn user handle: a digest of the
// tenant and the user id, the same on every replica and across secret
// rotations, naming nobody to whoever reads the authenticator.
func userHandle(tenantID, user string) []byte {
	h := sha256.Sum256([]byte("approvalsbot passkey user v1\x00" + tenantID + "\x00" + user))
	return h[:]
}

func (m *member) WebAuthnID() []byte                         { return userHandle(m.tenant, m.user) }
func (m *member) WebAuthnName() string                       { return m.user }
func (m *member) WebAuthnDisplayName() string                { return m.user + " (" + m.tenant + ")" }
func (m *member) WebAuthnCredentials() []webauthn.Credential { return m.creds }

// credentials reads a member's passkeys as the library takes them, each
// with the signature count the store holds, and the rows by id.
func (s *Service) credentials(ctx context.Context, tenantID, user string) (*member, map[string]*store.Passkey, error) {
	rows, err := s.store.PasskeyList(ctx, store.PasskeyListParams{Tenant: tenantID, Member: user})
	if err != nil {
		return nil, nil, fmt.Errorf("passkey: list the passkeys of %s: %w", user, err)
	}
	m := &member{tenant: tenantID, user: user}
	byID := map[string]*store.Passkey{}
	for _, r := range rows {
		var c webauthn.Credential
		if err := json.Unmarshal(r.Credential, &c); err != nil {
			s.log.Error("passkey: a stored credential does not decode; skipped", "tenant", tenantID, "member", user, "passkey", r.ID)
			continue
		}
		c.Authenticator.SignCount = r.SignCount
		c.Authenticator.CloneWarning = false
		m.creds = append(m.creds, c)
		byID[r.ID] = r
	}
	return m, byID, nil
}

// credentialID is how a credential id is written: the store's key, the
// page's form field.
func credentialID(raw []byte) string { return base64.RawURLEncoding.EncodeToString(raw) }

// session is what a kept challenge holds beside its binding.
type session struct {
	// Nonce is the random part of an approval's challenge (challengeFor).
	Nonce []byte               `json:"nonce,omitempty"`
	Data  webauthn.SessionData `json:"data"`
}

// challengeLabel separates an approval's challenges from any other hash.
const challengeLabel = "approvalsbot passkey approve v1"

// challengeFor is an approval's challenge: a digest of the binding and a
// random nonce, so the authenticator's signature itself covers what is
// approved, and a challenge made for one binding never verifies for
// another.
func challengeFor(b Binding, nonce []byte) []byte {
	h := sha256.New()
	for _, f := range []string{challengeLabel, b.Tenant, b.ApprovalID, fmt.Sprint(b.Revision), b.Digest, b.Member} {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(f)))
		h.Write(n[:])
		h.Write([]byte(f))
	}
	h.Write(nonce)
	return h.Sum(nil)
}

// newRef is a new challenge's reference, and its key in the store (a
// digest: the store never holds what the browser carries).
func newRef() (ref, id string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	ref = base64.RawURLEncoding.EncodeToString(b)
	return ref, refID(ref)
}

func refID(ref string) string {
	h := sha256.Sum256([]byte(ref))
	return hex.EncodeToString(h[:])
}

// validRef reports whether ref has a reference's form (newRef).
func validRef(ref string) bool {
	b, err := base64.RawURLEncoding.Strict().DecodeString(ref)
	return err == nil && len(b) == 32
}

// BeginApprove starts an approval's ceremony: a challenge bound to b,
// kept ChallengeTTL in the store so any replica can finish it, and the
// request options the browser passes to navigator.credentials.get
// (allowCredentials: the member's passkeys; userVerification:
// required). ErrNoPasskey when the member has none.
func (s *Service) BeginApprove(ctx context.Context, b Binding) (*Request, error) {
	if !b.valid() {
		return nil, fmt.Errorf("passkey: begin an approval: %w", ErrWrongBinding)
	}
	m, _, err := s.credentials(ctx, b.Tenant, b.Member)
	if err != nil {
		return nil, err
	}
	if len(m.creds) == 0 {
		return nil, ErrNoPasskey
	}
	nonce := make([]byte, 32)
	_, _ = rand.Read(nonce)
	assertion, data, err := s.wa.BeginLogin(m, webauthn.WithChallenge(challengeFor(b, nonce)),
		webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		return nil, fmt.Errorf("passkey: begin an approval: %w", err)
	}
	return s.keep(ctx, &store.PasskeyChallenge{Purpose: store.PurposeApprove, Tenant: b.Tenant, Member: b.Member,
		ApprovalID: b.ApprovalID, Revision: b.Revision, Digest: b.Digest}, session{Nonce: nonce, Data: *data}, assertion)
}

// keep stores a challenge with its session and returns the browser's
// request.
func (s *Service) keep(ctx context.Context, c *store.PasskeyChallenge, sess session, options any) (*Request, error) {
	opts, err := json.Marshal(options)
	if err != nil {
		return nil, fmt.Errorf("passkey: encode the options: %w", err)
	}
	c.Session, err = json.Marshal(sess)
	if err != nil {
		return nil, fmt.Errorf("passkey: encode the session: %w", err)
	}
	ref, id := newRef()
	now := s.now()
	c.ID, c.CreatedAt, c.ExpiresAt = id, now, now.Add(ChallengeTTL)
	if err := s.store.PasskeyChallengeAdd(ctx, c); err != nil {
		return nil, fmt.Errorf("passkey: keep a challenge: %w", err)
	}
	return &Request{Ref: ref, Options: opts, Expires: c.ExpiresAt}, nil
}

// take uses up the challenge ref names, once, and checks that it was
// made for purpose, by the tenant and member given, and is in time.
func (s *Service) take(ctx context.Context, ref, purpose, tenantID, user string) (*store.PasskeyChallenge, *session, error) {
	if !validRef(ref) {
		return nil, nil, ErrUnknownRequest
	}
	now := s.now()
	c, err := s.store.PasskeyChallengeTake(ctx, store.PasskeyChallengeTakeParams{ID: refID(ref), Now: now})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, nil, ErrUnknownRequest
	case err != nil:
		return nil, nil, fmt.Errorf("passkey: take a challenge: %w", err)
	case !c.UsedAt.IsZero():
		return nil, nil, ErrUsed
	case c.Purpose != purpose:
		return nil, nil, ErrUnknownRequest
	case !now.Before(c.ExpiresAt):
		return nil, nil, ErrExpired
	case c.Tenant != tenantID || c.Member != user:
		return nil, nil, ErrWrongBinding
	}
	var sess session
	if err := json.Unmarshal(c.Session, &sess); err != nil {
		return nil, nil, fmt.Errorf("passkey: decode a kept session: %w", err)
	}
	return c, &sess, nil
}

// maxAnswer bounds an assertion's or attestation's JSON: real ones are
// a few kilobytes (attestation "none" carries no certificates).
const maxAnswer = 32 << 10

// FinishApprove verifies the browser's answer (assertionJSON, the
// PublicKeyCredential as JSON, binary fields in base64url) to the
// challenge ref names, for exactly b: the challenge was made for this
// tenant, approval, revision, digest and member, is unused (it is used
// up now, whatever the outcome) and under ChallengeTTL old; the
// credential is one of the member's; the authenticator verified the
// user; the signature checks against the origin and relying party; and
// the signature count moves forward. Each refusal is one of the
// package's errors (Why says it to a person).
func (s *Service) FinishApprove(ctx context.Context, b Binding, ref string, assertionJSON []byte) (*Used, error) {
	log := s.log.With("tenant", b.Tenant, "approval_id", b.ApprovalID, "revision", b.Revision, "member", b.Member)
	used, err := s.finishApprove(ctx, b, ref, assertionJSON)
	if err != nil {
		log.Info("passkey: approval assertion refused", "why", err.Error())
		return nil, err
	}
	log.Info("passkey: approval assertion verified", "passkey", used.ID)
	return used, nil
}

func (s *Service) finishApprove(ctx context.Context, b Binding, ref string, assertionJSON []byte) (*Used, error) {
	if !b.valid() {
		return nil, ErrWrongBinding
	}
	if ref == "" && len(assertionJSON) == 0 {
		return nil, ErrMissing
	}
	c, sess, err := s.take(ctx, ref, store.PurposeApprove, b.Tenant, b.Member)
	if err != nil {
		return nil, err
	}
	// The kept binding, and the challenge the authenticator signs, are
	// this binding's.
	if c.ApprovalID != b.ApprovalID || c.Revision != b.Revision || c.Digest != b.Digest ||
		sess.Data.Challenge != base64.RawURLEncoding.EncodeToString(challengeFor(b, sess.Nonce)) {
		return nil, ErrWrongBinding
	}
	if len(assertionJSON) > maxAnswer {
		return nil, fmt.Errorf("%w: the answer is too large", ErrRefused)
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(assertionJSON)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	m, byID, err := s.credentials(ctx, b.Tenant, b.Member)
	if err != nil {
		return nil, err
	}
	row := byID[credentialID(parsed.RawID)]
	if row == nil {
		return nil, ErrNotYours
	}
	if !parsed.Response.AuthenticatorData.Flags.HasUserVerified() {
		return nil, ErrNotVerified
	}
	// Passkeys the member removed since the challenge was made are no
	// longer allowed: the library checks the rest are the member's.
	allowed := sess.Data.AllowedCredentialIDs[:0:0]
	for _, id := range sess.Data.AllowedCredentialIDs {
		if byID[credentialID(id)] != nil {
			allowed = append(allowed, id)
		}
	}
	sess.Data.AllowedCredentialIDs = allowed
	cred, err := s.wa.ValidateLogin(m, sess.Data, parsed)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if !bytes.Equal(cred.ID, parsed.RawID) {
		return nil, ErrRefused
	}
	if cred.Authenticator.CloneWarning {
		return nil, ErrCloned
	}
	err = s.store.PasskeyUse(ctx, store.PasskeyUseParams{Tenant: b.Tenant, Member: b.Member, ID: row.ID,
		SignCount: cred.Authenticator.SignCount, Now: s.now()})
	switch {
	case errors.Is(err, store.ErrSignCount):
		return nil, ErrCloned // another use got there first with this count
	case errors.Is(err, store.ErrNotFound):
		return nil, ErrNotYours // removed meanwhile
	case err != nil:
		return nil, fmt.Errorf("passkey: record the use of %s: %w", row.ID, err)
	}
	return &Used{ID: row.ID, Name: row.Name}, nil
}

// BeginEnrol starts an enrolment ceremony for a member of a tenant: the
// creation options (the member's passkeys excluded, user verification
// required, no attestation) and the kept challenge.
func (s *Service) BeginEnrol(ctx context.Context, tenantID, user string) (*Request, error) {
	if err := s.isMember(tenantID, user); err != nil {
		return nil, err
	}
	m, _, err := s.credentials(ctx, tenantID, user)
	if err != nil {
		return nil, err
	}
	exclude := make([]protocol.CredentialDescriptor, 0, len(m.creds))
	for _, c := range m.creds {
		exclude = append(exclude, c.Descriptor())
	}
	creation, data, err := s.wa.BeginRegistration(m, webauthn.WithExclusions(exclude))
	if err != nil {
		return nil, fmt.Errorf("passkey: begin an enrolment: %w", err)
	}
	return s.keep(ctx, &store.PasskeyChallenge{Purpose: store.PurposeEnrol, Tenant: tenantID, Member: user},
		session{Data: *data}, creation)
}

// MaxName is the longest name a passkey is given, in bytes.
const MaxName = 64

// FinishEnrol verifies the browser's answer (attestationJSON, the new
// PublicKeyCredential as JSON) to the enrolment challenge ref names and
// keeps the passkey under name (a default when empty).
func (s *Service) FinishEnrol(ctx context.Context, tenantID, user, ref, name string, attestationJSON []byte) (*store.Passkey, error) {
	log := s.log.With("tenant", tenantID, "member", user)
	pk, err := s.finishEnrol(ctx, tenantID, user, ref, name, attestationJSON)
	if err != nil {
		log.Info("passkey: enrolment refused", "why", err.Error())
		return nil, err
	}
	log.Info("passkey: enrolled", "passkey", pk.ID)
	return pk, nil
}

func (s *Service) finishEnrol(ctx context.Context, tenantID, user, ref, name string, attestationJSON []byte) (*store.Passkey, error) {
	if err := s.isMember(tenantID, user); err != nil {
		return nil, err
	}
	_, sess, err := s.take(ctx, ref, store.PurposeEnrol, tenantID, user)
	if err != nil {
		return nil, err
	}
	if len(attestationJSON) > maxAnswer {
		return nil, fmt.Errorf("%w: the answer is too large", ErrRefused)
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(attestationJSON)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if !parsed.Response.AttestationObject.AuthData.Flags.HasUserVerified() {
		return nil, ErrNotVerified
	}
	cred, err := s.wa.CreateCredential(&member{tenant: tenantID, user: user}, sess.Data, parsed)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	// The attestation itself is not kept: "none" carries nothing the
	// bot reads later.
	cred.Attestation = webauthn.CredentialAttestation{}
	raw, err := json.Marshal(cred)
	if err != nil {
		return nil, fmt.Errorf("passkey: encode a credential: %w", err)
	}
	name = cleanName(name)
	if name == "" {
		name = "Passkey added " + s.now().UTC().Format("2006-01-02 15:04") + " UTC"
	}
	p := store.PasskeyAddParams{ID: credentialID(cred.ID), Tenant: tenantID, Member: user, Name: name, Credential: raw,
		SignCount: cred.Authenticator.SignCount, Now: s.now()}
	switch err := s.store.PasskeyAdd(ctx, p); {
	case errors.Is(err, store.ErrExists):
		return nil, ErrEnrolled
	case err != nil:
		return nil, fmt.Errorf("passkey: keep a passkey: %w", err)
	}
	return &store.Passkey{ID: p.ID, Tenant: p.Tenant, Member: p.Member, Name: p.Name, Credential: p.Credential,
		SignCount: p.SignCount, CreatedAt: p.Now}, nil
}

// cleanName is a passkey's name as kept: one line of printable text, at
// most MaxName bytes, cut at a character's boundary.
func cleanName(s string) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' || r == ' ' || r == '\t'
	}), " ")
	for len(s) > MaxName {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return strings.TrimSpace(s)
}

// isMember checks that user is still a member of the tenant.
func (s *Service) isMember(tenantID, user string) error {
	t, ok := s.tenants.Tenant(tenantID)
	if !ok {
		return ErrNotMember
	}
	if _, ok := t.MemberByUser(user); !ok {
		return ErrNotMember
	}
	return nil
}

// List lists a member's passkeys, oldest first (every member's of the
// tenant when user is empty).
func (s *Service) List(ctx context.Context, tenantID, user string) ([]*store.Passkey, error) {
	rows, err := s.store.PasskeyList(ctx, store.PasskeyListParams{Tenant: tenantID, Member: user})
	if err != nil {
		return nil, fmt.Errorf("passkey: list passkeys: %w", err)
	}
	return rows, nil
}

// Remove removes one of a member's passkeys; store.ErrNotFound when the
// member has none with that id.
func (s *Service) Remove(ctx context.Context, tenantID, user, id string) error {
	if err := s.store.PasskeyRemove(ctx, store.PasskeyRemoveParams{Tenant: tenantID, Member: user, ID: id}); err != nil {
		return fmt.Errorf("passkey: remove a passkey: %w", err)
	}
	s.log.Info("passkey: removed", "tenant", tenantID, "member", user, "passkey", id)
	return nil
}

// Required reports whether a tenant's rule asks for a passkey to approve
// a call with facts f (tenant.PasskeyRequired: the one rule, which chat
// reads too).
func Required(rule tenant.PasskeyRule, f tenant.PasskeyFacts) bool {
	return tenant.PasskeyRequired(rule, f)
}

// FactsOf is what a passkey rule reads of a call, as its card shows it:
// DESTRUCTIVE, Deny first (flagged), and a typed confirmation.
func FactsOf(a *approval.Approval) tenant.PasskeyFacts {
	return tenant.PasskeyFacts{Destructive: a.Destructive(), Flagged: a.DenyFirst(), Typed: a.Confirm != nil}
}
