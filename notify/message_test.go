package notify

import (
	"io"
	"strings"
	"testing"
	"time"

	gomail "github.com/emersion/go-message/mail"
)

func TestBuildIsReadableMultipartWithThreadHeaders(t *testing.T) {
	raw, err := Build(Message{
		From: "Approvals <approvals@acme.example>", To: []string{"leads@acme.example"},
		Subject: "[acme] acme_github.merge waits for a decision (DESTRUCTIVE)",
		Text:    "plain Zürich", HTML: "<p>html &lt;script&gt;</p>",
		Date:      time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC),
		MessageID: "a-merge1.2@bot.acme.example", References: []string{"a-merge1.1@bot.acme.example"},
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := gomail.CreateReader(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	subj, _ := r.Header.Subject()
	if subj != "[acme] acme_github.merge waits for a decision (DESTRUCTIVE)" {
		t.Errorf("subject %q", subj)
	}
	if id, _ := r.Header.MessageID(); id != "a-merge1.2@bot.acme.example" {
		t.Errorf("message-id %q", id)
	}
	for _, k := range []string{"In-Reply-To", "References"} {
		ids, err := r.Header.MsgIDList(k)
		if err != nil || len(ids) != 1 || ids[0] != "a-merge1.1@bot.acme.example" {
			t.Errorf("%s = %v, %v", k, ids, err)
		}
	}
	parts := map[string]string{}
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ct, _, _ := p.Header.(*gomail.InlineHeader).ContentType()
		b, _ := io.ReadAll(p.Body)
		parts[ct] = string(b)
	}
	if parts["text/plain"] != "plain Zürich" || parts["text/html"] != "<p>html &lt;script&gt;</p>" {
		t.Fatalf("parts %q", parts)
	}
}

func TestBuildRefusesBadAddresses(t *testing.T) {
	if _, err := Build(Message{From: "not an address", To: []string{"a@b.example"}}); err == nil {
		t.Fatal("bad From accepted")
	}
	if _, err := Build(Message{From: "a@b.example", To: []string{"x"}}); err == nil {
		t.Fatal("bad To accepted")
	}
}
