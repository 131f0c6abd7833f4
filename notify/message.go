// Package notify sends escalation email over SMTP (Mailer):
// multipart/alternative messages threaded per approval, one connection a
// mail, TLS unless the server is on the loopback, an SMTP 5xx permanent.
package notify

import (
	"bytes"
	"fmt"
	"io"
	"net/mail"
	"time"

	gomail "github.com/emersion/go-message/mail"
)

// Message is one email to build.
type Message struct {
	From    string
	To      []string
	Subject string
	Text    string
	HTML    string
	Date    time.Time
	// MessageID is this mail's id (without angle brackets), unique per mail.
	MessageID string
	// References are the Message-IDs this mail follows in the recipient's
	// thread, first to last; In-Reply-To names the last. Empty for the
	// first mail.
	References []string
}

// Build writes m as an RFC 5322 message with a multipart/alternative body.
func Build(m Message) ([]byte, error) {
	var h gomail.Header
	h.SetDate(m.Date)
	h.SetSubject(m.Subject)
	from, err := mail.ParseAddress(m.From)
	if err != nil {
		return nil, fmt.Errorf("from address %q: %w", m.From, err)
	}
	h.SetAddressList("From", []*gomail.Address{{Name: from.Name, Address: from.Address}})
	to := make([]*gomail.Address, 0, len(m.To))
	for _, addr := range m.To {
		a, err := mail.ParseAddress(addr)
		if err != nil {
			return nil, fmt.Errorf("to address %q: %w", addr, err)
		}
		to = append(to, &gomail.Address{Name: a.Name, Address: a.Address})
	}
	h.SetAddressList("To", to)
	if m.MessageID != "" {
		h.SetMessageID(m.MessageID)
	}
	if n := len(m.References); n > 0 {
		h.SetMsgIDList("In-Reply-To", m.References[n-1:])
		h.SetMsgIDList("References", m.References)
	}
	h.Set("Auto-Submitted", "auto-generated") // RFC 3834: no auto-replies to a bot
	var buf bytes.Buffer
	w, err := gomail.CreateInlineWriter(&buf, h)
	if err != nil {
		return nil, fmt.Errorf("start message: %w", err)
	}
	if err := writePart(w, "text/plain", m.Text); err != nil {
		return nil, err
	}
	if err := writePart(w, "text/html", m.HTML); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("finish message: %w", err)
	}
	return buf.Bytes(), nil
}

func writePart(w *gomail.InlineWriter, contentType, body string) error {
	var ph gomail.InlineHeader
	ph.SetContentType(contentType, map[string]string{"charset": "utf-8"})
	pw, err := w.CreatePart(ph)
	if err != nil {
		return fmt.Errorf("start %s part: %w", contentType, err)
	}
	if _, err := io.WriteString(pw, body); err != nil {
		return fmt.Errorf("write %s part: %w", contentType, err)
	}
	return pw.Close()
}
