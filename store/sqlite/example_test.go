package sqlite_test

import (
	"database/sql"
	"fmt"

	_ "modernc.org/sqlite" // registers the "sqlite" driver, as package sqlite does

	"approvalsbot/store/sqlite"
)

// A benchmark or tool in another package opens the store's file raw with
// the same settings as the store.
func ExampleDSN() {
	db, err := sql.Open("sqlite", sqlite.DSN("bot.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	fmt.Println(sqlite.DSN("data/bot?1.db"))
	// Output: file:data/bot%3f1.db?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=foreign_keys(1)&_pragma=temp_store(MEMORY)&_txlock=immediate
}
