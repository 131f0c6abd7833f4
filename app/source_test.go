package app_test

import (
	"bytes"
	"net"
	"net/http"
	"strings"
	"testing"

	"approvalsbot/app"
	"approvalsbot/threads/threadstest"
)

// ipv6_source_prefix reaches the connection limits and the refusal
// lines: from ::1, a source is ::/48 under ipv6_source_prefix: 48 (the
// default would name it ::/56).
func TestIPv6SourcePrefixNamesSources(t *testing.T) {
	t.Parallel()
	probe, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	probe.Close()
	dir := t.TempDir()
	_, load := botConfig(t, dir, "listen_private: \"[::1]:0\"\nipv6_source_prefix: 48", nil)
	b := startBot(t, dir, load, nil)
	private := "http://" + b.PrivateAddr()

	resp, err := http.Post(private+"/v1/events", "application/json", bytes.NewReader(mergeEvent(t))) // unsigned
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("an unsigned event: %d, want 401", resp.StatusCode)
	}
	threadstest.Eventually(t, "the refusal's line names ::/48", func() bool {
		return hasLine(b.logs.String(), `"msg":"events refused: bad signature"`, `"source":"::/48"`)
	})

	// One connection past the per-source cap is closed unread, and its
	// line names the source.
	for range app.ConnsPerSource + 1 {
		c, err := net.Dial("tcp", b.PrivateAddr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
	}
	threadstest.Eventually(t, "the connection limit's line names ::/48", func() bool {
		return hasLine(b.logs.String(), `"msg":"connections closed unread: over the open-connection cap"`, `"source":"::/48"`)
	})
}

// hasLine says whether a line of logs holds every one of parts.
func hasLine(logs string, parts ...string) bool {
	for _, l := range strings.Split(logs, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			return true
		}
	}
	return false
}
