package templates

import (
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	texttemplate "text/template"

	"github.com/slack-go/slack"
)

// Slack parts as literal text. A Slack template writes a part as a
// sequence of elements, each a small JSON object written by one of
// slackElemFuncs, so every value it carries is encoded, never markup; the
// renderer reads them back and lays them out as a rich_text block (text
// runs, line breaks, icons, links, preformatted and quote boxes) or, for
// the small parts, a context block of plain_text. Slack shows the text of
// either exactly as given: no *bold*, no links, no mentions, no &-entities.

// slackElem is one element a Slack template writes.
type slackElem struct {
	Kind  string                          `json:"k"`
	Text  string                          `json:"t,omitempty"`
	URL   string                          `json:"u,omitempty"`
	Style *slack.RichTextSectionTextStyle `json:"s,omitempty"`
	// Unix and Format are a date's: its instant in Unix seconds and
	// Slack's format string; its Text is the fallback.
	Unix   int64  `json:"d,omitempty"`
	Format string `json:"f,omitempty"`
}

// Element kinds. elemText is a run of text (styled or not); elemBreak a
// line break; elemEmoji an icon by its name; elemLink a link with the
// template's own label; elemPre and elemQuote a box of their own; elemDate
// a time Slack shows in each reader's own zone; elemUser and elemGroup a
// mention of a user or a user group by its validated id (Text), which
// notifies them.
const (
	elemText  = "text"
	elemBreak = "br"
	elemEmoji = "emoji"
	elemLink  = "link"
	elemPre   = "pre"
	elemQuote = "quote"
	elemDate  = "date"
	elemUser  = "user"
	elemGroup = "usergroup"
)

// slackDateFormat is how Slack writes a card's time
// (https://docs.slack.dev/reference/block-kit/block-elements/date-element,
// "Formatting text for app surfaces" → "Date formatting"): the day as the
// reader says it ("today", "yesterday", "Mar 18") and the time, in the
// reader's own zone and locale. The day is always there: whether a time
// is today depends on the reader's zone, not the tenant's, so the card's
// own text (dated only off the tenant's day) cannot decide it for them.
const slackDateFormat = "{date_short_pretty} {time}"

// slackDate is the date element of a time a card prints: Slack shows it
// in each reader's own zone, and the card's text (in the tenant's zone)
// where it cannot.
func slackDate(st Stamp, style *slack.RichTextSectionTextStyle) slackElem {
	return slackElem{Kind: elemDate, Text: st.Text, Unix: st.At.Unix(), Format: slackDateFormat, Style: style}
}

// timedText writes s as text in the style named ("", "bold" or
// "italic"), each of its times (at, as Card.Times has them) as a date.
// A time that is not where it says in s stays text.
func timedText(style, s string, at []Stamp) string {
	st := slackStyles[style]
	var b strings.Builder
	pos := 0
	for _, t := range at {
		end := t.Off + len(t.Text)
		if t.Text == "" || t.Off < pos || end > len(s) || s[t.Off:end] != t.Text {
			continue
		}
		b.WriteString(styledText(st)(s[pos:t.Off]))
		b.WriteString(writeElem(slackDate(t, st)))
		pos = end
	}
	b.WriteString(styledText(st)(s[pos:]))
	return b.String()
}

// The styles the card's elements take, one value each.
var (
	slackBold   = &slack.RichTextSectionTextStyle{Bold: true}
	slackItalic = &slack.RichTextSectionTextStyle{Italic: true}
)

var slackStyles = map[string]*slack.RichTextSectionTextStyle{
	"bold":   slackBold,
	"italic": slackItalic,
}

// slackCutNote says a rich_text or plain_text part was cut.
const slackCutNote = "[cut to fit Slack; the console shows all]"

func writeElem(e slackElem) string {
	b, _ := json.Marshal(e) // strings and a struct of bools: cannot fail
	return string(b)
}

func styledText(style *slack.RichTextSectionTextStyle) func(string) string {
	return func(s string) string {
		if s == "" {
			return ""
		}
		return writeElem(slackElem{Kind: elemText, Text: s, Style: style})
	}
}

// slackElemFuncs are the functions a Slack template writes its elements
// with. A link takes only an absolute http(s) URL (Build checked it);
// without one it is its label as text.
var slackElemFuncs = texttemplate.FuncMap{
	"text":   styledText(nil),
	"bold":   styledText(slackBold),
	"italic": styledText(slackItalic),
	"code":   styledText(&slack.RichTextSectionTextStyle{Code: true}),
	"br":     func() string { return writeElem(slackElem{Kind: elemBreak}) },
	"emoji":  func(name string) string { return writeElem(slackElem{Kind: elemEmoji, Text: name}) },
	"link": func(url, label string) string {
		u := linkable(url)
		if u == "" {
			return styledText(nil)(label)
		}
		return writeElem(slackElem{Kind: elemLink, URL: u, Text: label})
	},
	"pre":   func(s string) string { return box(elemPre, s) },
	"quote": func(s string) string { return box(elemQuote, s) },
	"timed": timedText,
}

func box(kind, s string) string {
	if s == "" {
		return ""
	}
	return writeElem(slackElem{Kind: kind, Text: s})
}

var errSlackMarkup = errors.New("a Slack template wrote something that is not an element")

// readElems reads what a Slack template wrote: elements, and nothing but
// white space between them.
func readElems(s string) ([]slackElem, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	var out []slackElem
	for {
		var e slackElem
		err := dec.Decode(&e)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, errSlackMarkup
		}
		switch e.Kind {
		case elemText, elemBreak, elemEmoji, elemLink, elemPre, elemQuote, elemDate, elemUser, elemGroup:
		default:
			return nil, errSlackMarkup
		}
		out = append(out, e)
	}
}

// slackPart runs a named Slack template and reads its elements; a part
// that could not be rendered says so as text.
func slackPart(t *texttemplate.Template, name string, data any) []slackElem {
	s, err := execText(t, name, data)
	if err != nil {
		return []slackElem{{Kind: elemText, Text: brokenPart}}
	}
	elems, err := readElems(s)
	if err != nil {
		return []slackElem{{Kind: elemText, Text: brokenPart}}
	}
	return elems
}

// elemLen is what an element adds to a block's text, as Slack counts (a
// link's URL included, for the message's cumulative limit).
func elemLen(e slackElem) int {
	switch e.Kind {
	case elemBreak:
		return 1
	case elemEmoji:
		return charLen(e.Text) + 2 // as :name:
	case elemUser, elemGroup:
		return charLen(e.Text) + 3 // as <@id>
	case elemLink:
		return charLen(e.Text) + charLen(e.URL)
	case elemDate:
		// Slack shows the date as its format makes it, about as long as
		// the fallback; the longer of the two is counted.
		return max(charLen(e.Text), charLen(e.Format))
	}
	return charLen(e.Text)
}

// cutSlackElems keeps elements within max characters of text: as many as
// fit, the one that does not cut (at a line break where one is near), and
// the cut note after them.
func cutSlackElems(elems []slackElem, max int) []slackElem {
	total := 0
	for _, e := range elems {
		total += elemLen(e)
	}
	if total <= max {
		return elems
	}
	budget := max - charLen(slackCutNote) - 1
	var out []slackElem
	for _, e := range elems {
		n := elemLen(e)
		if n <= budget {
			out = append(out, e)
			budget -= n
			continue
		}
		if e.Kind == elemText || e.Kind == elemPre || e.Kind == elemQuote {
			kept := prefixChars(e.Text, budget)
			if i := strings.LastIndexByte(kept, '\n'); i > 0 && charLen(kept[:i]) > budget/2 {
				kept = kept[:i]
			}
			if kept = strings.TrimRight(kept, " \t\n"); kept != "" {
				e.Text = kept
				out = append(out, e)
			}
		}
		break
	}
	return append(out, slackElem{Kind: elemBreak}, slackElem{Kind: elemText, Text: slackCutNote, Style: slackItalic})
}

// slackRichText lays elements out as a rich_text block: runs of text,
// icons and links as rich_text_section lines, and each box its own
// rich_text_preformatted or rich_text_quote. A line break that would
// start or end a section is dropped, and adjacent runs of one style are
// joined, so a line reads as one text.
func slackRichText(elems []slackElem) *slack.RichTextBlock {
	var out []slack.RichTextElement
	var run []slackElem
	flush := func() {
		for len(run) > 0 && run[0].Kind == elemBreak {
			run = run[1:]
		}
		for len(run) > 0 && run[len(run)-1].Kind == elemBreak {
			run = run[:len(run)-1]
		}
		if len(run) > 0 {
			out = append(out, slack.NewRichTextSection(sectionElems(run)...))
		}
		run = nil
	}
	for _, e := range elems {
		switch e.Kind {
		case elemPre:
			flush()
			out = append(out, &slack.RichTextPreformatted{Type: slack.RTEPreformatted, Elements: []slack.RichTextSectionElement{slack.NewRichTextSectionTextElement(e.Text, nil)}})
		case elemQuote:
			flush()
			out = append(out, &slack.RichTextQuote{Type: slack.RTEQuote, Elements: []slack.RichTextSectionElement{slack.NewRichTextSectionTextElement(e.Text, nil)}})
		default:
			run = append(run, e)
		}
	}
	flush()
	return slack.NewRichTextBlock("", out...)
}

// sectionElems turns a run into rich_text_section elements, a line break
// joining the unstyled text around it.
func sectionElems(run []slackElem) []slack.RichTextSectionElement {
	var out []slack.RichTextSectionElement
	for _, e := range run {
		switch e.Kind {
		case elemEmoji:
			out = append(out, slack.NewRichTextSectionEmojiElement(e.Text, 0, nil))
			continue
		case elemUser:
			out = append(out, slack.NewRichTextSectionUserElement(e.Text, nil))
			continue
		case elemGroup:
			out = append(out, slack.NewRichTextSectionUserGroupElement(e.Text))
			continue
		case elemLink:
			out = append(out, slack.NewRichTextSectionLinkElement(e.URL, e.Text, nil))
			continue
		case elemDate:
			d := slack.NewRichTextSectionDateElement(e.Unix, e.Format, nil, &e.Text)
			d.Style = e.Style
			out = append(out, d)
			continue
		case elemBreak:
			e = slackElem{Kind: elemText, Text: "\n"}
		}
		if n := len(out); n > 0 {
			if prev, ok := out[n-1].(*slack.RichTextSectionTextElement); ok && sameStyle(prev.Style, e.Style) {
				prev.Text += e.Text
				continue
			}
		}
		out = append(out, slack.NewRichTextSectionTextElement(e.Text, e.Style))
	}
	return out
}

func sameStyle(a, b *slack.RichTextSectionTextStyle) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// slackContext lays elements out as a context block: text as plain_text
// (styles and icons dropped), and a link or a date as mrkdwn holding only
// the link, or only the date's token with its fallback escaped, verbatim,
// so Slack parses nothing else in it. Each text object stays within
// Slack's limit, and the block within its element count.
func slackContext(elems []slackElem) *slack.ContextBlock {
	var objs []slack.MixedElement
	var b strings.Builder
	flush := func() {
		if t := strings.TrimSpace(b.String()); t != "" {
			objs = append(objs, slack.NewTextBlockObject(slack.PlainTextType, cutText(t, slackTextObjectMax, slackCutNote, noTrim), false, false))
		}
		b.Reset()
	}
	for _, e := range elems {
		switch e.Kind {
		case elemLink:
			flush()
			objs = append(objs, slack.NewTextBlockObject(slack.MarkdownType, "<"+linkURL(e.URL)+"|"+mrkdwn(e.Text)+">", false, true))
		case elemDate:
			flush()
			objs = append(objs, slack.NewTextBlockObject(slack.MarkdownType, slackDateToken(e), false, true))
		case elemBreak:
			b.WriteByte('\n')
		case elemEmoji:
		default:
			b.WriteString(e.Text)
		}
	}
	flush()
	if len(objs) > slackContextElementsMax {
		objs = objs[:slackContextElementsMax]
	}
	return slack.NewContextBlock("", objs...)
}

func noTrim(s string) string { return s }

// slackDateToken is a date in mrkdwn: <!date^UNIX^FORMAT|fallback>, the
// fallback escaped and nothing else (an escaped < would be no token).
// The format holds none of ^ | < > &: it is one of this file's.
func slackDateToken(e slackElem) string {
	return "<!date^" + strconv.FormatInt(e.Unix, 10) + "^" + e.Format + "|" + mrkdwn(e.Text) + ">"
}

// SlackElem is one element of literal text an adapter lays out with
// SlackRichText: its answers to one person, notices and dialogs show
// text from the backend, the agent or a person exactly as cards do.
type SlackElem struct{ e slackElem }

// SlackText is a run of text, SlackBold the same in bold, SlackBreak a
// line break, SlackPre a preformatted box of its own (arguments, a
// patch) and SlackLink a link with a label (url must be absolute
// http(s); otherwise the label is text).
// Each shows an invisible character as [U+XXXX] (cleanText), as cards do.
func SlackText(s string) SlackElem { return SlackElem{slackElem{Kind: elemText, Text: cleanText(s)}} }

// SlackBold is a run of bold text.
func SlackBold(s string) SlackElem {
	return SlackElem{slackElem{Kind: elemText, Text: cleanText(s), Style: slackBold}}
}

// SlackBreak is a line break.
func SlackBreak() SlackElem { return SlackElem{slackElem{Kind: elemBreak}} }

// SlackPre is a preformatted box.
func SlackPre(s string) SlackElem { return SlackElem{slackElem{Kind: elemPre, Text: cleanText(s)}} }

// SlackLink is a link with a label.
func SlackLink(url, label string) SlackElem {
	u := linkable(url)
	if u == "" {
		return SlackText(label)
	}
	return SlackElem{slackElem{Kind: elemLink, URL: u, Text: cleanText(label)}}
}

// SlackElemsLen is what elems add to a message's text, as Slack counts
// (a link's URL included).
func SlackElemsLen(elems []SlackElem) int {
	n := 0
	for _, e := range elems {
		n += elemLen(e.e)
	}
	return n
}

// SlackRichText lays elements out as one rich_text block, cut visibly to
// Slack's 3,000 characters, whose text Slack shows exactly as given.
func SlackRichText(elems ...SlackElem) slack.Block {
	raw := make([]slackElem, len(elems))
	for i, e := range elems {
		raw[i] = e.e
	}
	return slackRichText(cutSlackElems(raw, slackRichTextMax))
}

// SlackContext is a context block of one plain_text (small print), cut
// visibly to Slack's limit.
func SlackContext(text string) slack.Block {
	return slackContext([]slackElem{{Kind: elemText, Text: cleanText(text)}})
}

// SlackRichTextMax is how much text SlackRichText keeps in one block.
const SlackRichTextMax = slackRichTextMax

// SlackBlocksTextMax is how much text one message's blocks may hold in
// all.
const SlackBlocksTextMax = slackBlocksTextMax

// SlackFallback escapes text for a message's top-level text (what
// notifications show): it can form no link and no mention, and shows an
// invisible character as [U+XXXX].
func SlackFallback(s string) string { return mrkdwn(cleanText(s)) }
