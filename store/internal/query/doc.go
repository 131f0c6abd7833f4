// Package query is the SQL text the store drivers share and the encoding
// of values in the shared schema (store/migrations). Every statement is
// written once, with $N placeholders, so SQLite and PostgreSQL run the
// same text; where PostgreSQL must lock rows (FOR UPDATE, SKIP LOCKED) a
// function takes the locking clause and SQLite, whose single writer makes
// it unnecessary, passes "". Likewise a list of ids bound as one
// parameter, which the two spell differently, is a List the driver
// passes in.
//
// A predicate on state is always a literal ('pending'), never a
// parameter: the partial indexes are used only when the query repeats
// their WHERE clause.
package query
