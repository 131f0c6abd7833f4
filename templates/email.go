package templates

import (
	htmltemplate "html/template"
	"strings"
)

// Email is a card as an email: a subject, a text part and an HTML part
// carrying the same facts. The notify package builds the MIME message
// (multipart/alternative, threading headers) from it.
type Email struct {
	Subject string
	Text    string
	HTML    string
}

// Email renders c as an email. The subject names the tenant, the function
// and the effect or outcome; the HTML uses inline styles only and loads
// nothing (no images, no style sheets), so it reads the same with images
// off, in a narrow window and in a client that strips <style>. Email
// carries no decision buttons: a link cannot be a safe approve (mail
// scanners follow links), so it links to the console and the thread.
func (r *Renderer) Email(c Card) Email {
	subject := part(r.emailText, "card.subject", &c)
	text, err := execText(r.emailText, "card.text", &c)
	if err != nil {
		text = brokenPart
	}
	var h strings.Builder
	if err := r.emailHTML.ExecuteTemplate(&h, "card.html", &c); err != nil {
		h.Reset()
		h.WriteString(htmltemplate.HTMLEscapeString(brokenPart))
	}
	return Email{
		Subject: cutLine(oneLine(subject), emailSubjectMax),
		Text:    squeezeBlankLines(text),
		HTML:    h.String(),
	}
}

// emailSubjectMax keeps a subject readable in a mail list; RFC 5322 folds
// longer ones but clients cut them anyway.
const emailSubjectMax = 200
