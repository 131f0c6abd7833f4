package discord_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	discordad "approvalsbot/adapters/discord"
)

// The adapter's credentials never print: not with any fmt verb, not
// through slog's handlers, not as JSON, alone or inside Options.
func TestCredentialsNeverPrint(t *testing.T) {
	o := discordad.Options{Credentials: discordad.Credentials{BotToken: "Bot LEAK", ApplicationID: "1", PublicKey: "LEAKKEY"}}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("surface", "options", o, "credentials", o.Credentials)
	slog.New(slog.NewTextHandler(&logged, nil)).Info("surface", "credentials", o.Credentials)
	js, err := json.Marshal(struct{ Credentials any }{o.Credentials})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{fmt.Sprintf("%v", o), fmt.Sprintf("%+v", o), fmt.Sprintf("%#v", o),
		fmt.Sprintf("%q", o.Credentials), fmt.Sprintf("%s", o.Credentials), fmt.Sprintf("%x", o.Credentials),
		fmt.Sprint(o.Credentials), logged.String(), string(js)} {
		if strings.Contains(s, "LEAK") {
			t.Errorf("a credential is printed: %.300s", s)
		}
	}
}
