package discord

import "approvalsbot/templates"

// markdown escapes a sentence for the Discord messages the adapter sends
// (answers, notices, questions), all with embeds suppressed: the cards'
// escaper (templates.DiscordText), which keeps links bare so Discord
// still links them. Text from the backend or a person can neither
// format, link, nor look like a mention, and an invisible character in
// it shows as [U+XXXX] (templates.Visible), as on cards; the escaper's
// own zero width spaces come after.
func markdown(s string) string { return templates.DiscordText(templates.Visible(s)) }
