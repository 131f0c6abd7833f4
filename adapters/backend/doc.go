// Package backend is the bot's side of docs/protocol.md, the contract with the job
// backend, in both directions:
//
//   - events in: the backend POSTs signed events to POST /v1/events (the
//     handler lives in handler.go); Verifier checks their signature;
//   - calls out: Client POSTs signed decisions and argument look-ups to the
//     backend, with an Idempotency-Key per intent, a timeout per try and
//     retries with backoff, and turns every answer the protocol lists into a
//     typed Outcome so callers never parse status codes.
//
// Both directions sign with Sign (HMAC-SHA256 over "<t>.<body>") and accept
// a list of secrets so they can rotate. No secret and no signature value is
// ever put in an error, a log line or a String form: they print as <secret>.
//
// The package only moves bytes and classifies answers. It does not decide
// who may decide, and it does not check argument digests: the caller holds
// the card's digest and must compare the JCS digest of looked-up arguments
// with it before showing a byte (docs/protocol.md, "Canonical JSON and the
// digest").
//
// Package standin is the fake job backend that `bot backend` serves and
// tests use, through backendtest.
package backend
