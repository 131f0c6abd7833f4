package query

import "time"

// Millis encodes a time for a NOT NULL column: Unix milliseconds, 0 for
// the zero time (so the epoch itself cannot be stored).
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

// NullMillis encodes a time for a nullable column: NULL for the zero time.
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

// Text encodes bytes for a TEXT column: bound as bytes they would be a
// BLOB in SQLite and BYTEA in PostgreSQL.
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
