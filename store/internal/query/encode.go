package query

import "time"

// Millis encodes a time for a NOT NULL time column: Unix milliseconds, and
// 0 for the zero time (so the Unix epoch itself cannot be stored, which no
// caller needs).
func Millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// Time decodes Millis: UTC at millisecond precision, zero for 0.
func Time(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// NullMillis encodes a time for a nullable time column: NULL for the zero
// time. Both database/sql and pgx bind a nil *int64 as NULL.
func NullMillis(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	ms := t.UnixMilli()
	return &ms
}

// NullTime decodes NullMillis.
func NullTime(ms *int64) time.Time {
	if ms == nil {
		return time.Time{}
	}
	return Time(*ms)
}

// Text encodes bytes for a NOT NULL TEXT column. Bytes bound as such
// would be a BLOB in SQLite and BYTEA in PostgreSQL; as a string both
// store and compare the same text.
func Text(b []byte) string { return string(b) }

// NullText encodes bytes for a nullable TEXT column: NULL for nil.
func NullText(b []byte) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}

// Bool encodes a boolean as INTEGER 0/1.
func Bool(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
