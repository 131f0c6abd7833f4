package approval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Reveal returns the full arguments for the one person who asked to see
// them: every member and every byte kept (no cut), but secrets still
// redacted as in Project, indented for reading. It reports whether
// anything was redacted. raw must be one JSON value.
func Reveal(raw []byte) ([]byte, bool, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out bytes.Buffer
	r := revealer{dec: dec, out: &out}
	if err := r.value(false); err != nil {
		return nil, false, fmt.Errorf("reveal arguments: %w", err)
	}
	if _, err := dec.Token(); err == nil {
		return nil, false, fmt.Errorf("reveal arguments: more than one JSON value")
	}
	return indentCapped(out.Bytes()), r.redacted, nil
}

// revealMaxIndent bounds the levels Reveal indents. json.Indent's output
// grows with the square of the nesting, gigabytes for arguments nested
// thousands deep; capped, it stays linear in the input.
const revealMaxIndent = 16

// indentCapped indents compact JSON as json.Indent does with two spaces,
// but no deeper than revealMaxIndent levels.
func indentCapped(src []byte) []byte {
	dst := make([]byte, 0, len(src)*2)
	depth := 0
	newline := func() {
		dst = append(dst, '\n')
		for range min(depth, revealMaxIndent) {
			dst = append(dst, ' ', ' ')
		}
	}
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '"':
			j := i + 1
			for src[j] != '"' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			dst = append(dst, src[i:j+1]...)
			i = j
		case '{', '[':
			dst = append(dst, c)
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				dst = append(dst, src[i+1])
				i++
				continue
			}
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, ':', ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

type revealer struct {
	dec      *json.Decoder
	out      *bytes.Buffer
	redacted bool
}

// value copies one value; secret replaces it whole with the marker.
func (r *revealer) value(secret bool) error {
	tok, err := r.dec.Token()
	if err != nil {
		return err
	}
	if secret {
		r.redacted = true
		r.out.WriteString(strconv.Quote(redactedMarker))
		return r.skip(tok)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			r.out.WriteByte('{')
			for i := 0; r.dec.More(); i++ {
				kt, err := r.dec.Token()
				if err != nil {
					return err
				}
				k, _ := kt.(string)
				if i > 0 {
					r.out.WriteByte(',')
				}
				// A key is text too (as in Project): a key that is
				// itself a secret ("GITHUB_TOKEN=ghp_…") shows redacted.
				shownKey, changed := redactText(k, false)
				if changed {
					r.redacted = true
				}
				r.writeString(shownKey)
				r.out.WriteByte(':')
				if err := r.value(SensitiveKey(k)); err != nil {
					return err
				}
			}
			r.out.WriteByte('}')
		case '[':
			r.out.WriteByte('[')
			for i := 0; r.dec.More(); i++ {
				if i > 0 {
					r.out.WriteByte(',')
				}
				if err := r.value(false); err != nil {
					return err
				}
			}
			r.out.WriteByte(']')
		}
		_, err := r.dec.Token() // the closing delimiter
		return err
	case string:
		red, changed := redactText(t, true) // the same rule as Project's for values
		if changed {
			r.redacted = true
		}
		r.writeString(red)
	case json.Number:
		r.out.WriteString(t.String())
	case bool:
		r.out.WriteString(strconv.FormatBool(t))
	case nil:
		r.out.WriteString("null")
	}
	return nil
}

// skip consumes the rest of a value whose first token was tok.
func (r *revealer) skip(tok json.Token) error {
	d, ok := tok.(json.Delim)
	if !ok || (d != '{' && d != '[') {
		return nil
	}
	for depth := 1; depth > 0; {
		t, err := r.dec.Token()
		if err != nil {
			return err
		}
		if d, ok := t.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
	}
	return nil
}

func (r *revealer) writeString(s string) {
	b, _ := json.Marshal(s) // a string always encodes
	r.out.Write(b)
}
