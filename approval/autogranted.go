package approval

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// policyCovers lists the functions each platform policy may grant
// unattended; an auto_granted event naming another under it is a warning.
var policyCovers = map[string][]string{
	"sandbox.workspace.v1": {"run_command", "write_file", "edit_file"},
}

// lookalikePolicy is the known policy id equals once case, spaces and
// invisible characters are ignored, without being it; "" if none. A reader
// would take id for that policy, whose bounds it need not keep.
func lookalikePolicy(id string) string {
	if _, known := policyCovers[id]; known {
		return ""
	}
	bare := strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || Invisible(r) {
			return -1
		}
		return r
	}, id)
	for known := range policyCovers {
		if strings.EqualFold(bare, known) {
			return known
		}
	}
	return ""
}

// Notice is the one-line audit notice of a call that ran unattended, or a
// warning when the policy does not cover the function or only looks like
// a known one. The agent may have shaped every part: each is redacted, and
// a name a warning quotes shows its invisible characters.
func (ag *AutoGranted) Notice() string {
	fn, job, policy := RedactText(ag.Call.Function), RedactText(ag.Job.ID), RedactText(ag.PolicyID)
	agent := "-"
	if ag.Job.Agent != "" {
		agent = RedactText(ag.Job.Agent)
	}
	if covers, known := policyCovers[ag.PolicyID]; known && !slices.Contains(covers, ag.Call.Function) {
		return fmt.Sprintf("Warning: %s ran unattended under policy %s, which does not cover it (it covers only %s) · job %s · agent %s",
			visibleName(fn), policy, andList(covers), job, agent)
	}
	if like := lookalikePolicy(ag.PolicyID); like != "" {
		return fmt.Sprintf("Warning: %s ran unattended under policy \"%s\", which looks like %s but is not it · job %s · agent %s",
			fn, visibleName(policy), like, job, agent)
	}
	return fmt.Sprintf("Ran unattended: %s · job %s · agent %s · policy %s", fn, job, agent, policy)
}

// andList words a list as "a, b and c".
func andList(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}
