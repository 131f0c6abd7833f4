package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"

	"approvalsbot/adapters/backend"
	"approvalsbot/adapters/backend/standin"
	"approvalsbot/approval"
	"approvalsbot/config"
)

// eventAbout is `bot event -h`'s account of the command.
const eventAbout = `Signs EVENT.json with the first events secret and sends it to a running bot (at listen_private when set, else listen), printing the answer. Of the environment it needs only the events secret.

Unless --as-is, the event is moved to now first (its time, requested_at and deadline together) and sent under a fresh event id, and an approval.requested (or a question.asked) under a fresh approval (or question) id too, so each run shows a new card: the file's id with the time appended and a few random digits (evt-0001.20261201T092600.123Z-3f9a1c, a-merge1.20261201T092600.123Z-b07e52). The suffix is this command's, not the protocol's: a job backend does not know the approval it names, and the stand-in (bot backend) strips it to answer from the fixture's arguments (a question it was not told of, it learns from the first call about it). Other events keep the ids the file gives them.`

// cmdEvent signs an event file and posts it to a running bot, first (unless
// --as-is) moved to now with a fresh id, so an old example shows a live
// card and can be sent again.
func cmdEvent(ctx context.Context, args []string, stdout io.Writer, getenv env) error {
	fs := newFlags("event", stdout, []string{"EVENT.json"}, eventAbout,
		"bot event --config examples/bot.yaml testdata/fixtures/events/merge.json")
	path := configFlag(fs.FlagSet)
	url := fs.String("url", "", "the bot's events URL (default: from the configuration's listen_private, else listen)")
	asIs := fs.Bool("as-is", false, "send the file exactly as it is: its own times and ids")
	grantCheck := fs.Bool("grant-check", false, "for an approval.requested: ask the stand-in backend (bot backend, at backend.url) whether a grant it keeps covers the call, and if one does send approval.auto_granted naming it instead, as a backend applying the grant would")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	file := pos[0]
	body, err := readEventFile(file)
	if err != nil {
		return err
	}
	cfg, err := loadForEvent(*path, getenv)
	if err != nil {
		return err
	}
	now := time.Now()
	if !*asIs {
		moved, err := moveEventToNow(body, now)
		if err != nil {
			return fmt.Errorf("%s: %w (send it with -as-is to let the bot answer it)", file, err)
		}
		body = moved.Body
		fmt.Fprintf(stdout, "moved the event's times by %s to now (time %s); sending it as event %s\n",
			signedDuration(moved.Delta), moved.Time.Format(time.RFC3339), moved.ID)
		if moved.Approval != "" {
			fmt.Fprintf(stdout, "%s %s is sent as %s, a fresh id, so this run shows a new card\n", moved.Kind, moved.FromApproval, moved.Approval)
		}
	}
	if *grantCheck {
		if body, err = grantedInstead(ctx, cfg.Backend.URL, body, now, stdout); err != nil {
			return err
		}
	}
	target, where := eventTarget(cfg, *url, *path)
	return signAndSend(ctx, cfg, target, where, body, now, stdout)
}

// eventTarget is where events go: flagURL when set, else the
// configuration's listen_private, else listen; where names which.
func eventTarget(cfg *config.Config, flagURL, path string) (target, where string) {
	target, where = flagURL, "--url"
	if target == "" {
		target, where = eventsURL(cmp.Or(cfg.ListenPrivate, cfg.Listen)), "listen in "+path
		if cfg.ListenPrivate != "" {
			where = "listen_private in " + path
		}
	}
	return target, where
}

// signAndSend signs body at now with the first events secret, posts it to
// target and prints the answer.
func signAndSend(ctx context.Context, cfg *config.Config, target, where string, body []byte, now time.Time, stdout io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(backend.SignatureHeader, backend.Sign([]byte(cfg.Backend.EventsSecrets[0].Reveal()), now, body))
	resp, err := (&http.Client{Timeout: 15 * time.Second}).Do(req)
	if errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("nothing answers at %s (%s): is bot serve running there? (%v)", req.URL.Host, where, networkCause(err))
	}
	if err != nil {
		return fmt.Errorf("send to %s: %w", target, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	fmt.Fprintf(stdout, "%s %s\n", resp.Status, strings.TrimSpace(string(answer)))
	if resp.StatusCode >= 300 {
		return fmt.Errorf("the bot answered %s", resp.Status)
	}
	return nil
}

// movedEvent is an event moved in time by moveEventTimes.
type movedEvent struct {
	Body  []byte
	ID    string        // the event id it now carries
	Time  time.Time     // its envelope time after the move
	Delta time.Duration // how far its instants moved
	// Approval is the fresh id a request's approval (or an asked
	// question) now carries, and FromApproval the file's; both "" for
	// another event. Kind is "approval" or "question".
	Approval, FromApproval, Kind string
}

// moveEventToNow moves an event to now (to the store's millisecond) with
// a fresh id, and a request's approval too, so the bot takes neither for
// one it holds.
func moveEventToNow(body []byte, now time.Time) (movedEvent, error) {
	at, err := eventTime(body)
	if err != nil {
		return movedEvent{}, err
	}
	now = now.UTC().Truncate(time.Millisecond)
	var from, fresh, kind string
	var tooLong error
	moved, err := moveEventTimes(body, now.Sub(at), func(ev map[string]any) {
		if id, ok := ev["id"].(string); ok {
			ev["id"] = standin.FreshID(id, now)
			if n := len(ev["id"].(string)); n > maxEventID {
				tooLong = fmt.Errorf("event id %q is too long for a fresh one: %d characters with the suffix, over the protocol's %d (--as-is sends it as it is)", id, n, maxEventID)
			}
		}
		data, _ := ev["data"].(map[string]any)
		id, ok := data["id"].(string)
		switch ev["type"] {
		case string(approval.EventRequested):
			kind = "approval"
		case string(approval.EventQuestionAsked):
			kind = "question"
		default:
			return
		}
		if !ok {
			return
		}
		from, fresh = id, standin.FreshID(id, now)
		if len(fresh) > maxApprovalID {
			tooLong = errors.Join(tooLong, fmt.Errorf("%s id %q is too long for a fresh one: %s is over the protocol's %d characters (--as-is sends it as it is)", kind, id, fresh, maxApprovalID))
			return
		}
		data["id"] = fresh
	})
	if err == nil {
		err = tooLong
	}
	if fresh != "" {
		moved.Approval, moved.FromApproval, moved.Kind = fresh, from, kind
	}
	return moved, err
}

// The protocol's longest approval and event ids.
const (
	maxApprovalID = 64
	maxEventID    = 128
)

// loadForEvent reads the configuration as `bot event` needs it: every
// secret but the events secrets may be unset, and reads as a placeholder.
// The rest is read as bot serve reads it. The file is read once, and
// parsed a second time only when the first parse stood a placeholder in
// for a variable that is not such a secret.
func loadForEvent(path string, getenv env) (*config.Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	// 64 hex digits: long enough for an HMAC secret, and a key's format
	// (Discord's public key) too.
	placeholder := strings.Repeat("0", 2*config.MinHMACKey)
	// A first reading, each variable set read as it is and every other a
	// placeholder, finds which hold secrets.
	stoodIn := map[string]bool{}
	cfg, err := config.Parse(path, data, func(name string) (string, bool) {
		if v, ok := getenv(name); ok {
			return v, true
		}
		stoodIn[name] = true
		return placeholder, true
	})
	if err != nil {
		return config.Parse(path, data, getenv)
	}
	secret, needed := map[string]bool{}, map[string]bool{}
	for _, v := range cfg.SecretVars {
		secret[v.Var] = true
		needed[v.Var] = needed[v.Var] || strings.HasPrefix(v.Path, "backend.events_secrets")
	}
	standIn := func(name string) bool { return secret[name] && !needed[name] }
	for name := range stoodIn {
		if standIn(name) {
			continue
		}
		// A variable stood in for that the second reading leaves unset:
		// that reading says what is wrong.
		return config.Parse(path, data, func(name string) (string, bool) {
			if v, ok := getenv(name); ok || !standIn(name) {
				return v, ok
			}
			return placeholder, true
		})
	}
	// The second reading would be given the same values: it is this one.
	return cfg, nil
}

// readEventFile reads a file a command takes as an event: a JSON object.
func readEventFile(path string) ([]byte, error) {
	body, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		return body, nil
	}
	hint := "a JSON event like testdata/fixtures/events/merge.json"
	if isConfigName(path) {
		hint += "; a configuration goes with --config"
	}
	return nil, usageError("%s: expected an event file (%s)", path, hint)
}

// eventTimeFields are the instants of an event, as paths from the
// envelope: its own time, and an approval's request time and deadline.
var eventTimeFields = [][]string{{"time"}, {"data", "requested_at"}, {"data", "deadline"}}

func eventTime(body []byte) (time.Time, error) {
	var head struct {
		Time string `json:"time"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		return time.Time{}, fmt.Errorf("not an event: %w", err)
	}
	at, err := time.Parse(time.RFC3339Nano, head.Time)
	if err != nil {
		return time.Time{}, errors.New("not an event: its time is not an RFC 3339 instant")
	}
	return at, nil
}

// moveEventTimes shifts eventTimeFields by delta, then lets a non-nil
// edit change the event. The rest is the same JSON; numbers keep their digits.
func moveEventTimes(body []byte, delta time.Duration, edit func(ev map[string]any)) (movedEvent, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var ev map[string]any
	if err := dec.Decode(&ev); err != nil {
		return movedEvent{}, fmt.Errorf("not an event: %w", err)
	}
	var moved movedEvent
	for _, field := range eventTimeFields {
		obj := ev
		for _, k := range field[:len(field)-1] {
			obj, _ = obj[k].(map[string]any)
		}
		name := field[len(field)-1]
		s, ok := obj[name].(string)
		if !ok {
			continue // absent (a deadline is optional) or not an instant: the bot will say so
		}
		at, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return movedEvent{}, fmt.Errorf("%s: %q is not an RFC 3339 instant", strings.Join(field, "."), s)
		}
		at = at.Add(delta).UTC()
		obj[name] = at.Format(time.RFC3339Nano)
		if name == "time" && len(field) == 1 {
			moved.Time = at
		}
	}
	if edit != nil {
		edit(ev)
	}
	id, _ := ev["id"].(string)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ev); err != nil {
		return movedEvent{}, err
	}
	moved.Body = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	moved.ID = id
	moved.Delta = delta
	return moved, nil
}

// signedDuration words a shift for a person: "+2d15h26m" or "-3h".
func signedDuration(d time.Duration) string {
	sign := "+"
	if d < 0 {
		sign, d = "-", -d
	}
	d = d.Round(time.Second)
	days := d / (24 * time.Hour)
	rest := (d % (24 * time.Hour)).String()
	if days == 0 {
		return sign + rest
	}
	if rest == "0s" {
		return fmt.Sprintf("%s%dd", sign, days)
	}
	return fmt.Sprintf("%s%dd%s", sign, days, rest)
}
