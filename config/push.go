package config

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"approvalsbot/ladder"
	"approvalsbot/tenant"
)

// pushTargets is the rule of a step's push: members by user id, whose
// push address is read when the notice goes, a rotation or approvers.
var pushTargets = targetRule{
	want: "a member by user id (user:NAME), a rotation (rotation:NAME) or approvers",
	ok:   func(t ladder.Target) bool { return t.IsMember() || t.IsRotation() || t.IsApprovers() },
}

// memberRef is a step's user:NAME and where it was written, checked
// against the tenant's members once they are read (pushMembers).
type memberRef struct {
	user string
	path string
	n    *yaml.Node
}

// ntfyTopic is what ntfy takes as a topic name: server/server.go's
// topicRegex, which its apps match too.
var ntfyTopic = regexp.MustCompile(`^[-_A-Za-z0-9]{1,64}$`)

// ntfyForm says how an ntfy address is written, for its problems, which
// never echo it: the topic is the secret.
const ntfyForm = "write the topic's URL, https://ntfy.sh/TOPIC or your server's (a topic is 1 to 64 of A-Z a-z 0-9 _ -), as one ${NAME}"

// pushPos is where a member's push address was written, for the checks
// that need the whole tenant.
type pushPos struct {
	user string
	ntfy string // the topic URL, to find two members sharing one
	path string
	n    *yaml.Node
}

// memberPush decodes a member's push: {ntfy: ${VAR}, token: ${VAR}} or
// {webhook: URL, secrets: [${VAR}]}.
func (d *decoder) memberPush(v *yaml.Node, p string) (tenant.Push, bool) {
	if isNull(v) {
		return tenant.Push{}, false
	}
	var topicURL, hook, token string
	var secrets []Secret
	bad := false
	seen, ok := d.mapping(v, p, map[string]field{
		"ntfy": func(_, v *yaml.Node, p string) {
			s, ok := d.secret(v, p)
			switch {
			case !ok:
				bad = bad || !isNull(v)
			case s == "":
				d.problemf(deref(v), p, "is empty (is its environment variable set to nothing?)")
				bad = true
			default:
				if topicURL, ok = d.ntfyURL(v, p, s.Reveal()); !ok {
					bad = true
				}
			}
		},
		"token": func(_, v *yaml.Node, p string) {
			s, ok := d.secret(v, p)
			if !ok && !isNull(v) {
				bad = true
			}
			token = s.Reveal()
		},
		"webhook": func(_, v *yaml.Node, p string) {
			s, ok := d.str(v, p)
			if !ok || !d.pushURL(v, p, s) {
				bad = bad || !isNull(v)
				return
			}
			hook = s
		},
		"secrets": func(k, v *yaml.Node, p string) {
			n, ok := d.list(v, p, func(_ int, item *yaml.Node, p string) {
				s, ok := d.hmacKey(item, p)
				switch {
				case ok && s == "":
					d.problemf(deref(item), p, "is empty (is its environment variable set to nothing?)")
				case ok:
					secrets = append(secrets, s)
					return
				case isNull(item):
					d.problemf(deref(item), p, "is empty")
				}
				bad = true
			})
			if ok && n == 0 {
				d.problemf(k, p, "needs at least one secret")
				bad = true
			}
			bad = bad || !ok
		},
	})
	if !ok {
		return tenant.Push{}, false
	}
	at := deref(v)
	switch {
	case seen["ntfy"] != nil && seen["webhook"] != nil:
		d.problemf(at, p, "has both ntfy and webhook: a member's notices go one way; give one")
		return tenant.Push{}, false
	case seen["ntfy"] == nil && seen["webhook"] == nil:
		d.problemf(at, p, "says neither ntfy nor webhook: give an ntfy topic's URL (from the environment) or a webhook's URL and secrets")
		return tenant.Push{}, false
	case seen["ntfy"] != nil && seen["secrets"] != nil:
		d.problemf(seen["secrets"], joinKey(p, "secrets"), "signs a webhook's bodies: an ntfy topic takes none (its URL is the secret; a protected topic takes token)")
		return tenant.Push{}, false
	case seen["webhook"] != nil && seen["token"] != nil:
		d.problemf(seen["token"], joinKey(p, "token"), "is an ntfy access token: a webhook's bodies are signed with secrets instead")
		return tenant.Push{}, false
	case seen["webhook"] != nil && seen["secrets"] == nil:
		d.missing(at, p, "secrets", fmt.Sprintf("a list of secrets that sign the webhook's bodies (at least %d bytes each, from the environment)", MinHMACKey))
		return tenant.Push{}, false
	case bad:
		return tenant.Push{}, false
	case topicURL != "":
		return tenant.NtfyPush(topicURL, token), true
	}
	return tenant.WebhookPush(hook, RevealAll(secrets)), true
}

// ntfyURL checks an ntfy topic's URL, never echoing it, and returns it
// without a trailing "/".
func (d *decoder) ntfyURL(n *yaml.Node, p, s string) (string, bool) {
	at := deref(n)
	u, err := url.Parse(strings.TrimRight(s, "/"))
	switch {
	case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Opaque != "":
		d.fixedProblem(at, p, "is not an ntfy topic's URL: "+ntfyForm)
		return "", false
	case u.User != nil:
		d.fixedProblem(at, p, "must not carry credentials (user:password@): a protected topic takes token, from the environment")
		return "", false
	case u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(s, "?#"):
		d.fixedProblem(at, p, "has a query or fragment: "+ntfyForm)
		return "", false
	case !ntfyTopic.MatchString(u.Path[strings.LastIndexByte(u.Path, '/')+1:]):
		d.fixedProblem(at, p, "does not end in a topic: "+ntfyForm)
		return "", false
	case u.Scheme == "http" && !LoopbackHost(u.Hostname()):
		d.fixedProblem(at, p, "is plain http to a host that is not this machine: a notice carries the member's decision link, which would cross the network in clear text; use https")
		return "", false
	}
	return u.String(), true
}

// pushURL checks a webhook's URL: absolute, https (http only to this
// machine), without credentials or fragment.
func (d *decoder) pushURL(n *yaml.Node, p, s string) bool {
	if !d.httpURL(n, p, s) {
		return false
	}
	u, _ := url.Parse(s) // httpURL parsed it
	switch {
	case u.Fragment != "" || strings.HasSuffix(s, "#"):
		d.problemf(n, p, "%q has a fragment, which is never sent", s)
		return false
	case u.Scheme == "http" && !LoopbackHost(u.Hostname()):
		d.problemf(n, p, "%q is plain http to a host that is not this machine: a notice carries the member's decision link, which would cross the network in clear text; use https", s)
		return false
	}
	return true
}

// pushTopicsOnce reports an ntfy topic two members share: whoever reads a
// topic reads the links of every member it carries, and acts as them.
func (d *decoder) pushTopicsOnce(pushes []pushPos) {
	first := map[string]pushPos{}
	for _, pp := range pushes {
		if pp.ntfy == "" {
			continue
		}
		if prev, dup := first[pp.ntfy]; dup {
			d.fixedProblem(pp.n, joinKey(pp.path, "ntfy"), fmt.Sprintf("is the topic of %s too (%s): a topic is one member's, since whoever reads it reads their decision links", prev.user, prev.path))
			continue
		}
		first[pp.ntfy] = pp
	}
}

// pushMembers checks each member a step's push names by user id: one of
// the tenant's, who may decide, with a push address.
func (d *decoder) pushMembers(t *tenant.Tenant, ladders []ladderPos) {
	for _, l := range ladders {
		for _, s := range l.steps {
			for _, ref := range s.members {
				m, found := t.MemberByUser(ref.user)
				switch {
				case !found:
					d.problemf(ref.n, ref.path, "%s is not a member of tenant %s: a push reaches the tenant's members (members[].user)", ref.user, t.ID)
				case !m.Role.CanDecide():
					d.problemf(ref.n, ref.path, "%s is a %s and cannot decide: a push would page someone who cannot answer", ref.user, m.Role)
				case m.Push.IsZero():
					d.problemf(ref.n, ref.path, "%s has no push address to %s: give the member one (tenants.%s.members)", ref.user, verbWords(ladder.VerbPush), t.ID)
				}
			}
		}
	}
}
