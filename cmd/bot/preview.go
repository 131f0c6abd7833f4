package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"approvalsbot/approval"
	"approvalsbot/config"
	"approvalsbot/ladder"
	"approvalsbot/notify"
	"approvalsbot/templates"
	"approvalsbot/threads"
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
	cfgPath := fs.String("config", "", "a configuration whose tenant gives the card its ladder, deadline and zone, as the bot would (no secret is read)")
	at := fs.String("at", "", "when the card is shown (RFC 3339), so a time on another day carries its date; default when the sample decision is made, three minutes after the request")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(fs.Output(), "usage: bot preview [--as slack|discord|email|text] [--state STATE] [--comment TEXT] [--previous EVENT.json] [--config bot.yaml] [--at TIME] EVENT.json")
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
	// the request has one, so a preview is the same every run. Without a
	// configuration the plan has no steps: only the deadline shows.
	decided := a.RequestedAt.Add(3 * time.Minute)
	shown := decided
	if *at != "" {
		if shown, err = time.Parse(time.RFC3339, *at); err != nil {
			return fmt.Errorf("--at %q: want an RFC 3339 time like 2026-11-30T09:00:00Z", *at)
		}
	}
	plan := templates.LadderPlan{Deadline: ladder.Deadline(a.Deadline, a.RequestedAt, 0, 0)}
	var zone *time.Location
	if *cfgPath != "" {
		tenant, err := previewTenant(*cfgPath, a.Tenant)
		if err != nil {
			return err
		}
		// Frozen as ingest freezes it: the request's ladder if the tenant
		// has it, else the tool's, else default, and the deadline likewise.
		l := tenant.LadderFor(a.Call.Function, a.Ladder)
		dl := ladder.Deadline(a.Deadline, a.RequestedAt, tenant.DeadlineFor(a.Call.Function), 0)
		plan = threads.CardPlan(l.Plan(a.RequestedAt, dl))
		if a.Ladder != "" && a.Ladder != l.Name {
			plan.Unknown = a.Ladder
		}
		zone = tenant.Zone
	}
	in, err := templates.PreviewInput(a, *state, decided, plan)
	if err != nil {
		return err
	}
	in.Now, in.Zone = shown, zone
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

// previewTenant reads a configuration for its tenant id only: a preview
// sends nothing, so every ${NAME} reads as a placeholder of a secret's
// length instead of the environment.
func previewTenant(path, id string) (*config.Tenant, error) {
	placeholder := func(string) (string, bool) { return strings.Repeat("p", config.MinHMACKey), true }
	cfg, err := config.Load(path, placeholder)
	if err != nil {
		return nil, err
	}
	t, ok := cfg.Tenants[id]
	if !ok {
		return nil, fmt.Errorf("%s has no tenant %q, the event's", path, id)
	}
	return t, nil
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
