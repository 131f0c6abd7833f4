package connlimit

import (
	"net"
	"testing"
)

func TestSourceOf(t *testing.T) {
	t.Parallel()
	tcp := func(s string) net.Addr {
		a, err := net.ResolveTCPAddr("tcp", s)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	for _, c := range []struct {
		name   string
		addr   net.Addr
		prefix int
		want   string
	}{
		{"IPv4: the address", tcp("192.0.2.7:4000"), DefaultIPv6Prefix, "192.0.2.7"},
		{"IPv4 whatever the IPv6 prefix", tcp("192.0.2.7:4000"), 48, "192.0.2.7"},
		{"IPv4-mapped IPv6 counts as IPv4", tcp("[::ffff:192.0.2.7]:4000"), DefaultIPv6Prefix, "192.0.2.7"},
		{"IPv6: its /56 by default", tcp("[2001:db8:1:2aa:aaaa::1]:4000"), DefaultIPv6Prefix, "2001:db8:1:200::/56"},
		{"IPv6: a /64 when configured", tcp("[2001:db8:1:2aa:aaaa::1]:4000"), 64, "2001:db8:1:2aa::/64"},
		{"IPv6: a /48 when configured", tcp("[2001:db8:1:2aa:aaaa::1]:4000"), 48, "2001:db8:1::/48"},
		{"IPv6: each address when configured", tcp("[2001:db8::5]:4000"), 128, "2001:db8::5/128"},
		{"IPv6 loopback", tcp("[::1]:4000"), DefaultIPv6Prefix, "::/56"},
		{"IPv6 with a zone: the zone dropped", tcp("[fe80::1%lo]:4000"), DefaultIPv6Prefix, "fe80::/56"},
		{"not TCP, an IP:port address", &net.UDPAddr{IP: net.ParseIP("192.0.2.8"), Port: 53}, DefaultIPv6Prefix, "192.0.2.8"},
		{"a Unix socket", &net.UnixAddr{Name: "/run/bot.sock", Net: "unix"}, DefaultIPv6Prefix, "non-IP"},
		{"no address", nil, DefaultIPv6Prefix, "non-IP"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := sourceString(sourceOf(c.addr, c.prefix)); got != c.want {
				t.Errorf("source of %v with IPv6 /%d: %s, want %s", c.addr, c.prefix, got, c.want)
			}
			if c.addr == nil {
				return
			}
			// Source, on a request's RemoteAddr, names the same source.
			if got := Source(c.addr.String(), c.prefix); got != c.want {
				t.Errorf("Source(%q, %d): %s, want %s", c.addr.String(), c.prefix, got, c.want)
			}
		})
	}
	// The /64s of one /56 are one source; the next /56 is another.
	same := func(a, b string) bool {
		return sourceOf(tcp(a), DefaultIPv6Prefix) == sourceOf(tcp(b), DefaultIPv6Prefix)
	}
	if !same("[2001:db8:0:100::1]:1", "[2001:db8:0:1ff:ffff::2]:2") {
		t.Error("two /64s of one IPv6 /56 count as two sources")
	}
	if same("[2001:db8:0:100::1]:1", "[2001:db8:0:200::1]:1") {
		t.Error("two IPv6 /56s count as one source")
	}
	if Source("2001:db8::1", 0) != "non-IP" {
		t.Error("an address without a port names an IP source")
	}
}
