package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"approvalsbot/approval"
	"approvalsbot/ladder"
	"approvalsbot/notify"
	"approvalsbot/templates"
)

// cmdPreview prints how a surface would show an event file, before
// anything is wired: the card of a request, or the thread reply of any
// other event.
func cmdPreview(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("preview", flag.ContinueOnError)
	as := fs.String("as", "text", "the surface: slack, discord, email or text")
	state := fs.String("state", "pending", "the card's state: "+strings.Join(templates.PreviewStates(), ", "))
	previous := fs.String("previous", "", "the event of the revision before a reask, so the card says what changed")
	comment := fs.String("comment", "", "the decision's comment or reason (approved, denied, deciding)")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(fs.Output(), "usage: bot preview [--as slack|discord|email|text] [--state STATE] [--comment TEXT] [--previous EVENT.json] EVENT.json")
		return errUsage
	}
	switch *as {
	case "slack", "discord", "email", "text":
	default:
		return fmt.Errorf("--as %q: want slack, discord, email or text", *as)
	}
	body, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	ev, err := approval.Parse(body)
	if err != nil {
		return fmt.Errorf("%s: %w", fs.Arg(0), err)
	}
	r, err := templates.New(templates.Options{})
	if err != nil {
		return err
	}
	if ev.Approval == nil {
		msg, _ := templates.ThreadFromEvent(ev)
		switch *as {
		case "slack":
			return printJSON(stdout, r.SlackThread(msg))
		case "discord":
			return printJSON(stdout, r.DiscordThread(msg))
		}
		_, err := io.WriteString(stdout, r.TextThread(msg))
		return err
	}
	a := ev.Approval
	// Decided at the event's own time and with the default deadline unless
	// the request has one, so a preview is the same every run. No tenant
	// config is read, so the plan has no steps: only the deadline shows.
	dl := ladder.Deadline(a.Deadline, a.RequestedAt, 0, 0)
	in, err := templates.PreviewInput(a, *state, a.RequestedAt.Add(3*time.Minute), templates.LadderPlan{Deadline: dl})
	if err != nil {
		return err
	}
	if *previous != "" {
		if in.Reask, err = previewReask(*previous, a); err != nil {
			return err
		}
	}
	switch {
	case *comment == "":
	case in.Deciding != nil:
		in.Deciding.Comment = *comment
	case in.Decision != nil:
		in.Decision.Comment = *comment
	}
	card := templates.Build(in)
	switch *as {
	case "slack":
		return printJSON(stdout, r.Slack(card))
	case "discord":
		return printJSON(stdout, r.Discord(card))
	case "text":
		_, err := io.WriteString(stdout, r.Text(card))
		return err
	}
	e := r.Email(card)
	raw, err := notify.Build(notify.Message{
		From: "Approvals <approvals@bot.invalid>", To: []string{"you@bot.invalid"},
		Subject: e.Subject, Text: e.Text, HTML: e.HTML, Date: ev.Time,
		MessageID: fmt.Sprintf("%s.%d.preview@bot.invalid", a.ID, a.Revision),
	})
	if err != nil {
		return err
	}
	_, err = stdout.Write(raw)
	return err
}

// previewReask is what changed from the request in file to a, as the
// bot works it out from the two revisions it keeps.
func previewReask(file string, a *approval.Approval) (*approval.Reask, error) {
	body, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	ev, err := approval.Parse(body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if ev.Approval == nil || ev.Approval.ID != a.ID || ev.Approval.Revision >= a.Revision {
		return nil, fmt.Errorf("--previous %s: want an earlier revision of approval %s", file, a.ID)
	}
	prev, err := approval.StoredForm(ev.Approval)
	if err != nil {
		return nil, err
	}
	next, err := approval.StoredForm(a)
	if err != nil {
		return nil, err
	}
	r := approval.CompareRevisions(&prev.Approval, &next.Approval)
	return &r, nil
}

func printJSON(w io.Writer, v any) error {
	b, err := templates.MarshalPreview(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
