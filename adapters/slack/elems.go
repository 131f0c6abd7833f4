package slack

import (
	"strconv"
	"strings"

	slackgo "github.com/slack-go/slack"

	"approvalsbot/internal/utf16text"
	"approvalsbot/templates"
)

// Literal text. Slack's mrkdwn has no escape for * _ ~ or backticks, so
// text from the backend, the agent or a person is never mrkdwn: it is a
// sequence of elements, laid out as a rich_text block (text runs, line
// breaks, icons, links, preformatted and quote boxes) or, for a card's
// small parts, a context block of plain_text. Slack shows the text of
// either exactly as given: no *bold*, no links, no mentions, no
// &-entities.

// elem is one element of literal text.
type elem struct {
	kind  elemKind
	text  string
	url   string
	style *slackgo.RichTextSectionTextStyle
	// unix and format are a date's: its instant and Slack's format
	// string; its text is the fallback.
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

// dateFormat is how Slack writes a card's time
// (https://docs.slack.dev/reference/block-kit/block-elements/date-element,
// "Formatting text for app surfaces" → "Date formatting"): the day as the
// reader says it ("today", "yesterday", "Mar 18") and the time, in the
// reader's own zone and locale. The day is always there: whether a time
// is today depends on the reader's zone, not the tenant's, so the card's
// own text (dated only off the tenant's day) cannot decide it for them.
const dateFormat = "{date_short_pretty} {time}"

// cutNote says a rich_text or plain_text part was cut.
const cutNote = "[cut to fit Slack; the console shows all]"

// textElem, boldElem, breakElem, preElem and linkElem are the adapter's
// own literal text: its answers, notices and dialogs show text from the
// backend, the agent or a person exactly as cards do, each invisible
// character as [U+XXXX] (templates.Visible). A link takes an absolute
// http(s) URL; without one it is its label as text.
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

// richText lays elements out as one rich_text block, cut visibly to
// richTextMax.
func richText(elems ...elem) slackgo.Block { return richTextBlock(cutElems(elems, richTextMax)) }

// contextText is a context block of one plain_text (small print), cut
// visibly to Slack's limit.
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

// cutElems keeps elements within max characters of text: as many as
// fit, the one that does not cut (at a line break where one is near), and
// the cut note after them.
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

// richTextBlock lays elements out as a rich_text block: runs of text,
// icons and links as rich_text_section lines, and each box its own
// rich_text_preformatted or rich_text_quote. A line break that would
// start or end a section is dropped, and adjacent runs of one style are
// joined, so a line reads as one text.
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

// contextBlock lays elements out as a context block: text as plain_text
// (styles and icons dropped), and a link or a date as mrkdwn holding only
// the link, or only the date's token with its fallback escaped, verbatim,
// so Slack parses nothing else in it. Each text object stays within
// Slack's limit, and the block within its element count.
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
