package decidepage

import "time"

// The page's argument look-ups are limited per member
// (internal/memberlimit): each is a signed call to the job backend as
// that member, made for whoever holds the link, so a link that leaked
// (a scanner, a forwarded mail, a browser's history) must not turn into
// a stream of them. A member may make LookupBurst look-ups at once, and
// one more every LookupEvery after that (5 a minute); past it the page
// answers 429 with Retry-After and asks nothing. The count is kept in
// memory by each process: a bot of several replicas allows each member
// this much per replica.
const (
	LookupBurst = 5
	LookupEvery = 12 * time.Second
)
