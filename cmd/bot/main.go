// Command bot is the approvals bot: it takes the job backend's signed
// events, posts each waiting call as a card where people work, and sends
// their decisions back. See the README for the subcommands.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `usage: bot <command> [flags]

commands:
  serve    run the bot: events in, cards out, decisions back
  check    validate the configuration and print each tenant's ladders
  event    sign an event file with the events secret and send it to a running bot
  preview  print a card for an event file as a surface would show it
  migrate  apply the store's migrations and exit
  doctor   check the store, the mail server and the chat surfaces the configuration names

Run "bot <command> -h" for a command's flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.LookupEnv))
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
	case "preview":
		err = cmdPreview(args[1:], stdout)
	case "migrate":
		err = cmdMigrate(ctx, args[1:], stdout, getenv)
	case "doctor":
		err = cmdDoctor(ctx, args[1:], stdout, getenv)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "bot: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		if err == errUsage {
			return 2
		}
		fmt.Fprintf(stderr, "bot %s: %v\n", args[0], err)
		return 1
	}
	return 0
}
