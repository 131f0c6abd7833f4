package slack_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	slackad "approvalsbot/adapters/slack"
)

// The adapter's credentials never print: not with any fmt verb, not
// through slog's handlers, not as JSON, alone or inside Options.
func TestCredentialsNeverPrint(t *testing.T) {
	o := slackad.Options{Credentials: slackad.Credentials{BotToken: "xoxb-LEAK", SigningSecret: "sig-LEAK", AppToken: "xapp-LEAK"}}
	var logged bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logged, nil))
	log.Info("surface", "options", o, "credentials", o.Credentials)
	slog.New(slog.NewTextHandler(&logged, nil)).Info("surface", "credentials", o.Credentials)
	js, err := json.Marshal(struct{ Credentials any }{o.Credentials})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{fmt.Sprintf("%v", o), fmt.Sprintf("%+v", o), fmt.Sprintf("%#v", o), fmt.Sprintf("%s", o.Credentials),
		fmt.Sprintf("%x", o.Credentials), fmt.Sprint(o.Credentials), logged.String(), string(js)} {
		if strings.Contains(s, "LEAK") {
			t.Errorf("a credential is printed: %.300s", s)
		}
	}
}
