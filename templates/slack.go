package templates

import (
	"github.com/slack-go/slack"
)

// SlackMessage is what the bot sends to chat.postMessage or chat.update:
// Blocks for the card, Text for notifications, screen readers and
// clients that show no blocks. Text is mrkdwn, already escaped.
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

// slackContextParts are shown small (context blocks); the rest are sections.
var slackContextParts = map[string]bool{"card.meta": true, "card.digest": true, "card.ladder": true}

// slackBlock is a block and the part it shows, so the block cap can drop
// the parts that give way first.
type slackBlock struct {
	name  string
	block slack.Block
}

// Slack renders c as Block Kit: the status line on top, the title as a
// header, one block per part of the card in CARD.md's order, and the
// buttons last. Each text stays within Slack's limits, cut visibly; the
// status, the effect line, the flags and the buttons are always there.
func (r *Renderer) Slack(c Card) SlackMessage {
	var blocks []slackBlock
	section := func(name, text string) {
		if text == "" {
			return
		}
		text = cutText(text, slackSectionTextMax, slackCutMarker, trimSlack)
		blocks = append(blocks, slackBlock{name, slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, text, false, false), nil, nil)})
	}
	section("card.status", part(r.slack, "card.status", &c))
	if title := part(r.slack, "card.title", &c); title != "" {
		blocks = append(blocks, slackBlock{"card.title", slack.NewHeaderBlock(plainText(title, slackHeaderTextMax))})
	}
	for _, name := range cardParts {
		text := part(r.slack, name, &c)
		if text == "" {
			continue
		}
		if slackContextParts[name] {
			text = cutText(text, slackTextObjectMax, slackCutMarker, trimSlack)
			blocks = append(blocks, slackBlock{name, slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, text, false, false))})
			continue
		}
		section(name, text)
	}
	if actions := slackButtons(c.Buttons); len(actions) > 0 {
		blocks = append(blocks, slackBlock{"card.buttons", slack.NewActionBlock("", actions...)})
	}
	blocks = capSlackBlocks(blocks)
	out := make([]slack.Block, len(blocks))
	for i, b := range blocks {
		out[i] = b.block
	}
	return SlackMessage{Text: cutLine(mrkdwn(c.Headline), slackMessageTextMax), Blocks: out}
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
