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
		name string
		addr net.Addr
		want string
	}{
		{"IPv4: the address", tcp("192.0.2.7:4000"), "192.0.2.7"},
		{"IPv4-mapped IPv6 counts as IPv4", tcp("[::ffff:192.0.2.7]:4000"), "192.0.2.7"},
		{"IPv6: its /64", tcp("[2001:db8:1:2:aaaa::1]:4000"), "2001:db8:1:2::/64"},
		{"IPv6 with a zone: the zone dropped", tcp("[fe80::1%lo]:4000"), "fe80::/64"},
		{"not TCP, an IP:port address", &net.UDPAddr{IP: net.ParseIP("192.0.2.8"), Port: 53}, "192.0.2.8"},
		{"a Unix socket", &net.UnixAddr{Name: "/run/bot.sock", Net: "unix"}, "non-IP"},
		{"no address", nil, "non-IP"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := sourceString(sourceOf(c.addr)); got != c.want {
				t.Errorf("source of %v: %s, want %s", c.addr, got, c.want)
			}
		})
	}
	// Two addresses of one /64 are one source; the next /64 is another.
	if sourceOf(tcp("[2001:db8::1]:1")) != sourceOf(tcp("[2001:db8::ffff:2]:2")) {
		t.Error("two addresses in one IPv6 /64 count as two sources")
	}
	if sourceOf(tcp("[2001:db8::1]:1")) == sourceOf(tcp("[2001:db8:0:1::1]:1")) {
		t.Error("two IPv6 /64s count as one source")
	}
}
