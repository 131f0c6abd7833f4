package approval

// ContentRestricted reports whether the call's details are walled off
// from shared places: the backend says so (content.restricted), or the
// call is of a turn of someone's private chat (job.private_chat), whatever
// content.restricted says. It fails closed: a private chat's call is
// never shown in a channel or in mail because a flag was left false.
// Every reader of Content.Restricted asks this instead.
func (a *Approval) ContentRestricted() bool {
	return a.Content.Restricted || a.Job.PrivateChat
}

// DecidedByContentHolders reports whether only members who hold the
// content permission may decide the call: a private chat's call, whose
// details go to the operators with the permission, who decide it. A
// walled job's call (restricted, not a private chat) may be decided
// without the details by a member who lacks the permission.
func (a *Approval) DecidedByContentHolders() bool {
	return a.Job.PrivateChat
}
