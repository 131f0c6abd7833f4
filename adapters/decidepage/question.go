package decidepage

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"approvalsbot/approval"
	"approvalsbot/say"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// The form fields of a question's answers: one form per choice, its
// index in "choice", and one for words, in "words". A question's page
// offers no Approve or Deny, and a call's no answer.
const (
	actionAnswer     = "answer"
	actionAnswerText = "answer_text"
	// actionQuestion shows a restricted question to a content holder:
	// looked up at the backend as them, a POST of the page's own form as
	// the full arguments are, so a scanner asks the backend nothing.
	actionQuestion = "question"
)

// questionForm is a question's answers on its page: each choice its own
// form's button, and words where the question takes them.
type questionForm struct {
	Check string
	// Text is the question where the card above does not show it; ""
	// where it does.
	Text    string
	Choices []choiceForm
	// FreeText: the words' form, WordsMax characters at most; Words is
	// what was typed, kept across a refusal.
	FreeText bool
	WordsMax int
	Words    string
	// Reveal offers Show the question (a restricted question, to a
	// content holder), whose answer shows the forms above.
	Reveal bool
}

// choiceForm is one choice's button: its index (the form's "choice")
// and its words.
type choiceForm struct {
	Index int
	Label string
}

// questionFormOf lays out q's answers with the page's form check.
func questionFormOf(q *threads.PageQuestion, check string, card *templates.Card) *questionForm {
	f := &questionForm{Check: check, FreeText: q.FreeText, WordsMax: approval.MaxAnswerText}
	if q.Restricted {
		// Nobody answers what they were not shown: the forms come with
		// the question, once looked up.
		f.FreeText, f.Reveal = false, true
		return f
	}
	if card == nil || card.Question == nil || card.Question.Text == "" {
		f.Text = templates.Visible(q.Text)
	}
	for i, c := range q.Choices {
		f.Choices = append(f.Choices, choiceForm{Index: i, Label: templates.VisibleLine(c)})
	}
	return f
}

// countingReader counts the bytes a form's body gave.
type countingReader struct {
	r io.ReadCloser
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func (c *countingReader) Close() error { return c.r.Close() }

// answer answers a POST of a question's page: one of its choices, or
// words, recorded through threads (ClickRecord, bound to the link's
// revision) before the page answers, then the page again, which shows
// the answer on its way and then how the question ended. Nothing is
// sent for a choice that is not one or words that are blank or too long.
func (h *Handler) answer(w http.ResponseWriter, r *http.Request, l *link, answer string) {
	req := l.click(threads.ClickRecord, templates.ActionAnswerText)
	words := ""
	refuse := func(why say.Reason) {
		v, status := h.again(r.Context(), l)
		v.Lead = why.String()
		if v.Question != nil {
			v.Question.Words = words
		}
		if status == http.StatusOK {
			status = http.StatusUnprocessableEntity
		}
		h.page(w, status, v)
	}
	choices := len(l.page.Question.Choices)
	if l.page.Question.Restricted {
		choices = approval.MaxChoices // the bot holds none: the backend checks it
	}
	switch answer {
	case actionAnswer:
		i, ok := choiceIndex(r.PostForm.Get("choice"), choices)
		if !ok {
			refuse(say.Reason{Kind: say.NotAChoice, Act: say.Answering})
			return
		}
		req.Action.Kind, req.Action.Choice = templates.ActionAnswer, i
	default:
		// The words as typed go to the backend; the page keeps none.
		words = lineBreaks(r.PostForm.Get("words"))
		switch {
		case !l.page.Question.FreeText && !l.page.Question.Restricted:
			refuse(say.Reason{Kind: say.NotAChoice, Act: say.Answering})
			return
		case strings.TrimSpace(words) == "":
			refuse(say.Reason{Kind: say.AnswerEmpty, Act: say.Answering})
			return
		case utf8.RuneCountInString(words) > approval.MaxAnswerText:
			refuse(say.Reason{Kind: say.AnswerTooLong, Act: say.Answering, Count: approval.MaxAnswerText})
			return
		}
		req.Comment = words
	}
	// The answer is received once the form is read and checked: the
	// deadline judges it by then.
	rc := h.service.Receive()
	defer rc.Done()
	ctx, cancel := rc.Bound(r.Context())
	defer cancel()
	req.ReceivedAt = rc.At
	res := h.service.Click(ctx, req)
	log := h.log.With("tenant", l.claims.Tenant, "approval_id", l.claims.ApprovalID, "member", l.claims.Member,
		"action", answer)
	switch {
	case res.Retry:
		log.Error("decision page: record an answer", "why", res.Reason.String())
		v, _ := h.again(context.WithoutCancel(r.Context()), l)
		v.Lead = say.Reason{Kind: say.FormAnswerNotSaved}.String()
		if v.Question != nil {
			v.Question.Words = words
		}
		h.page(w, http.StatusServiceUnavailable, v)
	case !res.Sent:
		log.Info("decision page: answer refused", "why", res.Reason.String())
		v, _ := h.again(r.Context(), l)
		v.Lead, v.Question, v.Look = res.Reason.String(), nil, nil
		h.page(w, http.StatusConflict, v)
	default:
		log.Info("decision page: answer recorded")
		// POST, then GET, as a decision: reloading sends nothing again.
		w.Header().Set("Location", l.token)
		w.WriteHeader(http.StatusSeeOther)
	}
}

// lineBreaks writes every line break of a form's words as LF. A browser
// sends a textarea's line breaks as CRLF, while its maxlength counted
// each as one character: counted as sent, words the box allowed would be
// refused as too long, and they would reach the backend unlike the same
// words from a chat's dialog, which sends LF.
func lineBreaks(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// choiceIndex reads a choice's index as the page's form sends it: a
// decimal without sign or leading zero, below n (the choices the page
// offered).
func choiceIndex(s string, n int) (int, bool) {
	if s == "" || len(s) > 2 || (s[0] == '0' && s != "0") {
		return 0, false
	}
	i, err := strconv.Atoi(s)
	if err != nil || i < 0 || i >= n || i >= approval.MaxChoices {
		return 0, false
	}
	return i, true
}

// showQuestion answers a POST of a restricted question's Show the
// question: the page again, with the question looked up at the backend
// as the link's member (threads checks it against the card's digest) and
// its answers' forms. Only while the link answers, to a content holder,
// within the member's look-up limit.
func (h *Handler) showQuestion(w http.ResponseWriter, r *http.Request, l *link) {
	v, status := h.view(r.Context(), l)
	if !l.page.Decides || v.Question == nil || !v.Question.Reveal {
		// Closed, changed, expired, in flight, not allowed, or not
		// restricted: the page says which, and asks the backend nothing.
		h.page(w, status, v)
		return
	}
	if wait := h.lookups.Take(l.claims.Tenant+"\x00"+l.page.User, h.now()); wait > 0 {
		secs := int((wait + time.Second - 1) / time.Second)
		v.Lead = say.Reason{Kind: say.FormLookupLimit, Count: int(time.Minute / LookupEvery), Seconds: secs}.String()
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		h.page(w, http.StatusTooManyRequests, v)
		return
	}
	out := h.service.Click(r.Context(), l.click(threads.ClickShow, templates.ActionShowDetails))
	if out.Shown == nil || out.Shown.Question == nil {
		h.log.Info("decision page: question not shown", "tenant", l.claims.Tenant, "approval_id", l.claims.ApprovalID,
			"member", l.claims.Member, "why", out.Reason.String())
		v.Lead = out.Reason.String()
		status = http.StatusForbidden
		if out.Retry {
			status = http.StatusServiceUnavailable
		}
		h.page(w, status, v)
		return
	}
	sq := out.Shown.Question
	v.Question.Reveal, v.Question.Text = false, templates.Visible(sq.Text)
	for i, b := range sq.Choices {
		v.Question.Choices = append(v.Question.Choices, choiceForm{Index: i, Label: templates.VisibleLine(b.Label)})
	}
	v.Question.FreeText = sq.AnswerText != nil
	v.Lead = say.Reason{Kind: say.PageQuestionShown}.String()
	h.page(w, http.StatusOK, v)
}
