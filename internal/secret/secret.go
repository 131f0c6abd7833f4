// Package secret prints credentials as "<secret>" whatever asks: a type
// that holds only secrets gives its Format, LogValue and MarshalJSON to
// these functions, so no fmt verb, slog handler or JSON encoder reaches
// the values.
package secret

import (
	"fmt"
	"io"
	"log/slog"
)

// Shown is what a secret prints as.
const Shown = "<secret>"

// Format writes Shown for every verb, and name{<secret>} for %#v.
func Format(f fmt.State, verb rune, name string) {
	if verb == 'v' && f.Flag('#') {
		_, _ = io.WriteString(f, name+"{"+Shown+"}")
		return
	}
	_, _ = io.WriteString(f, Shown)
}

// LogValue is Shown, for slog.
func LogValue() slog.Value { return slog.StringValue(Shown) }

// JSON is Shown as a JSON string.
func JSON() ([]byte, error) { return []byte(`"` + Shown + `"`), nil }
