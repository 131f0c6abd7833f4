package threads

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"approvalsbot/approval"
	"approvalsbot/say"
	"approvalsbot/store"
	"approvalsbot/templates"
)

// showRequest asks for an approval's full arguments (Show all arguments,
// Show details), for the one person who clicked.
type showRequest struct {
	Tenant     string
	ApprovalID string
	Revision   int // the revision of the card clicked
	Person     Person
}

// ShowResult is what that person alone may see: either Refusal, or the
// arguments (redacted of secrets, not cut) with the digest they match.
type ShowResult struct {
	Refusal   say.Reason
	Function  string
	Arguments []byte // indented JSON
	Digest    string
	Redacted  bool
	// Changes is a changeset's files and whole patch (redacted of
	// secrets), for an approval of kind changes or protected_paths, once
	// the patch's digest equals the approval's patch_sha256; nil for a
	// call that has none.
	Changes *ShownChanges
	// ConfirmValue is the value, as the backend sent it (JSON), of the
	// argument a typed confirmation names, from the arguments that
	// matched the digest: what the decision page compares the typed
	// value with; never shown. nil for a call that needs none.
	ConfirmValue json.RawMessage
}

// ShownChanges is a changeset as a look-up shows it.
type ShownChanges struct {
	Files       []approval.ChangedFile // protected ones first
	Patch       string
	PatchSHA256 string
}

// PatchDigest is "sha256:" and the lowercase hex SHA-256 of a patch's
// bytes as sent (UTF-8, not canonicalised): what patch_sha256 names.
func PatchDigest(patch string) string {
	sum := sha256.Sum256([]byte(patch))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ErrAnswerTooLarge: the job backend's answer is over the protocol's
// 1 MiB cap, so it was not read. A Backend wraps it; a look-up that gets
// it says the call is too large to show, not that the answer was broken.
var ErrAnswerTooLarge = errors.New("the job backend's answer is over the protocol's 1 MiB")

// showTimeout bounds a look-up: the person waits for it.
const showTimeout = 70 * time.Second

// showArguments looks the arguments up at the backend as the member who
// asked, and shows them only when the member holds the content permission
// and their RFC 8785 digest equals the one the card carries: on a
// mismatch not one byte of them is returned. It also returns the
// revision as stored, for what else the click shows of it; nil when the
// look-up is refused before it is read.
func (s *Service) showArguments(ctx context.Context, req showRequest) (ShowResult, *approval.Stored, error) {
	refuse := func(why say.Reason) (ShowResult, *approval.Stored, error) { return ShowResult{Refusal: why}, nil, nil }
	tenant, ok := s.tenants.Tenant(req.Tenant)
	if !ok {
		return refuse(say.Reason{Kind: say.NotServed, Act: say.LookUp, Tenant: req.Tenant})
	}
	m, ok := tenant.MemberOn(req.Person.Surface, req.Person.User)
	if !ok {
		return refuse(say.Reason{Kind: say.NotMember, Act: say.LookUp, Tenant: req.Tenant})
	}
	if !m.Content {
		return refuse(say.Reason{Kind: say.NoContent, Tenant: req.Tenant})
	}
	if s.backend == nil {
		return refuse(say.Reason{Kind: say.NoBackend})
	}
	unknown := say.Reason{Kind: say.UnknownCard, Act: say.LookUp}
	rev, err := s.store.RevisionGet(ctx, req.ApprovalID, req.Revision)
	if errors.Is(err, store.ErrNotFound) {
		return refuse(unknown)
	}
	if err != nil {
		return ShowResult{}, nil, fmt.Errorf("read revision %d of %s: %w", req.Revision, req.ApprovalID, err)
	}
	var stored approval.Stored
	if err := json.Unmarshal(rev.Body, &stored); err != nil {
		return ShowResult{}, nil, fmt.Errorf("decode revision %d of %s: %w", req.Revision, req.ApprovalID, err)
	}
	a := &stored.Approval
	if a.Tenant != req.Tenant {
		return refuse(unknown)
	}
	refuseRead := func(why say.Reason) (ShowResult, *approval.Stored, error) {
		return ShowResult{Refusal: why}, &stored, nil
	}
	ctx, cancel := context.WithTimeout(ctx, showTimeout)
	defer cancel()
	ans, err := s.backend.Arguments(ctx, ArgumentsCall{ApprovalID: a.ID, Revision: a.Revision, Actor: m.User,
		IdempotencyKey: s.newID(s.clock.Now())})
	switch {
	case errors.Is(err, ErrBackendUnavailable):
		return refuseRead(say.Reason{Kind: say.BackendDown})
	case errors.Is(err, ErrAnswerTooLarge):
		return refuseRead(say.Reason{Kind: say.TooLargeToShow, Console: a.ConsoleURL})
	case err != nil:
		s.log.Warn("arguments look-up failed", "tenant", a.Tenant, "approval_id", a.ID, "err", err)
		return refuseRead(say.Reason{Kind: say.AnswerUnreadable})
	case ans.Forbidden:
		return refuseRead(say.Reason{Kind: say.LookupForbidden})
	case ans.Gone:
		return refuseRead(say.Reason{Kind: say.LookupGone})
	}
	digest, err := approval.Digest(ans.Arguments)
	if err != nil || digest != a.Call.ArgsSHA256 || ans.ArgsSHA256 != a.Call.ArgsSHA256 {
		s.log.Error("looked-up arguments do not match the card's digest: not shown", "tenant", a.Tenant, "approval_id", a.ID)
		return refuseRead(say.Reason{Kind: say.DigestMismatch, Digest: a.Call.ArgsSHA256})
	}
	var changes *ShownChanges
	if a.Changes != nil {
		if changes = checkedChanges(&stored, ans.Changes); changes == nil {
			s.log.Error("looked-up changeset does not match the card's patch digest or files: not shown", "tenant", a.Tenant, "approval_id", a.ID)
			return refuseRead(say.Reason{Kind: say.ChangesMismatch})
		}
	}
	pretty, redacted, err := approval.Reveal(ans.Arguments)
	if err != nil {
		return refuseRead(say.Reason{Kind: say.ArgumentsUnreadable})
	}
	// Every surface and the page print these as they are: each invisible
	// character is shown, as on the card.
	res := ShowResult{Function: templates.VisibleLine(a.Call.Function), Arguments: []byte(templates.VisibleJSON(string(pretty))),
		Digest: digest, Redacted: redacted, Changes: changes}
	if a.Confirm != nil {
		res.ConfirmValue, _ = approval.ConfirmValue(ans.Arguments, a.Confirm.Argument)
	}
	return res, &stored, nil
}

// checkedChanges is the look-up's changeset for the stored revision,
// when its patch's digest equals the revision's patch_sha256 (which the
// stored revision keeps, restricted or not) and it names the revision's
// files (sameFiles); nil otherwise, and then nothing of it is shown, as
// for a digest that does not match. An approval without a valid patch
// digest has nothing to check a patch against, so none is shown.
func checkedChanges(stored *approval.Stored, got *ArgumentsChanges) *ShownChanges {
	want := stored.Changes.PatchSHA256
	if got == nil || !approval.ValidDigest(want) || got.PatchSHA256 != want || PatchDigest(got.Patch) != want ||
		!sameFiles(stored, got.Files) {
		return nil
	}
	files := make([]approval.ChangedFile, len(got.Files))
	for i, f := range got.Files {
		files[i] = approval.ChangedFile{Path: templates.VisibleLine(approval.RedactText(f.Path)), Protected: f.Protected}
	}
	sort.SliceStable(files, func(i, j int) bool { return files[i].Protected && !files[j].Protected })
	return &ShownChanges{Files: files, Patch: templates.Visible(approval.RedactText(got.Patch)), PatchSHA256: want}
}

// sameFiles reports whether got are the stored revision's files, in its
// order: as many, each with the same protected flag (which decides who may
// approve, and is kept even of a restricted call), and, where the revision
// keeps paths (it was not restricted), the same path as kept: redacted by
// the stored form, as the backend sent it in a revision kept raw by a
// release before the stored form. The patch digest binds the patch but not
// the list beside it, so a list that differs from the card's is not shown.
func sameFiles(stored *approval.Stored, got []approval.ChangedFile) bool {
	want := stored.Changes.Files
	if len(got) != len(want) {
		return false
	}
	for i, f := range got {
		w := want[i]
		if f.Protected != w.Protected {
			return false
		}
		if stored.Form.ContentWithheld {
			continue // the revision keeps no path to compare
		}
		path := f.Path
		if stored.Form.Version > 0 {
			path = approval.RedactText(path)
		}
		if path != w.Path {
			return false
		}
	}
	return true
}

// Text is what a look-up shows, as one literal text: the whole
// arguments, and for a changeset, below them, its files (protected ones
// first, marked) and its whole patch with the digest it matched.
func (res ShowResult) Text() string {
	text := string(res.Arguments)
	ch := res.Changes
	if ch == nil {
		return text
	}
	var b strings.Builder
	b.WriteString(strings.TrimRight(text, "\n"))
	protected := 0
	for _, f := range ch.Files {
		if f.Protected {
			protected++
		}
	}
	fmt.Fprintf(&b, "\n\n-- changes: %d %s", len(ch.Files), plural(len(ch.Files), "file", "files"))
	if protected > 0 {
		fmt.Fprintf(&b, ", %d of them protected (this change touches the plugin's tests or its rules)", protected)
	}
	b.WriteString(" --\n")
	for _, f := range ch.Files {
		if f.Protected {
			b.WriteString("! " + f.Path + " (protected)\n")
		} else {
			b.WriteString("  " + f.Path + "\n")
		}
	}
	b.WriteString("\n-- patch " + ch.PatchSHA256 + " --\n")
	b.WriteString(ch.Patch)
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
