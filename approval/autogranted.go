package approval

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// policyCovers is, for each platform policy that may grant a call
// unattended, the functions it covers. The sandbox policy covers the
// sandbox's own three tools only, never request_approval nor an MCP tool:
// an auto_granted event naming anything else under it is no routine
// notice but a warning.
var policyCovers = map[string][]string{
	"sandbox.workspace.v1": {"run_command", "write_file", "edit_file"},
}

// lookalikePolicy is the known policy (policyCovers) that id looks like
// without being it byte for byte: equal once case is folded and spaces
// and invisible characters are dropped. An auto_granted event under
// such an id is no routine notice: a reader would take it for the known
// policy, whose bounds it need not keep. "" when id is a known policy
// or looks like none.
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

// Notice words the audit notice of a call that ran unattended, one line:
// `Ran unattended: F · job J · agent A · policy P`, or a warning when the
// policy does not cover the function (policyCovers) or only looks like
// a known one. Every part comes from the event, which the agent may have
// shaped: each is redacted, and the names a warning quotes show their
// invisible characters. Every surface, the audit channel's and bot
// preview's, says this same line.
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
