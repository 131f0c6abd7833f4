package templates

import (
	htmltemplate "html/template"
	"strings"
	texttemplate "text/template"
)

// The functions the templates may call. Plain text and html/template
// need no escaper of their own.

var plainFuncs = texttemplate.FuncMap{
	"indent": quoteLines,
	"join":   strings.Join,
}

var htmlFuncs = htmltemplate.FuncMap{
	"toneColor": func(t Tone) htmltemplate.CSS {
		if c, ok := emailColors[t]; ok {
			return htmltemplate.CSS(c)
		}
		return htmltemplate.CSS(emailColors[ToneClosed])
	},
}

// emailColors are CSS colours by tone; fixed values, so trusting them as
// CSS is safe.
var emailColors = map[Tone]string{
	TonePending:  "#945800", // 5.2:1 on the status line's #f4f4f5
	ToneApproved: "#1e7b55",
	ToneDenied:   "#b4173f",
	ToneClosed:   "#5f5f5f",
}

// quoteLines prefixes every line of s with prefix, so a quote box holds
// all of the text and no line of it escapes into the card.
func quoteLines(prefix, s string) string {
	if s == "" {
		return prefix
	}
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}
