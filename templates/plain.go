package templates

import "strings"

// Text renders c as plain text for logs and bot preview.
func (r *Renderer) Text(c Card) string {
	s, err := execText(r.text, "card", &c)
	if err != nil {
		return brokenPart + "\n"
	}
	return squeezeBlankLines(s)
}

// squeezeBlankLines leaves at most one blank line between paragraphs and
// one final newline, so templates may skip parts; other lines stay as is.
func squeezeBlankLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	var b strings.Builder
	b.Grow(len(s))
	blank := false
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			blank = true
			continue
		}
		if blank && b.Len() > 0 {
			b.WriteByte('\n')
		}
		blank = false
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}
