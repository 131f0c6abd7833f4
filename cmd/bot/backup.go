package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"approvalsbot/app"
	"approvalsbot/config"
	"approvalsbot/store/sqlite"
)

// cmdBackup copies the SQLite store (VACUUM INTO) while the bot runs,
// never over an existing file; it reads no secret but the store's.
func cmdBackup(ctx context.Context, args []string, stdout io.Writer, getenv env) error {
	fs := newFlags("backup", stdout, []string{"OUT.db"},
		"Copies the SQLite store to OUT.db, a new file, consistently while the bot runs. It reads only the store section.",
		"bot backup --config bot.yaml bot-backup.db")
	path := configFlag(fs.FlagSet)
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	out := pos[0]
	sc, err := config.LoadStore(*path, getenv)
	if err != nil {
		return err
	}
	if sc.Driver == config.DriverPostgres {
		return errors.New("the store is PostgreSQL: back it up with the database's own tools, e.g. " +
			"pg_dump --format=custom --file=OUT \"$BOT_DATABASE_URL\" (restore with pg_restore); bot backup copies a SQLite store")
	}
	db := app.SQLiteFile(sc.DSN.Reveal())
	// Opening would create an empty store: there is nothing to copy.
	if _, err := os.Stat(db); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no SQLite store at %s: nothing to back up (bot serve or bot migrate creates it)", db)
	} else if err != nil {
		return err
	}
	if _, err := os.Lstat(out); err == nil {
		return fmt.Errorf("%s exists already: a backup never overwrites a file; name a new one", out)
	}
	// Not Exclusive: the bot serving from the file holds its lock, and
	// the copy is one read transaction beside it.
	st, err := sqlite.Open(ctx, sqlite.Options{Path: db})
	if err != nil {
		return err
	}
	defer st.Close()
	res, err := st.Backup(ctx, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backed up %s to %s (%d bytes, -rw-------): the store as of one commit\n", db, res.Path, res.Bytes)
	fmt.Fprintf(stdout, "to restore: stop the bot, remove %s-wal and %s-shm if they are there, copy %s to %s (mode 600), start the bot\n",
		db, db, res.Path, db)
	return nil
}
