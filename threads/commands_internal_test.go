package threads

import (
	"testing"
	"time"
)

func TestWaited(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second: "0s", 45 * time.Second: "45s", 15 * time.Minute: "15m", 2 * time.Hour: "2h",
		2*time.Hour + 5*time.Minute: "2h5m", 76 * time.Hour: "3d4h",
	} {
		if got := Waited(d); got != want {
			t.Errorf("Waited(%s) = %q, want %q", d, got, want)
		}
	}
}
