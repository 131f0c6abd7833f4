package ladder_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/ladder"
)

// sampleUserIDs are a valid and some invalid bare user ids per chat
// surface; the test fails on a surface it has none for, so a new entry in
// the registry comes with its own.
var sampleUserIDs = map[string]struct {
	valid   string
	invalid []string
}{
	ladder.SurfaceSlack:   {"U0KEVIN", []string{"C0CHANNEL", "u0kevin", "S0GROUP", "223344556677889900", ""}},
	ladder.SurfaceDiscord: {"223344556677889900", []string{"12", "U0KEVIN", "2233445566778899001122", ""}},
}

// Every chat surface names itself, is found by its name, and reaches a
// user by a target of its own that reads back as the same user: the
// stored text of a thread's answer to one person (slack:U…,
// discord:user:…) starts with the surface's name, which is how
// retention finds the handle it carries.
func TestChatSurfaces(t *testing.T) {
	t.Parallel()
	cs := ladder.ChatSurfaces()
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	if want := []string{ladder.SurfaceSlack, ladder.SurfaceDiscord}; !slices.Equal(names, want) {
		t.Fatalf("ChatSurfaces() %v, want %v in that order", names, want)
	}
	kinds := map[ladder.TargetKind]string{}
	for _, c := range cs {
		if c.Title == "" || c.UserIDRule == "" || c.HandleLifetime <= 0 {
			t.Errorf("%s: title %q, user id rule %q, handle lifetime %v: want all set", c.Name, c.Title, c.UserIDRule, c.HandleLifetime)
		}
		if got, ok := ladder.ChatSurfaceNamed(c.Name); !ok || got.Name != c.Name || got.UserKind != c.UserKind {
			t.Errorf("ChatSurfaceNamed(%q) = %+v, %v", c.Name, got, ok)
		}
		if !slices.Contains(ladder.TargetKinds(), c.UserKind) {
			t.Errorf("%s: user kind %q is not one of TargetKinds", c.Name, c.UserKind)
		}
		if other, dup := kinds[c.UserKind]; dup {
			t.Errorf("%s and %s share user kind %q", other, c.Name, c.UserKind)
		}
		kinds[c.UserKind] = c.Name
		// The name is a key beside a member's others, in the config file
		// and in a frozen rotation member.
		if slices.Contains([]string{"user", "role", "content", "governance", "email", ladder.SurfaceEmail}, c.Name) {
			t.Errorf("surface %q clashes with a member's other keys", c.Name)
		}
		ids, ok := sampleUserIDs[c.Name]
		if !ok {
			t.Errorf("%s: the test has no sample user ids", c.Name)
			continue
		}
		u := c.User(ids.valid)
		if !u.IsUser() || u.Surface() != c.Name || u.ID != ids.valid {
			t.Errorf("%s: User(%q) = %+v (surface %q, user %v)", c.Name, ids.valid, u, u.Surface(), u.IsUser())
		}
		back, err := ladder.ParseTarget(u.String())
		if err != nil || back != u {
			t.Errorf("%s: %q reads back as %+v, %v; want %+v", c.Name, u.String(), back, err, u)
		}
		if !strings.HasPrefix(u.String(), c.Name+":") {
			t.Errorf("%s: user target %q does not start with %s:", c.Name, u, c.Name)
		}
		if !c.ValidUserID(ids.valid) {
			t.Errorf("%s: ValidUserID(%q) = false", c.Name, ids.valid)
		}
		if id, err := c.ParseUserID(ids.valid); err != nil || id != ids.valid {
			t.Errorf("%s: ParseUserID(%q) = %q, %v", c.Name, ids.valid, id, err)
		}
		for _, bad := range ids.invalid {
			if c.ValidUserID(bad) {
				t.Errorf("%s: ValidUserID(%q) = true", c.Name, bad)
			}
			if _, err := c.ParseUserID(bad); err == nil || !strings.Contains(err.Error(), c.UserIDRule) {
				t.Errorf("%s: ParseUserID(%q) error %v, want it to say %s", c.Name, bad, err, c.UserIDRule)
			}
		}
	}
	for _, name := range []string{ladder.SurfaceEmail, "deadline", "", "Slack"} {
		if c, ok := ladder.ChatSurfaceNamed(name); ok {
			t.Errorf("ChatSurfaceNamed(%q) = %+v, want none", name, c)
		}
	}
	// The caller's slice is its own.
	cs[0].Name = "changed"
	if ladder.ChatSurfaces()[0].Name != ladder.SurfaceSlack {
		t.Error("changing ChatSurfaces' result changed the registry")
	}
}

// A member's id written as a target is refused with the bare form to
// write; other ids by the surface's rule.
func TestParseUserIDWords(t *testing.T) {
	t.Parallel()
	slack, _ := ladder.ChatSurfaceNamed(ladder.SurfaceSlack)
	discord, _ := ladder.ChatSurfaceNamed(ladder.SurfaceDiscord)
	tests := []struct {
		c       ladder.ChatSurface
		written string
		want    string
	}{
		{slack, "slack:U0ADA", "write the bare user id U0ADA, without slack:"},
		{slack, "C0CHANNEL", `"C0CHANNEL" is not a Slack user id (U… or W…)`},
		{discord, "discord:user:223344556677889901", "write the bare user id, without discord:user:"},
		{discord, "discord:223344556677889901", "write the bare user id, without discord:"},
		{discord, "12", `"12" is not a Discord user id (17 to 20 digits)`},
	}
	for _, tt := range tests {
		_, err := tt.c.ParseUserID(tt.written)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: ParseUserID(%q) = %v, want %q", tt.c.Name, tt.written, err, tt.want)
		}
	}
}

// Lifetimes of the handles a click leaves, as the platforms document
// them.
func TestHandleLifetimes(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]time.Duration{ladder.SurfaceSlack: 30 * time.Minute, ladder.SurfaceDiscord: 15 * time.Minute} {
		if c, _ := ladder.ChatSurfaceNamed(name); c.HandleLifetime != want {
			t.Errorf("%s handle lifetime %v, want %v", name, c.HandleLifetime, want)
		}
	}
}

func TestChatIDs(t *testing.T) {
	t.Parallel()
	ids := ladder.ChatIDs{ladder.SurfaceDiscord: "223344556677889900", ladder.SurfaceSlack: "U0KEVIN", "teams": "someone"}
	var users []string
	for _, u := range ids.Users() {
		users = append(users, u.String())
	}
	if got := strings.Join(users, " "); got != "slack:U0KEVIN discord:user:223344556677889900" {
		t.Errorf("Users() = %s: want the registered surfaces', Slack first", got)
	}
	if u, ok := ids.UserOn(ladder.SurfaceDiscord); !ok || u.String() != "discord:user:223344556677889900" {
		t.Errorf("UserOn(discord) = %v, %v", u, ok)
	}
	for _, s := range []string{"teams", ladder.SurfaceEmail, ""} {
		if u, ok := ids.UserOn(s); ok {
			t.Errorf("UserOn(%q) = %v: want none off the registry", s, u)
		}
	}
	var none ladder.ChatIDs
	if u, ok := none.UserOn(ladder.SurfaceSlack); ok || len(none.Users()) != 0 {
		t.Errorf("a nil ChatIDs reaches %v, %v", u, none.Users())
	}
}

// A rotation member is stored as plans have always held one, the chat
// ids under the surfaces' names in registry order, and reads back whole;
// a key no registered surface has is passed over.
func TestRotationMemberJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		m    ladder.RotationMember
		want string
	}{
		{kevin, `{"user":"user:kevin","slack":"U0KEVIN","discord":"223344556677889900","email":"kevin@acme.example"}`},
		{ada, `{"user":"user:ada","slack":"U0ADA","email":"ada@acme.example"}`},
		{lee, `{"user":"user:lee","discord":"334455667788990011","email":"lee@acme.example"}`},
		{ladder.RotationMember{User: "user:<nochat>"}, `{"user":"user:\u003cnochat\u003e"}`},
		{ladder.RotationMember{}, `{"user":""}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.m)
		if err != nil || string(b) != tt.want {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tt.m, b, err, tt.want)
		}
		var back ladder.RotationMember
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.m, back); diff != "" {
			t.Errorf("round trip of %s (-before +after):\n%s", b, diff)
		}
	}
	var m ladder.RotationMember
	if err := json.Unmarshal([]byte(`{"user":"user:ada","teams":"x","slack":"U0ADA","note":{"a":1}}`), &m); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ladder.RotationMember{User: "user:ada", Chat: ladder.ChatIDs{"slack": "U0ADA"}}, m); diff != "" {
		t.Errorf("unknown keys (-want +got):\n%s", diff)
	}
	if err := json.Unmarshal([]byte(`{"user":"user:ada","slack":7}`), &m); err == nil {
		t.Error("a number for a Slack id read without an error")
	}
}
