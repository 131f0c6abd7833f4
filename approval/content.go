package approval

// ContentRestricted reports whether the call's details are walled off
// from shared places: content.restricted, or a private chat's call
// whatever that says, so a flag left false fails closed. Every reader of
// Content.Restricted asks this instead.
func (a *Approval) ContentRestricted() bool {
	return a.Content.Restricted || a.Job.PrivateChat
}

// DecidedByContentHolders reports whether only members holding the content
// permission may decide: a private chat's call. A walled job's call may be
// decided without the details.
func (a *Approval) DecidedByContentHolders() bool {
	return a.Job.PrivateChat
}
