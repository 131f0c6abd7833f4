// Package pkgdoc holds one test: every package of the module says what
// it is for in a doc comment ("Package x …", or "Command x …" for a
// main package), the first thing a reader of its code or its go doc
// page meets.
package pkgdoc
