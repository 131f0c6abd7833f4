package templates_test

import (
	"testing"

	"approvalsbot/approval"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// BenchmarkRender builds and renders one card per iteration, for each
// surface (the chats' are their adapters' BenchmarkCardMessage and
// BenchmarkRenderCard):
// go test ./templates -run '^$' -bench Render -benchmem -cpu 1.
// With -cpu 1, cpu-ns/op is the process's CPU time per card, which stays
// honest on a busy machine where ns/op (wall time) does not.
func BenchmarkRender(b *testing.B) {
	r := newRenderer(b)
	for _, name := range []string{"merge.json", "big.json", "question.json"} {
		a := templatestest.Approval(b, name)
		at, ladder := templatestest.Pinned(a)
		in, err := templates.PreviewInput(a, "pending", at, ladder)
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range []struct {
			name   string
			render func(templates.Card)
		}{
			{"email", func(c templates.Card) { _ = r.Email(c) }},
			{"text", func(c templates.Card) { _ = r.Text(c) }},
		} {
			b.Run(fixtureName(name)+"/"+s.name, func(b *testing.B) {
				b.ReportAllocs()
				start, ok := cpuTime()
				for b.Loop() {
					s.render(templates.Build(in))
				}
				if end, _ := cpuTime(); ok && b.N > 0 {
					b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
				}
			})
		}
	}
}

// BenchmarkBuild is the model alone, which every surface shares.
func BenchmarkBuild(b *testing.B) {
	for _, name := range []string{"merge.json", "big.json", "question.json"} {
		a := templatestest.Approval(b, name)
		b.Run(fixtureName(name), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = templates.Build(templates.Input{Approval: a, State: approval.StatePending})
			}
		})
	}
}
