// Package query is the SQL the store drivers share, written once with $N
// placeholders, and the encoding of values in the shared schema. Where
// PostgreSQL must lock rows a function takes the locking clause (SQLite
// passes ""); a list of ids is a List in the driver's dialect
// (docs/design.md#one-sql-for-two-databases).
//
// A predicate on state is always a literal ('pending'), never a
// parameter: the partial indexes are used only when a query repeats their
// WHERE clause.
package query
