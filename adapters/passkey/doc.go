// Package passkey owns the passkeys (WebAuthn credentials) tenant members
// give a risky yes with: their enrolment, the single-use challenges an
// approval's assertion answers, and the verification of that assertion,
// through github.com/go-webauthn/webauthn. The decision page asks for
// the assertion and decides; this package says whether it is good.
//
// # Relying party
//
// The relying party id is public_url's host, which must be a name
// (WebAuthn takes no IP address; localhost is a name), and the one origin
// taken is public_url's scheme, host and port. A passkey is bound to that
// host by the authenticator: changing it orphans every passkey.
//
// # Challenges: kept in the store, used once
//
// A challenge is kept in the store (store.Store's PasskeyChallengeAdd)
// for ChallengeTTL with what it is bound to, under the SHA-256 of an
// unguessable reference the browser carries back; PasskeyChallengeTake
// marks it used in one conditional write. So any replica can finish a
// ceremony another began, and a challenge answers once however many
// replicas see the answer at once. This was chosen over a sealed session
// blob the page carries back, which would still need a durable "used"
// record to refuse a replay: one table does both, and nothing of the
// session leaves the bot. A challenge is used up by the first answer,
// good or not: a refused assertion is never tried again, the page asks
// for a new challenge.
//
// An approval's challenge is SHA-256 over the binding (tenant, approval,
// revision, digest, member) and a random nonce, so the authenticator's
// signature itself covers what is approved; FinishApprove recomputes it
// from the binding the page gives and refuses any other (ErrWrongBinding)
// beside comparing the kept binding.
//
// # What FinishApprove checks
//
// The challenge is known (ErrUnknownRequest), unused (ErrUsed), under
// ChallengeTTL old (ErrExpired) and made for exactly this binding
// (ErrWrongBinding); the credential is one of the member's (ErrNotYours);
// the authenticator verified the user (ErrNotVerified); the library's
// checks pass (origin, relying party, signature, user presence:
// ErrRefused); and the signature count moves forward, in the store, in
// one conditional write (ErrCloned: a cloned authenticator, or a second
// use with the same count). Why turns each into the sentence a person
// reads.
//
// # The contract with the decision page
//
// The page's Approve of a call whose tenant rule asks for a passkey
// (Required(tenant.Passkeys, FactsOf(call)); chat reads the same rule as
// tenant.PasskeyRequired) works like this:
//
//  1. The page's answers carry ContentSecurityPolicy (script-src 'self',
//     connect-src 'self'), and the page includes the bot's one script:
//     <script src="../passkey/passkey.js" defer></script> (relative to
//     /decide/TOKEN; any address of ScriptPath under public_url).
//  2. The Approve form carries data-passkey-binding="{{SealBinding(b,
//     expires)}}", where b is the Binding the page will decide (tenant,
//     approval, revision, the digest of what the page showed, member) and
//     expires bounds when options may be asked for (the link's expiry).
//     Optionally data-passkey-options="URL" (default: "options" beside
//     the script, i.e. OptionsPath); a [data-passkey-status] element in
//     the form shows what went wrong (made when missing); a second
//     submit button with data-passkey-skip (a Deny in the same form) is
//     not intercepted.
//  3. On submit the script POSTs the binding to OptionsPath, which calls
//     BeginApprove and answers {"ref": …, "options": {"publicKey": …}};
//     the script calls navigator.credentials.get, puts the reference in
//     the form field passkey_ref and the assertion's JSON in
//     passkey_assertion (hidden inputs it adds when missing), and submits
//     the form as the button would (requestSubmit with the button).
//     window.approveWithPasskey(form) does the same when called.
//  4. The page's POST handler calls FinishApprove(ctx, b, passkey_ref,
//     passkey_assertion) with the binding it computes itself (never one
//     read from the form) before it records the decision; any error
//     decides nothing, and Why(err) is what the page says. Without
//     script the form arrives with neither field: ErrMissing.
//
// # Enrolment
//
// EnrolLink makes a member's enrolment link, signed with the link
// secrets under a key of its own and valid EnrolTTL. Its page (GET) lists
// the member's passkeys with a Remove form each (POST, with a form check
// as the decision page's), which work without script, and a form whose
// submit the script turns into navigator.credentials.create and a POST
// of the new credential (user verification required, no attestation,
// the member's passkeys excluded). Every answer carries the decision
// page's security headers with ContentSecurityPolicy.
package passkey
