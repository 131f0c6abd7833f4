package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"approvalsbot/adapters/backend/standin"
	"approvalsbot/approval"
	"approvalsbot/config"
)

// questionAbout is `bot question -h`'s account of the command.
const questionAbout = `Asks TEXT as an agent's question through a running bot, as a job backend with the questions feature would: it tells the stand-in backend (bot backend, at backend.url) the question, so the stand-in checks and prints the answer it gets, then signs a question.asked event under a fresh question id with the events secret and sends it to the bot. Each --choice is one answer to pick (in the order given, at most 25, each one line of at most 75 characters); --free-text lets a person answer in their own words (Answer…), and a question without choices must allow it. --restricted shows the question only to members with the content permission; --private-chat says the job runs in someone's private chat. The bot takes questions only with questions in backend.features.`

// stringsFlag is a repeatable string flag.
type stringsFlag []string

func (s *stringsFlag) String() string { return strings.Join(*s, ", ") }

func (s *stringsFlag) Set(v string) error {
	*s = append(*s, v)
	return nil
}

// cmdQuestion asks a question through the stand-in backend and the bot.
func cmdQuestion(ctx context.Context, args []string, stdout io.Writer, getenv env) error {
	fs := newFlags("question", stdout, []string{"TEXT"}, questionAbout,
		`bot question --config examples/bot.yaml --choice "acct-1 (Ana Ruiz, personal)" --choice "acct-2 (Ruiz Trading Ltd)" --free-text "Order 7781 was paid from two accounts. Which one should I refund the 250 EUR to?"`)
	path := configFlag(fs.FlagSet)
	url := fs.String("url", "", "the bot's events URL (default: from the configuration's listen_private, else listen)")
	var choices stringsFlag
	fs.Var(&choices, "choice", "an answer to pick; repeat for each, in order")
	freeText := fs.Bool("free-text", false, "a person may answer in their own words (Answer…)")
	restricted := fs.Bool("restricted", false, "the question's text is shown only to members with the content permission")
	privateChat := fs.Bool("private-chat", false, "the job runs in someone's private chat")
	tenantID := fs.String("tenant", "", "the tenant that asks (default: the configuration's only tenant, else the first by name)")
	job := fs.String("job", "j-cli", "the job that asks")
	agent := fs.String("agent", "assistant", "the agent that asks")
	startedBy := fs.String("started-by", "", "who started the job (user:ada)")
	deadline := fs.Duration("deadline", 0, "when nobody answered by then, the bot closes the question (default: the tenant's deadline)")
	ladder := fs.String("ladder", "", "the tenant's ladder that escalates it (default: the tenant's default)")
	tell := fs.Bool("standin", true, "tell the stand-in backend at backend.url the question first")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	cfg, err := loadForEvent(*path, getenv)
	if err != nil {
		return err
	}
	tenant, err := questionTenant(cfg, *tenantID)
	if err != nil {
		return err
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	d := approval.QuestionAskedData{ID: standin.FreshID("q-cli", now), Revision: 1, Tenant: tenant,
		Job:      approval.Job{ID: *job, Agent: *agent, StartedBy: *startedBy, PrivateChat: *privateChat},
		Question: &approval.Question{Text: pos[0], Choices: choices, FreeText: *freeText},
		Content:  approval.Content{Restricted: *restricted}, RequestedAt: now, Ladder: *ladder}
	if *deadline > 0 {
		dl := now.Add(*deadline)
		d.Deadline = &dl
	}
	body, err := standin.QuestionAskedEvent(tenant, d, now)
	if err != nil {
		return usageError("%v", err)
	}
	if !cfg.Backend.Supports(config.FeatureQuestions) {
		fmt.Fprintf(stdout, "note: backend.features in %s does not list %s: the bot will refuse the question\n", *path, config.FeatureQuestions)
	}
	if *tell {
		if err := tellStandin(ctx, cfg.Backend.URL, d); err != nil {
			fmt.Fprintf(stdout, "note: %v: its answers will be refused as not_found\n", err)
		}
	}
	fmt.Fprintf(stdout, "asking question %s of tenant %s (%s)\n", d.ID, tenant, questionShape(d))
	target, where := eventTarget(cfg, *url, *path)
	return signAndSend(ctx, cfg, target, where, body, now, stdout)
}

// questionTenant is the tenant a question is asked for: the one named,
// else the only one, else the first by name.
func questionTenant(cfg *config.Config, named string) (string, error) {
	if named != "" {
		if _, ok := cfg.Tenants[named]; !ok {
			return "", usageError("--tenant %s: no such tenant in the configuration", named)
		}
		return named, nil
	}
	ids := make([]string, 0, len(cfg.Tenants))
	for id := range cfg.Tenants {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if len(ids) == 0 {
		return "", usageError("the configuration has no tenant")
	}
	return ids[0], nil
}

// questionShape says what a question takes, never its text.
func questionShape(d approval.QuestionAskedData) string {
	var parts []string
	if n := len(d.Question.Choices); n > 0 {
		parts = append(parts, fmt.Sprintf("%d choices", n))
	}
	if d.Question.FreeText {
		parts = append(parts, "free text")
	}
	if d.Content.Restricted {
		parts = append(parts, "restricted")
	}
	if d.Job.PrivateChat {
		parts = append(parts, "in a private chat")
	}
	return strings.Join(parts, ", ")
}

// tellStandin gives the stand-in at backendURL the question it will be
// answered about (standin.QuestionsPath).
func tellStandin(ctx context.Context, backendURL string, d approval.QuestionAskedData) error {
	body, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("encode the question: %w", err)
	}
	target := strings.TrimRight(backendURL, "/") + standin.QuestionsPath
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("tell the stand-in backend: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 15 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("the stand-in backend at %s did not take the question (is bot backend running?): %w", target, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the stand-in backend at %s answered %s %s", target, resp.Status, strings.TrimSpace(string(answer)))
	}
	return nil
}
