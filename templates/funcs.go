package templates

import (
	htmltemplate "html/template"
	"strings"
	texttemplate "text/template"

	"approvalsbot/approval"
)

// The functions each surface's templates may call. Escaping is by
// surface: on Discord, esc for text from the backend or the agent, timed
// for a line of the card that prints times (escaped as esc escapes, each
// time a timestamp), code for text in a code block, url for a link
// target; plain text and html/template need none of their own.

var discordFuncs = texttemplate.FuncMap{
	"esc":    discordMarkdown,
	"timed":  discordTimed,
	"join":   strings.Join,
	"inline": func(s string) string { return inlineCode(s, func(s string) string { return s }, discordMarkdown) },
	"code":   discordCode,
	"url":    linkURL,
	"digest": approval.ValidDigest,
	"quote":  func(s string) string { return quoteLines("> ", s) },
}

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

// inlineCode shows a value exactly, in a code span (no links, no
// formatting), escaped by inside; a value holding a backtick cannot be in
// a span and is shown escaped by outside instead.
func inlineCode(s string, inside, outside func(string) string) string {
	if s == "" || strings.Contains(s, "`") {
		return outside(s)
	}
	return "`" + inside(s) + "`"
}
