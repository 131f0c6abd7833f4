// Package pkgdoc holds one test: every package of the module says what
// it is for in a doc comment ("Package x …", or "Command x …" for a main
// package).
package pkgdoc
