package logsurface_test

import (
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"approvalsbot/adapters/logsurface"
	"approvalsbot/templates"
	"approvalsbot/threads"
	"approvalsbot/threads/surfacetest"
	"approvalsbot/threads/threadstest"
)

func TestConformance(t *testing.T) {
	surfacetest.Run(t, logConformance{renderer: threadstest.Renderer(t)})
}

// logConformance is the log surface writing to a stream the fake reads.
type logConformance struct{ renderer *templates.Renderer }

// Without a decision page a card in the log names no way to decide it.
func (logConformance) Traits() surfacetest.Traits { return surfacetest.Traits{} }

func (logConformance) Skip(subtest string) string {
	switch {
	case strings.HasPrefix(subtest, "Long"):
		return "a stream takes text of any length: the log cuts nothing"
	case strings.HasPrefix(subtest, "Fail/") && !strings.HasSuffix(subtest, "/"+string(surfacetest.Unavailable)):
		return "a stream has no rate limit, no credentials, no channels and no messages to delete: its only failure is a write that fails"
	}
	return ""
}

func (c logConformance) New(t *testing.T) (threads.Surface, surfacetest.Fake) {
	out := &stream{}
	return logsurface.New(logsurface.Options{Out: out, Renderer: c.renderer}), out
}

// stream is the log surface's output, read back entry by entry.
type stream struct {
	mu   sync.Mutex
	b    strings.Builder
	fail bool // the next write fails
}

func (s *stream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail {
		s.fail = false
		return 0, errors.New("write /dev/stdout: broken pipe")
	}
	return s.b.Write(p)
}

// entry is one thing the log surface wrote: its header line and body.
type entry struct{ header, body string }

// rule is the line the log surface writes before each entry.
const rule = "────────────────────────────────────────────────────────────\n"

func (s *stream) entries() []entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []entry
	for _, e := range strings.Split(s.b.String(), rule)[1:] {
		header, body, _ := strings.Cut(e, "\n")
		out = append(out, entry{header, body})
	}
	return out
}

var approvalOf = regexp.MustCompile(`\(approval ([^,)]+)`)

func (e entry) message() surfacetest.Message {
	m := surfacetest.Message{Text: e.body, Size: len(e.body)}
	if strings.HasPrefix(e.header, "card ") {
		if a := approvalOf.FindStringSubmatch(e.header); a != nil {
			m.Approval = a[1]
		}
	}
	return m
}

func (*stream) Target() string { return "slack:C0APPROVALS" }

func (s *stream) Card(post threads.PostRef) (surfacetest.Message, bool) {
	var last *entry
	for _, e := range s.entries() {
		if strings.HasPrefix(e.header, "card "+post.Ref+" for ") {
			last = &e
		}
	}
	if last == nil {
		return surfacetest.Message{}, false
	}
	return last.message(), true
}

func (s *stream) Thread(root threads.PostRef) []surfacetest.Message {
	in := regexp.MustCompile(`in the thread of ` + regexp.QuoteMeta(root.Ref) + `( |$)`)
	var out []surfacetest.Message
	for _, e := range s.entries() {
		if in.MatchString(e.header) {
			out = append(out, e.message())
		}
	}
	return out
}

func (s *stream) Channel(target string) []surfacetest.Message {
	var out []surfacetest.Message
	for _, e := range s.entries() {
		card := strings.HasPrefix(e.header, "card ") && strings.Contains(e.header, " for "+target+" (") &&
			!strings.Contains(e.header, " in the thread of ")
		if card || strings.HasPrefix(e.header, "notice for "+target+" ") {
			out = append(out, e.message())
		}
	}
	return out
}

func (s *stream) Fail(surfacetest.Op, surfacetest.Failure, threads.PostRef) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = true
	return 0
}

func (*stream) Secrets() []string { return nil }
