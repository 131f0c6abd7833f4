package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"approvalsbot/app"
	"approvalsbot/config"
	"approvalsbot/store"
	"approvalsbot/store/postgres"
	"approvalsbot/store/sqlite"
)

const passkeyUsage = `usage: bot passkey enrol|list|remove [flags]

  enrol   print a member's passkey enrolment link (valid 15 minutes)
  list    list a tenant's passkeys, or one member's
  remove  remove one of a member's passkeys

Run "bot passkey <command> -h" for its flags and an example.`

// cmdPasskey runs bot passkey's subcommands: members' passkeys, which
// tenants.ID.passkeys asks for on the decision page (docs/configuration.md#passkeys).
func cmdPasskey(ctx context.Context, args []string, stdout io.Writer, getenv env) error {
	if len(args) == 0 {
		return usageErr{msg: "passkey: wants enrol, list or remove", usage: passkeyUsage}
	}
	switch args[0] {
	case "enrol", "enroll":
		return cmdPasskeyEnrol(args[1:], stdout, getenv)
	case "list":
		return cmdPasskeyList(ctx, args[1:], stdout, getenv)
	case "remove":
		return cmdPasskeyRemove(ctx, args[1:], stdout, getenv)
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stdout, passkeyUsage)
		return errHelp
	}
	return usageErr{msg: fmt.Sprintf("passkey: unknown command %q", args[0]), usage: passkeyUsage}
}

// passkeyFlags are the flags every passkey subcommand takes.
type passkeyFlags struct {
	*flags
	config, tenant, member *string
}

func newPasskeyFlags(name string, stdout io.Writer, about, example string) passkeyFlags {
	fs := newFlags("passkey "+name, stdout, nil, about, example)
	return passkeyFlags{flags: fs, config: configFlag(fs.FlagSet),
		tenant: fs.String("tenant", "", "the tenant's id"),
		member: fs.String("member", "", "the member's user id, as tenants.ID.members names it (user:kevin)")}
}

// need reports a flag that must be given.
func (f passkeyFlags) need(names ...string) error {
	for _, n := range names {
		if fl := f.Lookup(n); fl != nil && strings.TrimSpace(fl.Value.String()) == "" {
			return f.usageErr("needs --%s", n)
		}
	}
	return nil
}

func cmdPasskeyEnrol(args []string, stdout io.Writer, getenv env) error {
	f := newPasskeyFlags("enrol", stdout,
		"Prints a member's passkey enrolment link: the page lists their passkeys, adds one and removes any. "+
			"It is valid 15 minutes and signed with the link secrets; whoever opens it enrols passkeys as the member, "+
			"so give it to them privately. It needs public_url (a host name) and link_secrets.",
		"bot passkey enrol --config bot.yaml --tenant acme --member user:kevin")
	if _, err := f.parse(args); err != nil {
		return err
	}
	if err := f.need("tenant", "member"); err != nil {
		return err
	}
	cfg, err := config.Load(*f.config, getenv)
	if err != nil {
		return err
	}
	t, ok := cfg.Tenants[*f.tenant]
	if !ok {
		return fmt.Errorf("no tenant %q in %s", *f.tenant, *f.config)
	}
	if _, ok := t.MemberByUser(*f.member); !ok {
		return fmt.Errorf("%s is not a member of tenant %s", *f.member, *f.tenant)
	}
	if cfg.DecisionPage == nil {
		return errors.New("passkeys are enrolled on the bot's pages: set public_url and link_secrets (docs/configuration.md#passkeys)")
	}
	links, err := app.PasskeyLinks(cfg)
	if err != nil {
		return err
	}
	if links == nil {
		return fmt.Errorf("public_url %s: its host is no host name, and a passkey's relying party must be one (localhost on this machine)",
			cfg.DecisionPage.PublicURL)
	}
	link, exp := links.EnrolLink(*f.tenant, *f.member)
	fmt.Fprintf(stdout, "passkey enrolment link for %s in tenant %s, valid until %s; give it to them privately:\n%s\n",
		*f.member, *f.tenant, exp.UTC().Format("2006-01-02 15:04 UTC"), link)
	return nil
}

func cmdPasskeyList(ctx context.Context, args []string, stdout io.Writer, getenv env) error {
	f := newPasskeyFlags("list", stdout,
		"Lists a tenant's passkeys, or one member's with --member: who, the name, when added and last used, and the id "+
			"bot passkey remove takes. It reads only the store section, and runs beside a running bot.",
		"bot passkey list --config bot.yaml --tenant acme")
	if _, err := f.parse(args); err != nil {
		return err
	}
	if err := f.need("tenant"); err != nil {
		return err
	}
	st, err := passkeyStore(ctx, *f.config, getenv)
	if err != nil || st == nil {
		if err == nil {
			fmt.Fprintf(stdout, "no passkeys in tenant %s: the store does not exist yet\n", *f.tenant)
		}
		return err
	}
	defer st.Close()
	pks, err := st.PasskeyList(ctx, store.PasskeyListParams{Tenant: *f.tenant, Member: *f.member})
	if err != nil {
		return err
	}
	if len(pks) == 0 {
		who := "tenant " + *f.tenant
		if *f.member != "" {
			who = *f.member + " in " + who
		}
		fmt.Fprintf(stdout, "no passkeys for %s\n", who)
		return nil
	}
	for _, p := range pks {
		used := "never used"
		if !p.LastUsedAt.IsZero() {
			used = "last used " + stamp(p.LastUsedAt)
		}
		fmt.Fprintf(stdout, "%s\t%q\tadded %s\t%s\tid %s\n", p.Member, p.Name, stamp(p.CreatedAt), used, p.ID)
	}
	return nil
}

func cmdPasskeyRemove(ctx context.Context, args []string, stdout io.Writer, getenv env) error {
	f := newPasskeyFlags("remove", stdout,
		"Removes one of a member's passkeys by its id (bot passkey list shows it): it no longer approves anything. "+
			"It reads only the store section, and runs beside a running bot.",
		"bot passkey remove --config bot.yaml --tenant acme --member user:kevin --id AbC…")
	id := f.String("id", "", "the passkey's id, as bot passkey list shows it")
	if _, err := f.parse(args); err != nil {
		return err
	}
	if err := f.need("tenant", "member", "id"); err != nil {
		return err
	}
	st, err := passkeyStore(ctx, *f.config, getenv)
	if err != nil {
		return err
	}
	if st == nil {
		return errors.New("no passkey to remove: the store does not exist yet")
	}
	defer st.Close()
	err = st.PasskeyRemove(ctx, store.PasskeyRemoveParams{Tenant: *f.tenant, Member: *f.member, ID: *id})
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%s in tenant %s has no passkey %s (bot passkey list shows theirs)", *f.member, *f.tenant, *id)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "removed passkey %s of %s in tenant %s\n", *id, *f.member, *f.tenant)
	return nil
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// passkeyStore opens the store beside a running bot, as bot backup
// does: SQLite without its lock (nil, no error, when the file does not
// exist yet), PostgreSQL with a small pool. Neither is migrated here: the
// bot (or bot migrate) does that.
func passkeyStore(ctx context.Context, path string, getenv env) (store.Store, error) {
	sc, err := config.LoadStore(path, getenv)
	if err != nil {
		return nil, err
	}
	if sc.Driver == config.DriverPostgres {
		return postgres.Open(ctx, postgres.Options{DSN: sc.DSN.Reveal(), MaxConns: 2, PersonConns: 1})
	}
	db := app.SQLiteFile(sc.DSN.Reveal())
	if _, err := os.Stat(db); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return sqlite.Open(ctx, sqlite.Options{Path: db})
}
