// Package backend is the bot's side of docs/protocol.md, the contract with
// the job backend: Handler takes signed events on POST /v1/events, and
// Client POSTs signed decisions and argument look-ups, retrying with
// backoff, and turns every listed answer into a typed Outcome.
//
// Both ways sign with Sign and accept several secrets, to rotate; no
// secret or signature value reaches an error, a log line or a String form.
// The package checks no argument digest: the caller compares the JCS
// digest of looked-up arguments with the card's before showing a byte.
//
// Package standin is the fake job backend that `bot backend` serves and
// tests use, through backendtest.
package backend
