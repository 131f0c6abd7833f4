package config

import "approvalsbot/notify/smtpconf"

// reads is the settings the problem depends on: the decoder leaves it out
// when one of them could not be read, which it has reported already. A
// setting that failed to read is left empty, so only the rule that
// username and password go together could fire on that alone; the other
// rules read one setting, or a second one only once it is valid (tls none
// to a loopback host is checked only for a good addr).
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
