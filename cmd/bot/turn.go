package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"approvalsbot/adapters/backend/standin"
	"approvalsbot/approval"
)

// turnAbout is `bot turn -h`'s account of the command.
const turnAbout = `Sends three approval.requested event files to a running bot as the three calls of one model turn that waits as a whole, as a job backend that supports the turns feature would: each is moved to now under fresh ids (as bot event does), and each carries the same turn.id and the three fresh approval ids as turn.members, in the order given. With turns in backend.features the bot shows them on one turn card, with Deny all and Approve all 3; the stand-in backend (bot backend) takes the batch all or nothing and prints it.`

// cmdTurn sends three request files as one turn.
func cmdTurn(ctx context.Context, args []string, stdout io.Writer, getenv env) error {
	fs := newFlags("turn", stdout, []string{"EVENT.json", "EVENT.json", "EVENT.json"}, turnAbout,
		"bot turn --config examples/bot.yaml testdata/fixtures/events/search.json testdata/fixtures/events/late-requested.json testdata/fixtures/events/unknown.json")
	path := configFlag(fs.FlagSet)
	url := fs.String("url", "", "the bot's events URL (default: from the configuration's listen_private, else listen)")
	files, err := fs.parse(args)
	if err != nil {
		return err
	}
	bodies := make([][]byte, len(files))
	for i, f := range files {
		if bodies[i], err = readEventFile(f); err != nil {
			return err
		}
	}
	cfg, err := loadForEvent(*path, getenv)
	if err != nil {
		return err
	}
	now := time.Now()
	turn, err := turnEvents(bodies, files, now)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sending %d calls as turn %s: %v\n", len(turn.members), turn.id, turn.members)
	target, where := eventTarget(cfg, *url, *path)
	for _, body := range turn.bodies {
		if err := signAndSend(ctx, cfg, target, where, body, now, stdout); err != nil {
			return err
		}
	}
	return nil
}

// turnSent is a turn's events, ready to send.
type turnSent struct {
	id      string
	members []string
	bodies  [][]byte
}

// turnEvents moves each request to now under fresh ids and makes them
// one turn: the same turn.id, the fresh approval ids as turn.members.
func turnEvents(bodies [][]byte, names []string, now time.Time) (turnSent, error) {
	out := turnSent{id: standin.FreshID("turn", now)}
	moved := make([]movedEvent, len(bodies))
	for i, b := range bodies {
		m, err := moveEventToNow(b, now)
		if err != nil {
			return turnSent{}, fmt.Errorf("%s: %w", names[i], err)
		}
		if m.Approval == "" {
			return turnSent{}, fmt.Errorf("%s: not an approval.requested event: a turn is made of requests", names[i])
		}
		moved[i] = m
		out.members = append(out.members, m.Approval)
	}
	seen := map[string]bool{}
	for _, id := range out.members {
		if seen[id] {
			return turnSent{}, errors.New("two files make the same approval: give three different requests")
		}
		seen[id] = true
	}
	for i, m := range moved {
		var ev map[string]any
		if err := json.Unmarshal(m.Body, &ev); err != nil {
			return turnSent{}, fmt.Errorf("%s: %w", names[i], err)
		}
		data, _ := ev["data"].(map[string]any)
		t, _ := data["turn"].(map[string]any)
		if t == nil {
			t = map[string]any{}
		}
		t["id"], t["members"] = out.id, out.members
		data["turn"] = t
		body, err := json.Marshal(ev)
		if err != nil {
			return turnSent{}, err
		}
		if _, err := approval.Parse(body); err != nil {
			return turnSent{}, fmt.Errorf("%s as a call of the turn: %w", names[i], err)
		}
		out.bodies = append(out.bodies, body)
	}
	return out, nil
}
