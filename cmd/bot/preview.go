package main

import (
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"approvalsbot/adapters/discord"
	"approvalsbot/adapters/slack"
	"approvalsbot/approval"
	"approvalsbot/config"
	"approvalsbot/ladder"
	"approvalsbot/notify"
	"approvalsbot/templates"
	"approvalsbot/tenant"
	"approvalsbot/threads"
)

// cmdPreview prints how a surface would show an event file: a request's
// card (as threads.Card makes it) or another event's thread reply.
func cmdPreview(args []string, stdout io.Writer) error {
	fs := newFlags("preview", stdout, []string{"EVENT.json"},
		"Prints the card of an approval.requested event, or the thread reply of another event, as a surface would show it: Slack and Discord as the JSON sent, email as an .eml, text as the log surface prints it. It reads no secret and sends nothing.",
		"bot preview --as slack --state denied testdata/fixtures/events/merge.json")
	as := fs.String("as", "text", "the surface: slack, discord, email or text; email writes, as an .eml, the mail the bot sends: with --config the first ladder step's that mails someone (to its first address, saying why they get it), the outcome mail for a closed state; without decision links, as no secret is read")
	state := fs.String("state", "pending", "the card's state: "+strings.Join(templates.PreviewStates(), ", "))
	previous := fs.String("previous", "", "the event of the revision before a reask, so the card says what changed")
	next := fs.String("next", "", "the event of the revision that replaced this one (a later revision of the same approval): the card is shown superseded by it, saying why")
	comment := fs.String("comment", "", "the decision's comment or reason (approved, denied, deciding)")
	cfgPath := fs.String("config", "", "a configuration whose tenant gives the card its ladder, deadline and zone, as the bot would (no secret is read)")
	holder := fs.Bool("content-holder", false, "render for a reader known to hold the content permission (Show details, such a member's decision page): the card shows the digest, which a shared place never does")
	at := fs.String("at", "", "when the card is shown (RFC 3339), so a time on another day carries its date; default when the sample decision is made, three minutes after the request (for a step's mail, when the step fires)")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	file := pos[0]
	switch *as {
	case "slack", "discord", "email", "text":
	default:
		return fs.usageErr("--as %q: want slack, discord, email or text", *as)
	}
	if !slices.Contains(templates.PreviewStates(), *state) {
		return fs.usageErr("--state %q: want %s", *state, strings.Join(templates.PreviewStates(), ", "))
	}
	if *next != "" {
		// The card a newer revision replaced shows no state of its own
		// (docs/cards.md): only "superseded" goes with --next.
		if set(fs.FlagSet, "state") && *state != templates.PreviewSuperseded {
			return usageError("--next shows the card superseded; it cannot be shown %s too", *state)
		}
		*state = templates.PreviewSuperseded
	}
	if *as == "email" && *state == templates.PreviewSuperseded {
		// No mail is sent of a superseded card: a step's mail shows the
		// latest revision, and the reask's mail shows the new one.
		return usageError("--as email shows a mail the bot sends; it sends none of a card %s (preview the new revision, or the outcome)", *state)
	}
	body, err := readEventFile(file)
	if err != nil {
		return err
	}
	ev, err := approval.Parse(body)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	r, err := templates.New(templates.Options{})
	if err != nil {
		return err
	}
	if ev.Approval == nil {
		msg, _ := templates.ThreadFromEvent(ev)
		switch *as {
		case "slack":
			return printJSON(stdout, slack.ThreadReply(msg))
		case "discord":
			return printJSON(stdout, discord.RenderThread(msg))
		}
		_, err := io.WriteString(stdout, r.TextThread(msg))
		return err
	}
	a := ev.Approval
	// Dated from the event, not the clock, so a preview is the same every
	// run. Without a configuration the plan has no steps.
	decided := a.RequestedAt.Add(3 * time.Minute)
	shown := decided
	if *at != "" {
		if shown, err = time.Parse(time.RFC3339, *at); err != nil {
			return fmt.Errorf("--at %q: want an RFC 3339 time like 2026-11-30T09:00:00Z", *at)
		}
	}
	fz := threads.Frozen{Plan: ladder.Plan{Requested: a.RequestedAt, Deadline: ladder.Deadline(a.Deadline, a.RequestedAt, 0, 0)},
		Restricted: a.ContentRestricted()}
	var tenant *tenant.Tenant
	if *cfgPath != "" {
		if tenant, err = previewTenant(*cfgPath, a.Tenant); err != nil {
			return err
		}
		fz = threads.Freeze(tenant, a)
	}
	// The bot builds every card from the revision as it keeps it
	// (approval.StoredForm), not from the event: so does a preview.
	raw := a // what a reask is compared by, as the bot compares on arrival
	if a, err = asKept(a); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	in, err := templates.PreviewInput(a, *state, decided, threads.CardPlan(fz.Plan))
	if err != nil {
		return err
	}
	if *previous != "" {
		made, err := previewReask("--previous", *previous, raw, false)
		if err != nil {
			return err
		}
		fz.Reasks = append(fz.Reasks, *made)
	}
	if *next != "" {
		replaced, err := previewReask("--next", *next, raw, true)
		if err != nil {
			return err
		}
		fz.Reasks = append(fz.Reasks, *replaced)
	}
	switch {
	case *comment == "":
	case in.Deciding != nil:
		in.Deciding.Comment = *comment
	case in.Decision != nil:
		in.Decision.Comment = *comment
	}
	card := threads.Card{Tenant: a.Tenant, Approval: a, State: in.State, Decision: in.Decision,
		Superseded: in.Superseded, Deciding: in.Deciding, Frozen: fz, HeldRevision: a.Revision, Now: shown}
	if *as == "email" {
		return previewMail(stdout, r, card, tenant, ev.Time, *at != "")
	}
	cin := card.Input()
	cin.ContentHolder = *holder
	c := templates.Build(cin)
	switch *as {
	case "slack":
		return printJSON(stdout, slack.CardMessage(c))
	case "discord":
		return printJSON(stdout, discord.RenderCard(c))
	}
	_, err = io.WriteString(stdout, r.Text(c))
	return err
}

// previewMail writes the .eml the bot would send of card: for a waiting
// call, the first mailing step's to its first address; for a closed one,
// the outcome mail. It has no decision links (no link secret is read),
// and is dated when it would go out, its card too unless --at (atSet).
func previewMail(w io.Writer, r *templates.Renderer, card threads.Card, tenant *tenant.Tenant, sent time.Time, atSet bool) error {
	a := card.Approval
	req := threads.MailRequest{To: "you@bot.invalid", Kind: threads.MailEscalation, Card: card}
	if card.State.Final() {
		req.Kind = threads.MailOutcome
	}
	if st, to, ok := firstMailStep(card.Frozen.Plan); ok && card.State == approval.StatePending && !card.Superseded {
		req.To, req.Step, req.Waited = to, st.Index+1, st.At.Sub(a.RequestedAt).Round(time.Second)
		// Steps due at once go out merged, as one mail per address that
		// names the last of them (threads' stepRows).
		for _, o := range card.Frozen.Plan.Steps {
			if !o.Skipped && o.At.Equal(st.At) {
				req.Step = o.Index + 1
			}
		}
		if tenant != nil {
			if m, ok := tenant.MemberOn(ladder.SurfaceEmail, to); ok {
				req.Member = m.User
			}
		}
		sent = st.At
		if !atSet {
			req.Card.Now = st.At
		}
	}
	e := r.Mail(req.Render())
	raw, err := notify.Build(notify.Message{
		From: "Approvals <approvals@bot.invalid>", To: []string{req.To},
		Subject: e.Subject, Text: e.Text, HTML: e.HTML, Date: sent.UTC(),
		MessageID: fmt.Sprintf("%s.%d.%d.preview@bot.invalid", a.ID, a.Revision, req.Step),
	})
	if err != nil {
		return err
	}
	_, err = w.Write(raw)
	return err
}

// firstMailStep is the first firing of plan that mails someone, and the
// first address it mails (a rotation's as on duty when it fires).
func firstMailStep(plan ladder.Plan) (ladder.PlannedStep, string, bool) {
	for _, st := range plan.Steps {
		if st.Skipped || len(st.Step.Email) == 0 {
			continue
		}
		if to := plan.Resolve(st.Step.Email, ladder.VerbEmail, nil, st.At); len(to) > 0 {
			return st, to[0].String(), true
		}
	}
	return ladder.PlannedStep{}, "", false
}

// set reports whether the command line gave flag name.
func set(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

// previewTenant reads a configuration for tenant id only, every ${NAME}
// a placeholder: a preview sends nothing, so it reads no secret.
func previewTenant(path, id string) (*tenant.Tenant, error) {
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

// asKept is a as the bot keeps it and reads it back for each card, but
// without fingerprints: a preview compares revisions itself.
func asKept(a *approval.Approval) (*approval.Approval, error) {
	st, err := approval.StoredForm(a)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	var kept approval.Approval
	if err := json.Unmarshal(b, &kept); err != nil {
		return nil, err
	}
	return &kept, nil
}

// previewReask is what a reask changed: from file's request to a
// (--previous), or with later from a to file's (--next).
func previewReask(flagName, file string, a *approval.Approval, later bool) (*approval.Reask, error) {
	body, err := readEventFile(file)
	if err != nil {
		return nil, err
	}
	ev, err := approval.Parse(body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	o := ev.Approval
	rel, fits := "before", o != nil && o.Revision < a.Revision
	if later {
		rel, fits = "after", o != nil && o.Revision > a.Revision
	}
	switch {
	case o == nil:
		return nil, usageError("%s %s: the event carries no request; want a revision of approval %s %s %d", flagName, file, a.ID, rel, a.Revision)
	case o.ID != a.ID:
		return nil, usageError("%s %s: that is approval %s; want a revision of approval %s %s %d", flagName, file, o.ID, a.ID, rel, a.Revision)
	case !fits:
		return nil, usageError("%s %s: that is revision %d; want a revision of approval %s %s %d", flagName, file, o.Revision, a.ID, rel, a.Revision)
	}
	prev, next := o, a
	if later {
		prev, next = a, o
	}
	// Hidden values compare by fingerprint, keyed here with this run's own
	// secret: a preview reads no calls secret.
	secret := make([]byte, 32)
	_, _ = rand.Read(secret) // never fails (crypto/rand)
	p, err := approval.StoredForm(prev, secret)
	if err != nil {
		return nil, err
	}
	n, err := approval.StoredForm(next, secret)
	if err != nil {
		return nil, err
	}
	r := approval.CompareRevisions(&p.Approval, &n.Approval, secret)
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
