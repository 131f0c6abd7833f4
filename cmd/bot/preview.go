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
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(fs.Output(), "usage: bot preview [--as slack|discord|email|text] [--state STATE] EVENT.json")
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

func printJSON(w io.Writer, v any) error {
	b, err := templates.MarshalPreview(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
