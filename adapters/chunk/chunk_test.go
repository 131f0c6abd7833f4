package chunk

import (
	"strings"
	"testing"

	"approvalsbot/internal/utf16text"
)

func TestFenceLeavesNoClosingFence(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"```", "a ``` b ```` c", "``", "`x`", "``````"} {
		got := Fence(in)
		if strings.Contains(got, "```") {
			t.Errorf("Fence(%q) = %q keeps a run", in, got)
		}
		if strings.ReplaceAll(got, "\u200b", "") != in {
			t.Errorf("Fence(%q) = %q changes more than the runs", in, got)
		}
	}
}

func TestLines(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("line of text\n", 300) + strings.Repeat("y", 3000)
	chunks := Lines(text, 2000)
	total := 0
	for _, c := range chunks {
		if utf16text.Len(c) > 2000 {
			t.Fatalf("chunk of %d", utf16text.Len(c))
		}
		if strings.HasPrefix(c, "\n") {
			t.Fatalf("a chunk starts with a line break: %q", c[:20])
		}
		total += strings.Count(c, "line of text")
	}
	if total != 300 || !strings.HasSuffix(chunks[len(chunks)-1], "…") {
		t.Fatalf("%d lines kept; last chunk %q", total, chunks[len(chunks)-1][:20])
	}
	if got := Lines("a\nb", 10); len(got) != 1 || got[0] != "a\nb" {
		t.Fatalf("short text: %q", got)
	}
}

func TestCodeKeepsEveryCharacterWithinLimits(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("<&>", 2000) // one line of 6,000
	text := "{\n  \"a\": \"```\",\n  \"b\": \"" + long + "\",\n  \"c\": \"é😀\"\n}\n"
	for _, max := range []int{10, 100, 3000} {
		chunks := Code(text, max)
		var joined strings.Builder
		for _, piece := range chunks {
			if n := utf16text.Len(piece); n > max || n == 0 {
				t.Fatalf("max %d: chunk of %d characters", max, n)
			}
			if strings.Contains(piece, "```") {
				t.Fatalf("max %d: a chunk can close its code block: %q", max, piece)
			}
			joined.WriteString(piece)
		}
		if got := strings.ReplaceAll(joined.String(), "\u200b", ""); got != text {
			t.Fatalf("max %d: chunks lose text", max)
		}
	}
}

func TestCodeCutsAtLineEndsWhereLinesFit(t *testing.T) {
	t.Parallel()
	chunks := Code("aaaa\nbbbb\ncccc\n", 10)
	want := []string{"aaaa\nbbbb\n", "cccc\n"}
	if len(chunks) != len(want) {
		t.Fatalf("chunks %q, want %q", chunks, want)
	}
	for i := range want {
		if chunks[i] != want[i] {
			t.Fatalf("chunks %q, want %q", chunks, want)
		}
	}
	if got := Code("", 10); len(got) != 0 {
		t.Fatalf("empty text: %q", got)
	}
}

// TestSplitKeepsEveryCharacterAndAddsNone: the pieces join to the text
// exactly (backticks and zero width spaces untouched), each within max,
// cut at a line end when the line fits.
func TestSplitKeepsEveryCharacterAndAddsNone(t *testing.T) {
	text := "{\n  \"a\": \"```x```\",\n  \"b\": \"" + strings.Repeat("é😀", 40) + "\"\n}\n"
	for _, max := range []int{5, 16, 64, 1000} {
		pieces := Split(text, max)
		if got := strings.Join(pieces, ""); got != text {
			t.Fatalf("max %d: pieces join to %q, want %q", max, got, text)
		}
		for _, p := range pieces {
			if utf16text.Len(p) > max || p == "" {
				t.Fatalf("max %d: piece %q of %d characters", max, p, utf16text.Len(p))
			}
		}
	}
	if got := Split("ab\ncd\n", 4); len(got) != 2 || got[0] != "ab\n" || got[1] != "cd\n" {
		t.Fatalf("lines that fit were cut: %q", got)
	}
	if Split("", 10) != nil {
		t.Fatal("pieces of no text")
	}
}
