package templates

import (
	"cmp"
	"strings"

	"github.com/slack-go/slack"
)

// SlackMessage is what the bot sends to chat.postMessage or chat.update:
// Blocks for the card, Text for notifications, screen readers and
// clients that show no blocks (a message with blocks does not show it).
// Text is mrkdwn, already escaped: it cannot form a link or a mention.
type SlackMessage struct {
	Text   string        `json:"text"`
	Blocks []slack.Block `json:"blocks,omitempty"`
}

// MsgOptions are the slack-go options that send m. The text is passed
// unescaped by slack-go: the renderer escaped it already. Unfurling is
// off: a link in an agent's text or an argument must not make Slack fetch
// it (and tell its owner the card was seen) or show its preview as if the
// card said it.
func (m SlackMessage) MsgOptions() []slack.MsgOption {
	opts := []slack.MsgOption{
		slack.MsgOptionText(m.Text, false),
		slack.MsgOptionDisableLinkUnfurl(),
		slack.MsgOptionDisableMediaUnfurl(),
	}
	if len(m.Blocks) > 0 {
		opts = append(opts, slack.MsgOptionBlocks(m.Blocks...))
	}
	return opts
}

// slackContextParts are shown small (context blocks); the rest are
// rich_text blocks. The plan line is rich text: its times are date
// elements, and a context block could not hold as many as a plan has.
var slackContextParts = map[string]bool{"card.meta": true, "card.digest": true}

// slackBlock is a block and the part it shows, so the block cap can drop
// the parts that give way first.
type slackBlock struct {
	name  string
	block slack.Block
}

// Slack renders c as Block Kit: the status line on top, the title as a
// header, one block per part of the card in docs/cards.md's order, and the
// buttons last. Text from the backend, the agent or a person is only ever
// literal text (rich_text text elements, plain_text), never mrkdwn, which
// has no escape for * _ ~ and backticks; the only mrkdwn is a link of the
// bot's own words, with verbatim set so Slack parses nothing else in it.
// Each text stays within Slack's limits, cut visibly; the status, the
// effect line, the flags and the buttons are always there.
func (r *Renderer) Slack(c Card) SlackMessage {
	title := cutLine(part(r.slack, "card.title", &c), slackHeaderTextMax)
	actions := slackButtons(c.Buttons)
	parts := []slackElems{{"card.status", cutSlackElems(slackPart(r.slack, "card.status", &c), slackRichTextMax)}}
	for _, name := range cardParts {
		elems := slackPart(r.slack, name, &c)
		if !slackContextParts[name] {
			elems = cutSlackElems(elems, slackRichTextMax)
		}
		parts = append(parts, slackElems{name, elems})
	}
	fitSlackParts(parts, slackBlocksTextMax-charLen(title)-buttonsTextLen(c.Buttons))

	var blocks []slackBlock
	for i, p := range parts {
		if i == 1 && title != "" {
			blocks = append(blocks, slackBlock{"card.title", slack.NewHeaderBlock(plainText(title, slackHeaderTextMax))})
		}
		switch {
		case len(p.elems) == 0:
		case slackContextParts[p.name]:
			blocks = append(blocks, slackBlock{p.name, slackContext(p.elems)})
		default:
			blocks = append(blocks, slackBlock{p.name, slackRichText(p.elems)})
		}
	}
	if len(actions) > 0 {
		blocks = append(blocks, slackBlock{"card.buttons", slack.NewActionBlock("", actions...)})
	}
	blocks = capSlackBlocks(blocks)
	out := make([]slack.Block, len(blocks))
	for i, b := range blocks {
		out[i] = b.block
	}
	return SlackMessage{Text: cutLine(mrkdwn(c.Headline), slackMessageTextMax), Blocks: out}
}

// slackElems is one part of a card as its template wrote it.
type slackElems struct {
	name  string
	elems []slackElem
}

// slackLeftOut stands in for a part that no longer fits at all.
const slackLeftOut = "[%s left out to fit Slack; the console shows all]"

// fitSlackParts keeps the text of all parts within max characters,
// cutting parts in cutOrder and each only as much as needed; a part that
// would keep less than minKept is left out, saying so, unless it must
// be kept (then it keeps minKept). The status is not among cutOrder: it
// is never cut here.
func fitSlackParts(parts []slackElems, max int) {
	total := 0
	for _, p := range parts {
		total += elemsLen(p.elems)
	}
	for _, name := range cutOrder {
		for i := range parts {
			over := total - max
			if over <= 0 {
				return
			}
			p := &parts[i]
			old := elemsLen(p.elems)
			if p.name != name || old == 0 {
				continue
			}
			var kept []slackElem
			switch target := old - over; {
			case target >= minKept:
				kept = cutSlackElems(p.elems, target)
			case mustKeep[name]:
				kept = cutSlackElems(p.elems, minKept)
			default:
				kept = []slackElem{{Kind: elemText, Style: slackItalic,
					Text: strings.ReplaceAll(slackLeftOut, "%s", cmp.Or(partNames[name], "this part"))}}
			}
			if n := elemsLen(kept); n < old {
				p.elems = kept
				total += n - old
			}
		}
	}
}

func elemsLen(elems []slackElem) int {
	n := 0
	for _, e := range elems {
		n += elemLen(e)
	}
	return n
}

// buttonsTextLen is the text the buttons add: labels and confirm dialogs.
func buttonsTextLen(buttons []Button) int {
	n := 0
	for _, b := range buttons {
		n += charLen(b.Label)
		if cf := b.Confirm; cf != nil {
			n += charLen(cf.Title) + charLen(cf.Text) + charLen(cf.Confirm) + charLen(cf.Cancel)
		}
	}
	return n
}

// capSlackBlocks keeps a message within slackMaxBlocks by dropping parts
// in cutOrder (never the status, the effect line, the flags or the
// buttons). A card has far fewer blocks than the cap; this holds the limit
// should a template ever add more.
func capSlackBlocks(blocks []slackBlock) []slackBlock {
	for _, name := range cutOrder {
		if len(blocks) <= slackMaxBlocks {
			return blocks
		}
		if mustKeep[name] {
			continue
		}
		kept := blocks[:0]
		for _, b := range blocks {
			if b.name != name {
				kept = append(kept, b)
			}
		}
		blocks = kept
	}
	return blocks
}

func plainText(s string, max int) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, cutLine(s, max), false, false)
}

// slackButtons renders the card's buttons. The payload is both action_id
// and value, so the adapter can read it from either.
func slackButtons(buttons []Button) []slack.BlockElement {
	var out []slack.BlockElement
	for i, b := range buttons {
		if i == slackActionsElementsMax {
			break
		}
		if len(b.Payload) > slackActionIDMax || len(b.Payload) > slackButtonValueMax {
			continue // unreachable for a valid action: EncodeAction stays within 100
		}
		btn := slack.NewButtonBlockElement(b.Payload, b.Payload, plainText(b.Label, slackButtonTextMax))
		switch b.Style {
		case StylePrimary:
			btn.Style = slack.StylePrimary
		case StyleDanger:
			btn.Style = slack.StyleDanger
		}
		if cf := b.Confirm; cf != nil {
			btn.Confirm = slack.NewConfirmationBlockObject(
				plainText(cf.Title, slackConfirmTitleMax),
				plainText(cf.Text, slackConfirmTextMax),
				plainText(cf.Confirm, slackConfirmButtonMax),
				plainText(cf.Cancel, slackConfirmButtonMax),
			).WithStyle(slack.StyleDanger)
		}
		out = append(out, btn)
	}
	return out
}
