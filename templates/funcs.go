package templates

import (
	htmltemplate "html/template"
	"strings"
	texttemplate "text/template"
)

// The functions each surface's templates may call. Escaping is by
// surface: on Slack, whose mrkdwn cannot escape markup, a card's text is
// written as elements (slackElemFuncs) and esc serves only a message's
// notification text; plain text and html/template need none of their own.

var slackFuncs = func() texttemplate.FuncMap {
	m := texttemplate.FuncMap{
		"esc":  mrkdwn,
		"join": strings.Join,
	}
	for k, f := range slackElemFuncs {
		m[k] = f
	}
	return m
}()

var plainFuncs = texttemplate.FuncMap{
	"indent": func(prefix, s string) string { return quoteLines(prefix, s) },
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
	TonePending:  "#b26a00",
	ToneApproved: "#1e7b55",
	ToneDenied:   "#b4173f",
	ToneClosed:   "#5f5f5f",
}
