package config

import "approvalsbot/notify/smtpconf"

// reads is the settings the problem depends on: the decoder leaves it out
// when one of them was unread (reported already). An unread setting is
// empty, which only the username and password rule could fire on.
func reads(p smtpconf.Problem) []string {
	if p.Key == "username" || p.Key == "password" {
		return []string{"username", "password"}
	}
	return []string{p.Key}
}

// Settings are the section as the mailer takes them.
func (s *SMTP) Settings() smtpconf.Settings {
	return smtpconf.Settings{Addr: s.Addr, TLS: s.TLS, Username: s.Username, Password: s.Password.Reveal(), From: s.From}
}
