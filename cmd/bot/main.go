// Command bot is the approvals bot: it takes the job backend's signed
// events, posts each waiting call as a card where people work, and sends
// their decisions back. docs/operations.md lists the subcommands.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

const usage = `usage: bot <command> [flags]

commands:
  serve    run the bot: events in, cards out, decisions back
  check    validate the configuration and print each tenant's ladders
  event    sign an event file with the events secret and send it to a running bot
  turn     send three request files to a running bot as the calls of one turn
  question ask a running bot an agent's question, answered through the stand-in backend
  preview  print a card for an event file as a surface would show it
  backend  run a stand-in job backend at backend.url that prints each decision it receives
  migrate  apply the store's migrations and exit
  backup   copy the SQLite store, consistently, while the bot runs
  doctor   check the store, the job backend, the mail server and the chat surfaces the configuration names
  passkey  print a member's passkey enrolment link; list or remove members' passkeys
  report   write one row per approval decided in a window, as CSV or JSON lines
  version  print the bot's version, the commit it was built from and the Go that built it

Run "bot <command> -h" for its flags, its files and an example.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal starts a bounded stop; once it has, a second one
	// ends the process at once, as it would have without the handler.
	context.AfterFunc(ctx, stop)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.LookupEnv)
	stop()
	os.Exit(code)
}

// env looks up an environment variable (os.LookupEnv in production).
type env func(string) (string, bool)

// run is main without the process: tests call it with their own streams.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv env) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = cmdServe(ctx, args[1:], stdout, stderr, getenv)
	case "check":
		err = cmdCheck(args[1:], stdout, getenv)
	case "event":
		err = cmdEvent(ctx, args[1:], stdout, getenv)
	case "turn":
		err = cmdTurn(ctx, args[1:], stdout, getenv)
	case "question":
		err = cmdQuestion(ctx, args[1:], stdout, getenv)
	case "preview":
		err = cmdPreview(args[1:], stdout)
	case "backend":
		err = cmdBackend(ctx, args[1:], stdout, getenv)
	case "migrate":
		err = cmdMigrate(ctx, args[1:], stdout, getenv)
	case "backup":
		err = cmdBackup(ctx, args[1:], stdout, getenv)
	case "doctor":
		err = cmdDoctor(ctx, args[1:], stdout, getenv)
	case "passkey":
		err = cmdPasskey(ctx, args[1:], stdout, getenv)
	case "report":
		err = cmdReport(ctx, args[1:], stdout, getenv, time.Now())
	case "version", "-version", "--version":
		err = cmdVersion(args[1:], stdout)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "bot: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	prefix := "bot " + args[0] + ": "
	var ue usageErr
	switch {
	case err == nil, errors.Is(err, errHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, prefix+strings.TrimPrefix(ue.msg, args[0]+": "))
		if ue.usage != "" {
			fmt.Fprintln(stderr, ue.usage)
		}
		return 2
	}
	// Every line of a report of several (bot check's problems) is
	// prefixed alike, so each can be told apart and grepped for; a line
	// that names the command itself is not prefixed twice.
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintln(stderr, prefix+strings.TrimPrefix(line, args[0]+": "))
	}
	return 1
}

// newLogger is `bot serve`'s JSON logger; it writes a duration as 1.5s,
// not as slog's nanoseconds.
func newLogger(w io.Writer, level slog.Leveler) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Value.Kind() == slog.KindDuration {
				return slog.String(a.Key, a.Value.Duration().String())
			}
			return a
		}}))
}
