package app

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// readyWithin bounds /readyz's write to the store: an orchestrator's
// probe waits no longer, and a store that cannot take a write that soon
// would keep an event waiting too.
const readyWithin = 2 * time.Second

// healthz says the process is alive: it answers while the bot runs,
// whatever the state of what it depends on.
func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprintln(w, "ok")
}

// readyz says whether the bot can take events now: 200 when the store
// takes a write within readyWithin, else 503, so a load balancer sends
// events elsewhere (or nowhere, for the backend to retry) instead of to a
// replica that would keep each waiting and then answer 503.
func (a *App) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readyWithin)
	defer cancel()
	w.Header().Set("Content-Type", "text/plain")
	if err := a.st.WriteCheck(ctx, a.clock.Now()); err != nil {
		a.log.Warn("not ready: the store does not take writes", "err", err.Error())
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "store does not take writes")
		return
	}
	fmt.Fprintln(w, "ready")
}
