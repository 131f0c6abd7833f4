package slack

import (
	"strconv"
	"strings"

	slackgo "github.com/slack-go/slack"

	"approvalsbot/internal/utf16text"
	"approvalsbot/templates"
)

// Text from the backend, the agent or a person is never mrkdwn, which
// cannot escape it, but elements laid out as rich_text or plain_text
// (docs/cards.md#how-slack-shows-a-cards-text).

// elem is one element of literal text.
type elem struct {
	kind  elemKind
	text  string
	url   string
	style *slackgo.RichTextSectionTextStyle
	// unix and format are a date's instant and format; text its fallback.
	unix   int64
	format string
}

// elemKind is what an element is. A mention (elemUser, elemGroup)
// carries a validated id as its text, and notifies.
type elemKind int

const (
	elemText elemKind = iota
	elemBreak
	elemEmoji
	elemLink
	elemPre
	elemQuote
	elemDate
	elemUser
	elemGroup
)

// The styles elements take, one value each.
var (
	boldStyle   = &slackgo.RichTextSectionTextStyle{Bold: true}
	italicStyle = &slackgo.RichTextSectionTextStyle{Italic: true}
	codeStyle   = &slackgo.RichTextSectionTextStyle{Code: true}
)

// dateFormat always names the day: whether a time is today is the
// reader's zone's to say (docs/cards.md#times-on-a-card).
// https://docs.slack.dev/reference/block-kit/block-elements/date-element
const dateFormat = "{date_short_pretty} {time}"

// cutNote says a rich_text or plain_text part was cut.
const cutNote = "[cut to fit Slack; the console shows all]"

// textElem, boldElem, breakElem, preElem and linkElem are the adapter's
// own literal text, shown as cards show it (templates.Visible); a link
// without an absolute http(s) URL is its label.
func textElem(s string) elem { return elem{kind: elemText, text: templates.Visible(s)} }

func boldElem(s string) elem {
	return elem{kind: elemText, text: templates.Visible(s), style: boldStyle}
}

func breakElem() elem { return elem{kind: elemBreak} }

func preElem(s string) elem { return elem{kind: elemPre, text: templates.Visible(s)} }

func linkElem(url, label string) elem {
	u := templates.Linkable(url)
	if u == "" {
		return textElem(label)
	}
	return elem{kind: elemLink, url: u, text: templates.Visible(label)}
}

// richText is elements as one rich_text block, cut to richTextMax.
func richText(elems ...elem) slackgo.Block { return richTextBlock(cutElems(elems, richTextMax)) }

// contextText is a context block of one plain_text, cut to Slack's limit.
func contextText(text string) slackgo.Block {
	return contextBlock([]elem{{kind: elemText, text: templates.Visible(text)}})
}

// elemLen is what an element adds to a block's text, as Slack counts (a
// link's URL included, for the message's cumulative limit).
func elemLen(e elem) int {
	switch e.kind {
	case elemBreak:
		return 1
	case elemEmoji:
		return utf16text.Len(e.text) + 2 // as :name:
	case elemUser, elemGroup:
		return utf16text.Len(e.text) + 3 // as <@id>
	case elemLink:
		return utf16text.Len(e.text) + utf16text.Len(e.url)
	case elemDate:
		// Slack shows the date as its format makes it, about as long as
		// the fallback; the longer of the two is counted.
		return max(utf16text.Len(e.text), utf16text.Len(e.format))
	}
	return utf16text.Len(e.text)
}

func elemsLen(elems []elem) int {
	n := 0
	for _, e := range elems {
		n += elemLen(e)
	}
	return n
}

// cutElems keeps elements within max characters: those that fit, the
// next one cut (at a near line break), and the cut note.
func cutElems(elems []elem, max int) []elem {
	if elemsLen(elems) <= max {
		return elems
	}
	budget := max - utf16text.Len(cutNote) - 1
	var out []elem
	for _, e := range elems {
		n := elemLen(e)
		if n <= budget {
			out = append(out, e)
			budget -= n
			continue
		}
		if e.kind == elemText || e.kind == elemPre || e.kind == elemQuote {
			kept := utf16text.Prefix(e.text, budget)
			if i := strings.LastIndexByte(kept, '\n'); i > 0 && utf16text.Len(kept[:i]) > budget/2 {
				kept = kept[:i]
			}
			if kept = strings.TrimRight(kept, " \t\n"); kept != "" {
				e.text = kept
				out = append(out, e)
			}
		}
		break
	}
	return append(out, elem{kind: elemBreak}, elem{kind: elemText, text: cutNote, style: italicStyle})
}

// richTextBlock lays elements out as a rich_text block: runs as sections
// (breaks at their ends dropped, runs of one style joined), each box its
// own preformatted or quote element.
func richTextBlock(elems []elem) *slackgo.RichTextBlock {
	var out []slackgo.RichTextElement
	var run []elem
	flush := func() {
		for len(run) > 0 && run[0].kind == elemBreak {
			run = run[1:]
		}
		for len(run) > 0 && run[len(run)-1].kind == elemBreak {
			run = run[:len(run)-1]
		}
		if len(run) > 0 {
			out = append(out, slackgo.NewRichTextSection(sectionElems(run)...))
		}
		run = nil
	}
	for _, e := range elems {
		switch e.kind {
		case elemPre:
			flush()
			out = append(out, &slackgo.RichTextPreformatted{Type: slackgo.RTEPreformatted,
				Elements: []slackgo.RichTextSectionElement{slackgo.NewRichTextSectionTextElement(e.text, nil)}})
		case elemQuote:
			flush()
			out = append(out, &slackgo.RichTextQuote{Type: slackgo.RTEQuote,
				Elements: []slackgo.RichTextSectionElement{slackgo.NewRichTextSectionTextElement(e.text, nil)}})
		default:
			run = append(run, e)
		}
	}
	flush()
	return slackgo.NewRichTextBlock("", out...)
}

// sectionElems turns a run into rich_text_section elements, a line break
// joining the unstyled text around it.
func sectionElems(run []elem) []slackgo.RichTextSectionElement {
	var out []slackgo.RichTextSectionElement
	for _, e := range run {
		switch e.kind {
		case elemEmoji:
			out = append(out, slackgo.NewRichTextSectionEmojiElement(e.text, 0, nil))
			continue
		case elemUser:
			out = append(out, slackgo.NewRichTextSectionUserElement(e.text, nil))
			continue
		case elemGroup:
			out = append(out, slackgo.NewRichTextSectionUserGroupElement(e.text))
			continue
		case elemLink:
			out = append(out, slackgo.NewRichTextSectionLinkElement(e.url, e.text, nil))
			continue
		case elemDate:
			d := slackgo.NewRichTextSectionDateElement(e.unix, e.format, nil, &e.text)
			d.Style = e.style
			out = append(out, d)
			continue
		case elemBreak:
			e = elem{kind: elemText, text: "\n"}
		}
		if n := len(out); n > 0 {
			if prev, ok := out[n-1].(*slackgo.RichTextSectionTextElement); ok && sameStyle(prev.Style, e.style) {
				prev.Text += e.text
				continue
			}
		}
		out = append(out, slackgo.NewRichTextSectionTextElement(e.text, e.style))
	}
	return out
}

func sameStyle(a, b *slackgo.RichTextSectionTextStyle) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// contextBlock lays elements out as a context block within Slack's
// limits: text as plain_text, a link or a date alone in a verbatim mrkdwn
// object, so Slack parses nothing else in it.
func contextBlock(elems []elem) *slackgo.ContextBlock {
	var objs []slackgo.MixedElement
	var b strings.Builder
	flush := func() {
		if t := strings.TrimSpace(b.String()); t != "" {
			objs = append(objs, slackgo.NewTextBlockObject(slackgo.PlainTextType, utf16text.Fit(t, textObjectMax, cutNote, noTrim), false, false))
		}
		b.Reset()
	}
	for _, e := range elems {
		switch e.kind {
		case elemLink:
			flush()
			objs = append(objs, slackgo.NewTextBlockObject(slackgo.MarkdownType, "<"+linkURL(e.url)+"|"+mrkdwn(e.text)+">", false, true))
		case elemDate:
			flush()
			objs = append(objs, slackgo.NewTextBlockObject(slackgo.MarkdownType, dateToken(e), false, true))
		case elemBreak:
			b.WriteByte('\n')
		case elemEmoji:
		default:
			b.WriteString(e.text)
		}
	}
	flush()
	if len(objs) > contextElementsMax {
		objs = objs[:contextElementsMax]
	}
	return slackgo.NewContextBlock("", objs...)
}

// dateToken is a date in mrkdwn: <!date^UNIX^FORMAT|fallback>, the
// fallback escaped and nothing else (an escaped < would be no token).
// The format holds none of ^ | < > &: it is dateFormat.
func dateToken(e elem) string {
	return "<!date^" + strconv.FormatInt(e.unix, 10) + "^" + e.format + "|" + mrkdwn(e.text) + ">"
}
