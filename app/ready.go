package app

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// readyWithin bounds /readyz's write: a store slower than this would
// keep an event waiting too, and a probe waits no longer.
const readyWithin = 2 * time.Second

// healthz says the process is alive, whatever its dependencies' state.
func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprintln(w, "ok")
}

// readyz answers 200 when the store takes a write within readyWithin,
// else 503: docs/design.md#readiness.
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
