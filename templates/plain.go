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
// one newline at the end, so templates can skip absent parts freely. Other
// lines are kept as they are (a patch's trailing spaces included).
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
