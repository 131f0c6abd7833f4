package smtpconf_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"approvalsbot/notify/smtpconf"
)

// The settings print everything but the password, which shows as
// "<secret>" with any fmt verb, through slog and as JSON.
func TestSettingsNeverPrintThePassword(t *testing.T) {
	s := smtpconf.Settings{Addr: "smtp.acme.example:587", TLS: smtpconf.TLSStartTLS, Username: "bot", Password: "pw-LEAK", From: "a@acme.example"}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("mailer", "smtp", s)
	slog.New(slog.NewTextHandler(&logged, nil)).Info("mailer", "smtp", s)
	js, err := json.Marshal(struct{ SMTP smtpconf.Settings }{s})
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{fmt.Sprintf("%v", s), fmt.Sprintf("%+v", s), fmt.Sprintf("%#v", s), fmt.Sprintf("%x", s),
		fmt.Sprintf("%+v", struct{ SMTP smtpconf.Settings }{s}), logged.String(), string(js)} {
		if strings.Contains(out, "LEAK") {
			t.Errorf("the password is printed: %.300s", out)
		}
		if !strings.Contains(out, "smtp.acme.example") && !strings.Contains(out, "736d7470") {
			t.Errorf("the address is not printed: %.300s", out)
		}
	}
}
