package slack

import (
	"regexp"
	"strings"

	slackgo "github.com/slack-go/slack"

	"approvalsbot/internal/utf16text"
	"approvalsbot/templates"
)

// Message is what the bot sends to chat.postMessage or chat.update:
// Blocks for the card, Text for notifications and clients without blocks;
// Text is mrkdwn, escaped, so it forms no link or mention.
type Message struct {
	Text   string          `json:"text"`
	Blocks []slackgo.Block `json:"blocks,omitempty"`
}

// MsgOptions are the slack-go options that send m, unfurling off: a link
// in an agent's text must not make Slack fetch it (telling its owner the
// card was seen) or show its preview as if the card said it.
func (m Message) MsgOptions() []slackgo.MsgOption {
	opts := []slackgo.MsgOption{
		slackgo.MsgOptionText(m.Text, false),
		slackgo.MsgOptionDisableLinkUnfurl(),
		slackgo.MsgOptionDisableMediaUnfurl(),
	}
	if len(m.Blocks) > 0 {
		opts = append(opts, slackgo.MsgOptionBlocks(m.Blocks...))
	}
	return opts
}

// CardMessage renders c as Block Kit within Slack's limits: the status,
// the title as a header, one block per part, the buttons. Text from the
// backend, the agent or a person is only ever literal
// (docs/cards.md#how-slack-shows-a-cards-text).
func CardMessage(c templates.Card) Message {
	title := utf16text.Cut(strings.Trim(c.Function, "\n"), headerTextMax)
	var choices []slackgo.BlockElement
	if c.Question != nil {
		// A question's title says who asks (question.go).
		title = utf16text.Cut(oneLine(c.QuestionTitle()), headerTextMax)
		choices = choiceElements(c.Question.Choices)
	}
	actions := buttons(c.Buttons)
	parts := []templates.Part[[]elem]{{Name: "card.status", Content: cutElems(statusElems(&c), richTextMax)}}
	for _, name := range cardParts {
		var e elems
		if write := partWriters[name]; write != nil {
			write(&e, &c)
		}
		if !contextParts[name] {
			e = cutElems(e, richTextMax)
		}
		parts = append(parts, templates.Part[[]elem]{Name: name, Content: e})
		if name == "card.agent" && c.Question != nil {
			// A question's answer follows it, in a block of its own that
			// is never cut: templates bounds it.
			var a elems
			answerPart(&a, c.Question)
			parts = append(parts, templates.Part[[]elem]{Name: "card.answer", Content: cutElems(a, richTextMax)})
		}
	}
	templates.FitParts(parts, blocksTextMax-utf16text.Len(title)-buttonsTextLen(c.Buttons)-choicesTextLen(c.Question), fitElems)

	var blocks []namedBlock
	for i, p := range parts {
		if i == 1 && title != "" {
			blocks = append(blocks, namedBlock{"card.title", slackgo.NewHeaderBlock(plainText(title, headerTextMax))})
		}
		switch {
		case len(p.Content) == 0:
		case contextParts[p.Name]:
			blocks = append(blocks, namedBlock{p.Name, contextBlock(p.Content)})
		default:
			blocks = append(blocks, namedBlock{p.Name, richTextBlock(p.Content)})
		}
	}
	if len(choices) > 0 {
		blocks = append(blocks, namedBlock{"card.choices", slackgo.NewActionBlock("", choices...)})
	}
	if len(actions) > 0 {
		blocks = append(blocks, namedBlock{"card.buttons", slackgo.NewActionBlock("", actions...)})
	}
	blocks = capBlocks(blocks)
	out := make([]slackgo.Block, len(blocks))
	for i, b := range blocks {
		out[i] = b.block
	}
	return Message{Text: utf16text.Cut(mrkdwn(c.Headline), messageTextMax), Blocks: out}
}

// cardParts are the card's parts below its title; cutOrder how they give way.
var (
	cardParts = templates.CardParts()
	cutOrder  = templates.CutOrder()
)

// contextParts are shown small (context blocks); the rest are rich_text
// blocks. The plan line is rich text: its times are date elements, and a
// context block could not hold as many as a plan has.
var contextParts = map[string]bool{"card.meta": true, "card.digest": true}

// namedBlock is a block and the part it shows, for capBlocks.
type namedBlock struct {
	name  string
	block slackgo.Block
}

// leftOut stands in for a part that no longer fits at all.
const leftOut = "[%s left out to fit Slack; the console shows all]"

// fitElems measures and cuts parts as Slack counts a message's blocks.
var fitElems = templates.Fitter[[]elem]{
	Len: elemsLen,
	Cut: cutElems,
	LeftOut: func(what string) []elem {
		return []elem{{kind: elemText, style: italicStyle, text: strings.ReplaceAll(leftOut, "%s", what)}}
	},
}

// buttonsTextLen is the text the buttons add: labels and confirm dialogs.
func buttonsTextLen(buttons []templates.Button) int {
	n := 0
	for _, b := range buttons {
		n += utf16text.Len(b.Label)
		if cf := b.Confirm; cf != nil {
			n += utf16text.Len(cf.Title) + utf16text.Len(cf.Text) + utf16text.Len(cf.Confirm) + utf16text.Len(cf.Cancel)
		}
	}
	return n
}

// capBlocks keeps a message within maxBlocks by dropping parts in
// cutOrder (never one MustKeep); a card today has far fewer.
func capBlocks(blocks []namedBlock) []namedBlock {
	for _, name := range cutOrder {
		if len(blocks) <= maxBlocks {
			return blocks
		}
		if templates.MustKeep(name) {
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

func plainText(s string, max int) *slackgo.TextBlockObject {
	return slackgo.NewTextBlockObject(slackgo.PlainTextType, utf16text.Cut(s, max), false, false)
}

// buttons renders the buttons, each payload both action_id and value.
func buttons(bs []templates.Button) []slackgo.BlockElement {
	var out []slackgo.BlockElement
	for i, b := range bs {
		if i == actionsElementsMax {
			break
		}
		if len(b.Payload) > actionIDMax || len(b.Payload) > buttonValueMax {
			continue // unreachable for a valid action: EncodeAction stays within 100
		}
		btn := slackgo.NewButtonBlockElement(b.Payload, b.Payload, plainText(b.Label, buttonTextMax))
		switch b.Style {
		case templates.StylePrimary:
			btn.Style = slackgo.StylePrimary
		case templates.StyleDanger:
			btn.Style = slackgo.StyleDanger
		}
		if cf := b.Confirm; cf != nil {
			btn.Confirm = slackgo.NewConfirmationBlockObject(
				plainText(cf.Title, confirmTitleMax),
				plainText(cf.Text, confirmTextMax),
				plainText(cf.Confirm, confirmButtonMax),
				plainText(cf.Cancel, confirmButtonMax),
			).WithStyle(slackgo.StyleDanger)
		}
		out = append(out, btn)
	}
	return out
}

// ThreadReply renders a thread reply (post it with thread_ts): an
// escalation as mrkdwn whose mentions notify, any other as literal text.
func ThreadReply(m templates.ThreadMessage) Message {
	l := m.Lines()
	msg := Message{Text: utf16text.Fit(threadText(l), sectionTextMax, cutMarker, trimMrkdwn)}
	if e := threadElems(l); len(e) > 0 {
		msg.Blocks = []slackgo.Block{richTextBlock(cutElems(e, richTextMax))}
	}
	return msg
}

var (
	userID  = regexp.MustCompile(`^[UW][A-Z0-9]{2,20}$`)
	groupID = regexp.MustCompile(`^S[A-Z0-9]{2,20}$`)
)

// mention is how a reply names whom it tells: a user or a user group of
// this workspace by its id (which notifies), anyone else as @name.
func mention(m templates.Mention) (id string, kind elemKind) {
	id, ok := strings.CutPrefix(m.Target, "slack:")
	switch {
	case ok && userID.MatchString(id):
		return id, elemUser
	case ok && groupID.MatchString(id):
		return id, elemGroup
	}
	return "", elemText
}

// threadText is a reply's notification text, escaped mrkdwn; an
// escalation's mentions are in Slack's syntax (<@U…>, <!subteam^S…>),
// built from validated ids only, and notify.
func threadText(l templates.ThreadLines) string {
	var mentions []string
	for _, m := range l.Mentions {
		switch id, kind := mention(m); kind {
		case elemUser:
			mentions = append(mentions, "<@"+id+">")
		case elemGroup:
			mentions = append(mentions, "<!subteam^"+id+">")
		default:
			mentions = append(mentions, "@"+mrkdwn(m.Name))
		}
	}
	if l.More != "" {
		mentions = append(mentions, l.More)
	}
	var b strings.Builder
	switch l.Kind {
	case templates.ThreadEscalation:
		b.WriteString(strings.Join(mentions, " ") + ": waiting " + l.Waited)
		if l.By != "" {
			b.WriteString(", escalated now by " + mrkdwn(l.By))
		}
	case templates.ThreadRecheckRefused:
		if len(mentions) > 0 {
			b.WriteString(strings.Join(mentions, " ") + " ")
		}
		b.WriteString(mrkdwn(l.Lead))
		if l.Text != "" {
			b.WriteString(": " + mrkdwn(l.Text))
		} else {
			b.WriteString(".")
		}
	case templates.ThreadCancelled:
		b.WriteString("Cancelled")
		if l.Text != "" {
			b.WriteString(": " + mrkdwn(l.Text))
		}
	default:
		b.WriteString(mrkdwn(l.Text))
	}
	return strings.Trim(b.String(), "\n")
}

// threadElems is what a reply other than an escalation shows: its text
// literally, a re-check refusal's mentions as elements, which notify.
func threadElems(l templates.ThreadLines) elems {
	var e elems
	switch l.Kind {
	case templates.ThreadEscalation:
	case templates.ThreadRecheckRefused:
		for _, m := range l.Mentions {
			switch id, kind := mention(m); kind {
			case elemUser, elemGroup:
				e = append(e, elem{kind: kind, text: id})
			default:
				e.text("@" + m.Name)
			}
			e.text(" ")
		}
		if l.More != "" {
			e.text(l.More + " ")
		}
		e.bold(l.Lead)
		if l.Text != "" {
			e.text(": ")
			e.text(l.Text)
		} else {
			e.text(".")
		}
	case templates.ThreadCancelled:
		e.bold("Cancelled")
		if l.Text != "" {
			e.text(": ")
			e.text(l.Text)
		}
	default:
		e.text(l.Text)
	}
	return e
}
