package replay

import (
	"testing"
	"time"
)

func TestCacheRefusesReplaysWithinTwoWindowsAndForgets(t *testing.T) {
	c := New(5 * time.Minute)
	now := time.Unix(1_800_000_000, 0)
	if !c.First("a", now) || c.First("a", now.Add(time.Minute)) {
		t.Fatal("a replay within the window was accepted")
	}
	if !c.First("b", now) {
		t.Fatal("another request was refused")
	}
	if !c.First("a", now.Add(11*time.Minute)) {
		t.Fatal("not forgotten after two windows")
	}
	if c.Len() != 1 {
		t.Fatalf("%d keys kept: old ones are not swept", c.Len())
	}
}
