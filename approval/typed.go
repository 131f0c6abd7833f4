package approval

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf16"
)

// TypedMatches reports whether typed is a person's typed confirmation of
// the argument value (JSON), as the platform checks it (its Decision
// controls, the same on the edge and in the job): a text is typed as it
// is; a number, a list or an object as compact JSON with its keys sorted
// (its RFC 8785 form: 250, ["a","b"], {"currency":"EUR","sum":250}),
// with letters outside ASCII as themselves ({"name":"Åsa"}) or as JSON's
// \u escapes ({"name":"\u00c5sa"}, either case of hex digit). Anything
// else, a space more or a key out of order, does not match. Linear in
// the value's size.
func TypedMatches(value json.RawMessage, typed string) bool {
	if v := strings.TrimSpace(string(value)); strings.HasPrefix(v, `"`) {
		var text string
		return json.Unmarshal(value, &text) == nil && typed == text
	}
	canonical, err := Canonicalize(value)
	if err != nil {
		return false
	}
	c := string(canonical)
	return typed == c || typed == escapeNonASCII(c, "\\u%04x") || typed == escapeNonASCII(c, "\\u%04X")
}

// escapeNonASCII writes every rune of s outside ASCII as JSON's \u
// escape in form (a UTF-16 surrogate pair beyond the BMP). In canonical
// JSON such a rune only ever stands inside a string, where the escape
// means the same.
func escapeNonASCII(s, form string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r < 0x80:
			b.WriteRune(r)
		case r > 0xFFFF:
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(&b, form+form, hi, lo)
		default:
			fmt.Fprintf(&b, form, r)
		}
	}
	return b.String()
}

// ConfirmValue is the value of the argument a typed confirmation names,
// in the call's full arguments (JSON); false when there is none.
func ConfirmValue(arguments json.RawMessage, argument string) (json.RawMessage, bool) {
	var args map[string]json.RawMessage
	if err := json.Unmarshal(arguments, &args); err != nil {
		return nil, false
	}
	v, ok := args[argument]
	return v, ok
}
