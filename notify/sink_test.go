package notify

import (
	"crypto/tls"
	"testing"

	"approvalsbot/notify/smtptest"
)

// The mailer's tests run against smtptest's real SMTP server; these
// names keep them short.
type (
	sinkOptions = smtptest.Options
	received    = smtptest.Received
	credentials = smtptest.Credentials
	sink        = smtptest.Sink
)

const (
	sinkPlain    = smtptest.Plain
	sinkStartTLS = smtptest.StartTLS
	sinkImplicit = smtptest.Implicit
)

func startSink(t *testing.T, o sinkOptions) *sink { return smtptest.Start(t, o) }

func silentServer(t *testing.T) string { return smtptest.Silent(t) }

// certs is smtptest's certificate: the server's configuration and a
// client configuration trusting it.
type certs struct{ server, client *tls.Config }

func testCert(t *testing.T) certs {
	c := smtptest.Cert(t)
	return certs{server: c.Server, client: c.Client}
}
