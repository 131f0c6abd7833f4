package discordtest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/bwmarrin/discordgo"
)

// Click is a press on a button of a message.
type Click struct {
	User     string // who clicked
	Channel  string // where: a guild channel, a thread or a DM channel
	CustomID string
	// MessageID is the message the button is on; empty means the newest
	// message in Channel with a button of CustomID (none for a forged
	// click: a click on no message).
	MessageID string
	// Ephemeral: the button is on an ephemeral message, a private answer
	// the bot gave User (the fake keeps none of those): the click carries
	// that message with Discord's EPHEMERAL flag, as Discord sends it.
	Ephemeral bool
}

// Submit is the submission of a modal.
type Submit struct {
	User     string
	Channel  string
	CustomID string            // the modal's
	Values   map[string]string // text inputs by custom_id
	// Selects are string selects' chosen values by custom_id, each in a
	// label, after the text inputs.
	Selects map[string][]string
	// MessageID is the message whose button opened the modal; empty means
	// the one the modal CustomID was last opened from for User (none when
	// the bot opened no such modal: a forged submission).
	MessageID string
	// Rows submits the values in action rows, as Discord does for a modal
	// built of action rows (an older release's); by default each is in a
	// label, as Discord submits a modal of labels.
	Rows bool
}

// Result is the bot's first answer to an interaction.
type Result struct {
	Transport string // "http" or "gateway"
	ID        string
	Token     string
	// Status and Body are the HTTP answer (http transport).
	Status int
	Body   string
	// Response is the answer, nil when none came (in time).
	Response *Answer
	// Problem says what Discord would refuse about the answer: wrong type,
	// a modal over its limits, later than 3 s, no gateway session. "" for
	// none.
	Problem string
	Elapsed time.Duration
}

// Answered reports whether the bot answered acceptably.
func (r Result) Answered() bool { return r.Response != nil && r.Problem == "" }

// ClickButton delivers a button press: signed to the interactions URL
// when one is set, else over the gateway.
func (s *Server) ClickButton(c Click) Result {
	if c.MessageID == "" && !c.Ephemeral {
		c.MessageID = s.messageOfClick(c.Channel, c.CustomID)
	}
	in, p := s.newInteraction(discordgo.InteractionMessageComponent, c.User, c.Channel)
	p["data"] = map[string]any{"custom_id": c.CustomID, "component_type": discordgo.ButtonComponent}
	switch {
	case c.Ephemeral:
		p["message"] = s.ephemeralRef(in, c.Channel)
	case c.MessageID != "":
		p["message"] = s.messageRef(in, c.MessageID, c.Channel)
	}
	return s.deliver(in, p)
}

// Choose is a choice in a message's string select.
type Choose struct {
	User     string
	Channel  string
	CustomID string // the select's
	Values   []string
	// MessageID and Ephemeral are as a Click's.
	MessageID string
	Ephemeral bool
}

// ChooseOption delivers a choice in a string select, as ClickButton
// delivers a press.
func (s *Server) ChooseOption(c Choose) Result {
	if c.MessageID == "" && !c.Ephemeral {
		c.MessageID = s.messageOfClick(c.Channel, c.CustomID)
	}
	in, p := s.newInteraction(discordgo.InteractionMessageComponent, c.User, c.Channel)
	values := c.Values
	if values == nil {
		values = []string{}
	}
	p["data"] = map[string]any{"custom_id": c.CustomID, "component_type": discordgo.SelectMenuComponent, "values": values}
	switch {
	case c.Ephemeral:
		p["message"] = s.ephemeralRef(in, c.Channel)
	case c.MessageID != "":
		p["message"] = s.messageRef(in, c.MessageID, c.Channel)
	}
	return s.deliver(in, p)
}

// SubmitModal delivers a modal's submission.
func (s *Server) SubmitModal(m Submit) Result {
	in, p := s.newInteraction(discordgo.InteractionModalSubmit, m.User, m.Channel)
	ids := make([]string, 0, len(m.Values))
	for id := range m.Values {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	comps := make([]any, 0, len(ids))
	for i, id := range ids {
		input := map[string]any{"type": discordgo.TextInputComponent, "id": 2*i + 2, "custom_id": id, "value": m.Values[id]}
		if m.Rows {
			comps = append(comps, map[string]any{"type": discordgo.ActionsRowComponent, "id": 2*i + 1, "components": []any{input}})
		} else {
			comps = append(comps, map[string]any{"type": componentLabel, "id": 2*i + 1, "component": input})
		}
	}
	sel := make([]string, 0, len(m.Selects))
	for id := range m.Selects {
		sel = append(sel, id)
	}
	sort.Strings(sel)
	for i, id := range sel {
		n := 2*len(ids) + 2*i
		comps = append(comps, map[string]any{"type": componentLabel, "id": n + 1, "component": map[string]any{
			"type": discordgo.SelectMenuComponent, "id": n + 2, "custom_id": id, "values": m.Selects[id]}})
	}
	p["data"] = map[string]any{"custom_id": m.CustomID, "components": comps}
	if m.MessageID == "" {
		m.MessageID = s.messageOfModal(m.User, m.CustomID)
	}
	if m.MessageID != "" {
		p["message"] = s.messageRef(in, m.MessageID, m.Channel)
	}
	return s.deliver(in, p)
}

// Command delivers a slash command by name, with no options: one the bot
// never registered, or a command with subcommands run bare (which
// Discord's client does not let a person do).
func (s *Server) Command(user, channel, name string) Result {
	in, p := s.newInteraction(discordgo.InteractionApplicationCommand, user, channel)
	p["data"] = map[string]any{"id": s.Snowflake(), "name": name, "type": 1}
	return s.deliver(in, p)
}

// Subcommand delivers a slash command's subcommand, as Discord sends
// /name sub.
func (s *Server) Subcommand(user, channel, name, sub string) Result {
	in, p := s.newInteraction(discordgo.InteractionApplicationCommand, user, channel)
	p["data"] = map[string]any{"id": s.Snowflake(), "name": name, "type": 1,
		"options": []any{map[string]any{"name": sub, "type": 1}}}
	return s.deliver(in, p)
}

// Ping sends Discord's PING, as when the endpoint URL is saved in the
// developer portal.
func (s *Server) Ping() Result {
	in, p := s.newInteraction(discordgo.InteractionPing, "", "")
	return s.deliver(in, p)
}

// Payload builds a click as Discord would send it, registered (so its
// token works once answered), without sending it: for tests that send it
// themselves, badly signed or late.
func (s *Server) Payload(c Click) []byte {
	_, p := s.newInteraction(discordgo.InteractionMessageComponent, c.User, c.Channel)
	p["data"] = map[string]any{"custom_id": c.CustomID, "component_type": discordgo.ButtonComponent}
	b, _ := json.Marshal(p) // plain data
	return b
}

// Sign is Discord's Ed25519 signature of timestamp+body, in hex.
func (s *Server) Sign(timestamp string, body []byte) string {
	return hex.EncodeToString(ed25519.Sign(s.priv, append([]byte(timestamp), body...)))
}

// Post sends body to the interactions URL with Discord's signature
// headers for timestamp; edit may change the request before it goes.
// It returns the HTTP status and body.
func (s *Server) Post(body []byte, timestamp time.Time, edit func(*http.Request)) (int, string) {
	s.mu.Lock()
	url := s.interactionsURL
	s.mu.Unlock()
	ts := strconv.FormatInt(timestamp.Unix(), 10)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		s.t.Fatalf("discordtest: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Discord-Interactions/1.0 (+https://discord.com)")
	req.Header.Set("X-Signature-Timestamp", ts)
	req.Header.Set("X-Signature-Ed25519", s.Sign(ts, body))
	if edit != nil {
		edit(req)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	res, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func (s *Server) newInteraction(typ discordgo.InteractionType, userID, channelID string) (*interaction, map[string]any) {
	tok := make([]byte, 32)
	_, _ = rand.Read(tok)
	in := &interaction{id: s.Snowflake(), token: "aW50ZXJhY3Rpb24" + hex.EncodeToString(tok), user: userID,
		channel: channelID, typ: typ, created: s.o.Now()}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.interactions[in.token] = in
	p := map[string]any{"id": in.id, "application_id": s.o.ApplicationID, "type": typ, "token": in.token, "version": 1}
	if typ == discordgo.InteractionPing {
		return in, p
	}
	p["channel_id"] = channelID
	p["locale"] = "en-US"
	p["entitlements"] = []any{}
	who := map[string]any{"id": userID, "username": "user" + userID, "discriminator": "0"}
	c := s.channels[channelID]
	if c != nil && c.guildID != "" {
		p["guild_id"] = c.guildID
		p["guild_locale"] = "en-US"
		p["context"] = discordgo.InteractionContextGuild
		p["app_permissions"] = strconv.FormatInt(s.perms(c), 10)
		p["member"] = map[string]any{"user": who, "roles": []string{}, "permissions": "1071698660929",
			"joined_at": "2026-01-05T10:00:00.000000+00:00", "deaf": false, "mute": false}
	} else {
		p["context"] = discordgo.InteractionContextBotDM
		p["user"] = who
	}
	return in, p
}

// messageRef is the message an interaction is on, as Discord sends it
// (the whole message as it stands), and ties the interaction to it.
// ephemeralRef makes the ephemeral message a click on a private answer
// is on, and returns it as Discord sends it with the click.
func (s *Server) ephemeralRef(in *interaction, channelID string) map[string]any {
	id := s.Snowflake()
	s.mu.Lock()
	defer s.mu.Unlock()
	m := &Message{ID: id, ChannelID: channelID, Flags: discordgo.MessageFlagsEphemeral, CreatedAt: time.Now()}
	in.message, in.ephemeral = id, m
	return s.messageJSON(m)
}

func (s *Server) messageRef(in *interaction, id, channelID string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	in.message = id
	if m := s.messages[id]; m != nil {
		return s.messageJSON(m)
	}
	return map[string]any{"id": id, "channel_id": channelID, "type": 0, "content": "", "author": s.botUser(),
		"timestamp": "2026-11-29T18:00:01.000000+00:00", "flags": 0}
}

// deliver sends an interaction by the configured transport and waits for
// the first answer, at most 3 s on the gateway.
func (s *Server) deliver(in *interaction, payload map[string]any) Result {
	body, _ := json.Marshal(payload) // plain data
	s.mu.Lock()
	url := s.interactionsURL
	s.mu.Unlock()
	res := Result{ID: in.id, Token: in.token}
	start := time.Now()
	if url != "" {
		res.Transport = "http"
		res.Status, res.Body = s.Post(body, s.o.Now(), nil)
		res.Elapsed = time.Since(start)
		if res.Status != http.StatusOK {
			res.Problem = "answered HTTP " + strconv.Itoa(res.Status)
			return res
		}
		answer, err := parseAnswer([]byte(res.Body))
		if err != nil {
			res.Problem = "the answer is not JSON"
			return res
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		res.Problem = s.checkAnswerLocked(in, []byte(res.Body))
		if res.Problem == "" && res.Elapsed > answerWithin {
			res.Problem = "answered after 3 s"
		}
		res.Response = answer
		if res.Problem == "" {
			s.acceptLocked(in, answer, []byte(res.Body))
		}
		return res
	}
	res.Transport = "gateway"
	if !s.dispatch("INTERACTION_CREATE", body) {
		res.Problem = "no gateway session is connected"
		return res
	}
	deadline := start.Add(answerWithin)
	wake := time.AfterFunc(answerWithin, func() {
		s.mu.Lock()
		s.answered.Broadcast()
		s.mu.Unlock()
	})
	defer wake.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for !in.answered && time.Now().Before(deadline) {
		s.answered.Wait()
	}
	res.Elapsed = time.Since(start)
	if !in.answered {
		res.Problem = "no answer within 3 s"
		return res
	}
	res.Response = in.answer
	return res
}
