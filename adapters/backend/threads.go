package backend

import (
	"context"
	"errors"
	"fmt"

	"approvalsbot/approval"
	"approvalsbot/threads"
)

// ForThreads is the client as threads.Backend, whose types are the core's.
func (c *Client) ForThreads() threads.Backend { return threadsBackend{c} }

type threadsBackend struct{ c *Client }

var _ threads.Backend = threadsBackend{}

func (b threadsBackend) Decide(ctx context.Context, d threads.DecisionCall) (threads.DecisionAnswer, error) {
	decision := Deny
	if d.Approve {
		decision = Approve
	}
	var approvers []Approver
	for _, a := range d.Approvers {
		approvers = append(approvers, Approver{Actor: a.Actor, Via: Via{Surface: a.Surface, User: a.User}, At: a.At, ArgsSHA256: a.ArgsSHA256})
	}
	var typed *Confirmation
	if d.Confirm != nil {
		typed = &Confirmation{Argument: d.Confirm.Argument, Value: d.Confirm.Value}
	}
	res, err := b.c.Decide(ctx, Decision{ApprovalID: d.ApprovalID, Revision: d.Revision, Decision: decision,
		Actor: d.Actor, Via: Via{Surface: d.Surface, User: d.User}, Comment: d.Comment, ArgsSHA256: d.ArgsSHA256,
		Approvers: approvers, Confirmation: typed, Grant: grantBody(d.Grant)}, d.IdempotencyKey)
	if err != nil {
		if errors.Is(err, ErrUnavailable) {
			return threads.DecisionAnswer{}, fmt.Errorf("%w: %w", threads.ErrBackendUnavailable, err)
		}
		return threads.DecisionAnswer{}, err
	}
	o, ok := threadsOutcome(res.Outcome)
	if !ok {
		return threads.DecisionAnswer{}, fmt.Errorf("decision on %s: unexpected outcome %q", d.ApprovalID, res.Outcome)
	}
	return threads.DecisionAnswer{Outcome: o, Status: approval.State(res.Status), Actor: res.Actor, Message: res.Message}, nil
}

// threadsOutcome is a decision's (or a turn's batch's) outcome in the
// core's terms; false for one the client never returns.
func threadsOutcome(o Outcome) (threads.DecisionOutcome, bool) {
	switch o {
	case OutcomeRecorded:
		return threads.DecisionRecorded, true
	case OutcomeAlreadyDecided:
		return threads.DecisionAlreadyDecided, true
	case OutcomeStaleRevision:
		return threads.DecisionStaleRevision, true
	case OutcomeDigestMismatch:
		return threads.DecisionDigestMismatch, true
	case OutcomeForbidden:
		return threads.DecisionForbidden, true
	case OutcomeNotFound:
		return threads.DecisionNotFound, true
	case OutcomeCancelled:
		return threads.DecisionCancelled, true
	}
	return "", false
}

func (b threadsBackend) Arguments(ctx context.Context, r threads.ArgumentsCall) (threads.ArgumentsAnswer, error) {
	res, err := b.c.Arguments(ctx, ArgumentsRequest{ApprovalID: r.ApprovalID, Revision: r.Revision, Actor: r.Actor}, r.IdempotencyKey)
	if err != nil {
		if errors.Is(err, ErrUnavailable) {
			return threads.ArgumentsAnswer{}, fmt.Errorf("%w: %w", threads.ErrBackendUnavailable, err)
		}
		if errors.Is(err, ErrTooLarge) {
			return threads.ArgumentsAnswer{}, fmt.Errorf("%w: %w", threads.ErrAnswerTooLarge, err)
		}
		return threads.ArgumentsAnswer{}, err
	}
	switch res.Outcome {
	case OutcomeOK:
		return threads.ArgumentsAnswer{Arguments: res.Arguments, ArgsSHA256: res.ArgsSHA256, Changes: changesOf(res.Changes)}, nil
	case OutcomeForbidden:
		return threads.ArgumentsAnswer{Forbidden: true, Message: res.Message}, nil
	case OutcomeNotFound, OutcomeCancelled:
		return threads.ArgumentsAnswer{Gone: true, Message: res.Message}, nil
	}
	return threads.ArgumentsAnswer{}, fmt.Errorf("arguments of %s: unexpected outcome %q", r.ApprovalID, res.Outcome)
}

// changesOf is a look-up's changeset in threads' terms; nil for none.
func changesOf(c *ChangesAnswer) *threads.ArgumentsChanges {
	if c == nil {
		return nil
	}
	out := &threads.ArgumentsChanges{Patch: c.Patch, PatchSHA256: c.PatchSHA256}
	for _, f := range c.Files {
		out.Files = append(out.Files, approval.ChangedFile{Path: f.Path, Protected: f.Protected})
	}
	return out
}
