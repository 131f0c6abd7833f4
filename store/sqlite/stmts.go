package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// stmts prepares each query text once per store: the driver keeps no
// statement cache. A query not prepared yet runs unprepared while it is
// prepared in the background, since preparing takes a pooled connection
// (docs/design.md#one-writer-on-sqlite).
type stmts struct {
	db      *sql.DB
	mu      sync.Mutex
	m       map[string]*sql.Stmt
	pending map[string]bool
	closed  bool
	wg      sync.WaitGroup
}

// get returns q's prepared statement, or nil and starts preparing it.
func (c *stmts) get(q string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m[q]; ok {
		return st
	}
	if c.closed || c.pending[q] {
		return nil
	}
	if c.pending == nil {
		c.pending = map[string]bool{}
	}
	c.pending[q] = true
	c.wg.Go(func() { c.prepare(q) })
	return nil
}

func (c *stmts) prepare(q string) {
	st, err := c.db.PrepareContext(context.Background(), q)
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pending, q)
	if err != nil {
		return // it runs unprepared; a later call tries again
	}
	if c.closed {
		st.Close()
		return
	}
	if c.m == nil {
		c.m = map[string]*sql.Stmt{}
	}
	c.m[q] = st
}

// close closes every statement; call it before closing the database.
func (c *stmts) close() {
	c.mu.Lock()
	c.closed = true
	for _, st := range c.m {
		st.Close()
	}
	c.m = nil
	c.mu.Unlock()
}

// preparedTx is a transaction that runs the store's prepared statements.
type preparedTx struct {
	tx *sql.Tx
	c  *stmts
}

var _ querier = preparedTx{}

func (p preparedTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if st := p.c.get(q); st != nil {
		return p.tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return p.tx.ExecContext(ctx, q, args...)
}

func (p preparedTx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if st := p.c.get(q); st != nil {
		return p.tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return p.tx.QueryContext(ctx, q, args...)
}

func (p preparedTx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	if st := p.c.get(q); st != nil {
		return p.tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return p.tx.QueryRowContext(ctx, q, args...)
}

// preparedDB runs the store's prepared statements outside a transaction.
type preparedDB struct{ c *stmts }

var _ querier = preparedDB{}

func (p preparedDB) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if st := p.c.get(q); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return p.c.db.ExecContext(ctx, q, args...)
}

func (p preparedDB) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if st := p.c.get(q); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return p.c.db.QueryContext(ctx, q, args...)
}

func (p preparedDB) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	if st := p.c.get(q); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return p.c.db.QueryRowContext(ctx, q, args...)
}
