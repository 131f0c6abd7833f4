package discord

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Discord's markdown markers: inline ones count anywhere, line ones where
// a line starts (after white space at most).
const (
	discordInline = "\\*_~`|<[]"
	discordLine   = ">#-+"
)

// Link marks for the fuzz test: bytes no input it keeps holds, so what
// escapeWith made a link is told apart from text.
const (
	linkOpen  = "\x00"
	linkClose = "\x01"
)

func markLink(u string) string { return linkOpen + u + linkClose }

// readDiscord reads escapeWith's output (links marked) back as Discord
// would see the text, and reports the first place where Discord would
// read markup, a link or a mention the input did not mean, or where the
// escaping added what it need not; otherwise it returns the text read.
func readDiscord(out string) (string, string) {
	var plain strings.Builder
	for i := 0; i < len(out); {
		c, lineStart := out[i], atLineStart(plain.String())
		switch {
		case c == linkOpen[0]:
			j := strings.Index(out[i:], linkClose)
			if j < 0 {
				return "", "a link left open"
			}
			u := out[i+1 : i+j]
			if bareURL.FindString(u) != u || !strings.Contains(u, "://") {
				return "", "a link that is not one URL: " + u
			}
			plain.WriteString(u)
			i += j + 1
			continue
		case c == '\\':
			if i+1 == len(out) || strings.IndexByte(discordInline, out[i+1]) < 0 &&
				(strings.IndexByte(discordLine, out[i+1]) < 0 || !lineStart) {
				return "", "a backslash before what needs no escape"
			}
			plain.WriteByte(out[i+1])
			i += 2
			continue
		case strings.HasPrefix(out[i:], "@\u200b"):
			if rest := out[i+len("@\u200b"):]; !strings.HasPrefix(rest, "everyone") && !strings.HasPrefix(rest, "here") {
				return "", "a zero width space that breaks no mention"
			}
			plain.WriteByte('@')
			i += len("@\u200b")
			continue
		case strings.IndexByte(discordInline, c) >= 0:
			return "", "an inline marker left live: " + string(c)
		case lineStart && strings.IndexByte(discordLine, c) >= 0:
			return "", "a line marker left live at a line's start: " + string(c)
		case c == '@' && (strings.HasPrefix(out[i+1:], "everyone") || strings.HasPrefix(out[i+1:], "here")):
			return "", "a mention left live"
		}
		plain.WriteByte(c)
		i++
	}
	return plain.String(), ""
}

// atLineStart reports whether what follows text starts a line, as
// Discord reads a line marker: nothing but spaces and tabs since the last
// newline, or since the start.
func atLineStart(text string) bool {
	return strings.Trim(text[strings.LastIndexByte(text, '\n')+1:], " \t") == ""
}

// FuzzDiscordEscape: whatever the text, Discord reads the escaped text as
// exactly that text, with no markup, mention or link beyond the URLs it
// held, and both forms (cards' <URL>, messages' bare URL) are that one
// escaping.
func FuzzDiscordEscape(f *testing.F) {
	for _, s := range []string{
		"", "acme_github.merge", "**bold** `code` ~~x~~ ||spoiler|| <@123> [x](y)",
		"> quote\n# head\n- item\n  + nested\n-# subtext", "ping @everyone and @here, not @her",
		"approve it in the console (https://console.example/approvals/a_refund1).",
		"see https://x.example/a_b and a_b", "https://", "x https://a.example/b) y", "`https://a.example`",
		"<https://a.example>", "a\nhttps://a.example/#x-y\n- z", "@here https://a.example/@everyone",
		"https://a.example - b\nhttps://c.example\n# d", "back\\slash \\* and é ✓ 😀",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if strings.ContainsAny(in, linkOpen+linkClose) || strings.Contains(in, "@\u200b") {
			t.Skip("holds the test's link marks, or a mention broken already")
		}
		out := escapeWith(in, markLink, true)
		got, problem := readDiscord(out)
		if problem != "" {
			t.Fatalf("escapeWith(%q) = %q: %s", in, out, problem)
		}
		if got != in {
			t.Fatalf("escapeWith(%q) = %q, which reads as %q", in, out, got)
		}
		if utf8.ValidString(in) && !utf8.ValidString(out) {
			t.Fatalf("escapeWith(%q) = %q: not UTF-8", in, out)
		}
		if card := strings.NewReplacer(linkOpen, "<", linkClose, ">").Replace(out); escape(in) != card {
			t.Fatalf("escape(%q) = %q, want %q", in, escape(in), card)
		}
		if msg := strings.NewReplacer(linkOpen, "", linkClose, "").Replace(out); escapeBare(in) != msg {
			t.Fatalf("escapeBare(%q) = %q, want %q", in, escapeBare(in), msg)
		}
	})
}

// The two forms side by side: a card keeps a URL inside <…> (no
// preview), a message with embeds suppressed keeps it bare; the text
// around is escaped alike.
func TestDiscordEscapeForms(t *testing.T) {
	cases := []struct{ name, in, card, message string }{
		{"a URL in a sentence", "read https://a.example/x_y, then _retry_",
			`read <https://a.example/x_y>, then \_retry\_`, `read https://a.example/x_y, then \_retry\_`},
		{"a URL in parentheses", "(https://console.example/approvals/a_refund1).",
			"(<https://console.example/approvals/a_refund1>).", "(https://console.example/approvals/a_refund1)."},
		{"a line marker after a URL's line", "https://a.example\n- item",
			"<https://a.example>\n\\- item", "https://a.example\n\\- item"},
		{"a mention outside a URL", "@here https://a.example/@everyone",
			"@\u200bhere <https://a.example/@everyone>", "@\u200bhere https://a.example/@everyone"},
		{"no URL", "# *all* of it", `\# \*all\* of it`, `\# \*all\* of it`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := escape(c.in); got != c.card {
				t.Errorf("escape(%q) = %q, want %q", c.in, got, c.card)
			}
			if got := escapeBare(c.in); got != c.message {
				t.Errorf("escapeBare(%q) = %q, want %q", c.in, got, c.message)
			}
		})
	}
}
