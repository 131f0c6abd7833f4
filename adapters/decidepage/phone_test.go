package decidepage_test

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"approvalsbot/tenant"
)

// The phone the layout is checked on: an iPhone-sized viewport, in CSS
// pixels, at three device pixels to one.
const (
	phoneWidth  = 390
	phoneHeight = 844
	// callWithin is how far down the first screen the call's function
	// name may start: the call comes first, under at most the page's
	// lead and the card's status line, within the screen's top quarter
	// (211 px, issue 30's "about 200").
	callWithin = phoneHeight / 4
	// minTarget is the least height (and width) of a control, in CSS
	// pixels (WCAG 2.5.5, Apple's and Android's guidance).
	minTarget = 44
	// minContrast is the least contrast of any text with its background
	// (WCAG 1.4.3's ratio for normal text, held for large text too).
	minContrast = 4.5
)

// headless starts Chromium for the test, or skips the test where it is
// not installed; the context's tab is the test's.
func headless(t *testing.T) context.Context {
	t.Helper()
	browser, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (Debian's chromium package; .ci/run installs it): the browser test cannot run")
	}
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true))
	alloc, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	t.Cleanup(cancelAlloc)
	browserCtx, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(browserCtx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start the browser: %v", err)
	}
	return browserCtx
}

// phoneLayout is what layoutScript measures of a page on the phone, in
// CSS pixels relative to the viewport.
type phoneLayout struct {
	Screen, Viewport struct{ Width, Height float64 }
	// ScrollWidth is the document's; more than the viewport's width
	// scrolls sideways.
	ScrollWidth float64
	// LoadScrollY is where the page stood once loaded (and autofocused),
	// before the script scrolled it to the top.
	LoadScrollY float64
	// Top and Middle: the page scrolled to the top, and halfway down.
	Top, Middle struct {
		ScrollY float64
		Answers *box
		// Buttons are the answer bar's controls, in document order.
		Buttons []box
	}
	// Function is the card's h1; Status its status line; Effect the
	// line whose text is the effect the test expects (nil: none).
	Function, Status, Effect *box
	// Focused is the id of document.activeElement ("" for the body).
	Focused string
	// Targets are every control the page offers (buttons, inputs, text
	// areas, and links standing on their own: a link inside a sentence
	// is sized by the sentence, as WCAG 2.5.5 allows).
	Targets []box
	// Texts are every element that shows text of its own, with the
	// contrast of its colour against the background it stands on.
	Texts []shade
}

type box struct {
	ID, Tag, Text            string
	Top, Bottom, Left, Right float64
	Width, Height            float64
}

type shade struct {
	Text, Color, Background string
	FontSize                string
	Ratio                   float64
}

// layoutScript measures the page (a phoneLayout); %q is the expected
// effect line.
const layoutScript = `(() => {
const effect = %q;
const round = v => Math.round(v * 100) / 100;
const box = e => {
	if (!e) return null;
	const r = e.getBoundingClientRect();
	return {id: e.id, tag: e.tagName.toLowerCase(), text: (e.innerText || e.value || "").trim().slice(0, 80),
		top: round(r.top), bottom: round(r.bottom), left: round(r.left), right: round(r.right),
		width: round(r.width), height: round(r.height)};
};
const shown = e => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden";
const bar = () => {
	const f = document.getElementById("answers");
	return {scrollY: window.scrollY, answers: box(f),
		buttons: f ? [...f.querySelectorAll("button, a[href]")].filter(shown).map(box) : []};
};
const out = {screen: {width: screen.width, height: screen.height},
	viewport: {width: window.innerWidth, height: window.innerHeight},
	scrollWidth: document.documentElement.scrollWidth, loadScrollY: window.scrollY};
window.scrollTo(0, 0);
out.top = bar();
const card = document.getElementById("card");
out.function = box(card && card.querySelector("h1"));
out.status = box(card && card.querySelector("p"));
out.effect = box(card && [...card.querySelectorAll("p")].find(p => p.innerText.trim() === effect));
const a = document.activeElement;
out.focused = a && a !== document.body ? a.id || a.tagName.toLowerCase() : "";
out.targets = [...document.querySelectorAll("button, input:not([type=hidden]), textarea, select, a[href]")]
	.filter(shown)
	.filter(e => e.tagName !== "A" || getComputedStyle(e).display !== "inline")
	.map(box);

// WCAG 2.x relative luminance and contrast ratio.
const rgba = s => {
	const m = s.match(/rgba?\(([^)]+)\)/);
	if (!m) return null;
	const v = m[1].split(/[ ,\/]+/).filter(x => x).map(Number);
	return {r: v[0], g: v[1], b: v[2], a: v.length > 3 ? v[3] : 1};
};
const over = (c, bg) => ({r: c.r * c.a + bg.r * (1 - c.a), g: c.g * c.a + bg.g * (1 - c.a),
	b: c.b * c.a + bg.b * (1 - c.a), a: 1});
const lin = c => { c /= 255; return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4); };
const lum = c => 0.2126 * lin(c.r) + 0.7152 * lin(c.g) + 0.0722 * lin(c.b);
// The background an element's text stands on: the first background
// colour that is not transparent up its ancestors, blended over the
// ones behind it, over the canvas's white.
const background = e => {
	const layers = [];
	for (let n = e; n && n.nodeType === 1; n = n.parentElement) {
		const c = rgba(getComputedStyle(n).backgroundColor);
		if (c && c.a > 0) {
			layers.push(c);
			if (c.a >= 1) break;
		}
	}
	let bg = {r: 255, g: 255, b: 255, a: 1};
	for (const c of layers.reverse()) bg = over(c, bg);
	return bg;
};
const css = c => "rgb(" + [c.r, c.g, c.b].map(Math.round).join(", ") + ")";
out.texts = [];
for (const e of document.body.querySelectorAll("*")) {
	if (!shown(e) || ["SCRIPT", "STYLE", "TITLE", "META"].includes(e.tagName)) continue;
	let own = [...e.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join("").trim();
	if (e.tagName === "TEXTAREA" || e.tagName === "INPUT") own = (e.value || e.placeholder || "").trim();
	if (!own) continue;
	const st = getComputedStyle(e);
	const bg = background(e);
	const fg = over(rgba(st.color), bg);
	const [l1, l2] = [lum(fg), lum(bg)].sort((x, y) => y - x);
	out.texts.push({text: own.slice(0, 80), color: st.color, background: css(bg), fontSize: st.fontSize,
		ratio: round((l1 + 0.05) / (l2 + 0.05))});
}

window.scrollTo(0, (document.documentElement.scrollHeight - window.innerHeight) / 2);
out.middle = bar();
window.scrollTo(0, 0);
return out;
})()`

// TestPhoneLayout: on a 390 px phone, in headless Chromium, each page a
// member decides on (a destructive call's, whose Deny comes first and
// takes the focus; a read-only call's, whose Approve comes first; and
// the page that asks again before a destructive call's Approve) shows
// the call's function name and its status and effect lines on the first
// screen, above the answer bar; keeps the answers on the screen at the
// top and halfway down; offers no control less than 44 px tall; shows
// every text at 4.5:1 contrast or more; and does not scroll sideways.
// All of it read from the DOM, not from pixels.
func TestPhoneLayout(t *testing.T) {
	ctx := headless(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	publicURL := "http://" + ln.Addr().String()
	p := newPageSetUp(t, pageSetup{config: strings.ReplaceAll(pageConfig, "EMAIL_DECISIONS", tenant.EmailDecisionsApprove),
		publicURL: publicURL, listener: ln})
	p.ingest("merge.json")  // DESTRUCTIVE: Deny first
	p.ingest("search.json") // reads only: Approve first
	p.drain()
	open := func(t *testing.T, id string) context.Context {
		t.Helper()
		tab, cancel := chromedp.NewContext(ctx)
		t.Cleanup(cancel)
		u, err := url.Parse(p.link("acme", id, 1, "user:kevin", "approve"))
		if err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(tab,
			chromedp.EmulateViewport(phoneWidth, phoneHeight, chromedp.EmulateScale(3), chromedp.EmulateMobile,
				chromedp.EmulatePortrait, chromedp.EmulateTouch),
			chromedp.Navigate(publicURL+u.Path), chromedp.WaitVisible(chromedp.CSS("#answers button"))); err != nil {
			t.Fatalf("open %s's page: %v", id, err)
		}
		return tab
	}

	cases := []struct {
		name, id, effect string
		// askAgain: press Approve, and check the page that asks again.
		askAgain bool
		// bar is the answer bar's controls, in order; focused, the one
		// that has the focus ("" for none).
		bar     []string
		focused string
	}{
		{name: "destructive", id: "a-merge1", effect: "DESTRUCTIVE · reaches outside the tenant",
			bar: []string{"deny", "approve"}, focused: "deny"},
		{name: "read only", id: "a-search1", effect: "reads only · reaches outside the tenant",
			bar: []string{"approve", "deny"}},
		{name: "ask again", id: "a-merge1", effect: "DESTRUCTIVE · reaches outside the tenant", askAgain: true,
			bar: []string{"cancel", "approve"}, focused: "cancel"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tab := open(t, tc.id)
			if tc.askAgain {
				if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS("#approve")),
					chromedp.WaitVisible(chromedp.CSS("#cancel"))); err != nil {
					t.Fatalf("press Approve: %v", err)
				}
				if n := len(p.fake.Decisions()); n != 0 {
					t.Fatalf("asking again sent %d decisions", n)
				}
			}
			if tc.focused != "" {
				// autofocus applies at the page's next frame.
				if _, err := chromedp.Run(tab, chromedp.Poll[bool](fmt.Sprintf(
					`document.activeElement !== null && document.activeElement.id === %q`, tc.focused),
					chromedp.WithPollingTimeout(5*time.Second))); err != nil {
					t.Errorf("#%s never takes the focus: %v", tc.focused, err)
				}
			}
			got, err := chromedp.Run(tab, chromedp.Evaluate[phoneLayout](fmt.Sprintf(layoutScript, tc.effect)))
			if err != nil {
				t.Fatalf("measure the page: %v", err)
			}
			checkPhone(t, got, tc.bar, tc.focused)
		})
	}
}

// checkPhone checks the layout measured of one page; bar is the answer
// bar's controls in order, focused the one with the focus.
func checkPhone(t *testing.T, got phoneLayout, bar []string, focused string) {
	t.Helper()
	if got.Screen.Width != phoneWidth || got.Screen.Height != phoneHeight {
		t.Fatalf("the screen is %vx%v, want %dx%d", got.Screen.Width, got.Screen.Height, phoneWidth, phoneHeight)
	}
	// A page wider than the phone scrolls sideways, or the phone shows
	// it zoomed out (a wider viewport) at a size too small to read.
	if w := max(got.ScrollWidth, got.Viewport.Width); w > phoneWidth || got.Viewport.Height != phoneHeight {
		t.Fatalf("the page is %v px wide (the viewport %vx%v): wider than the %d px phone", got.ScrollWidth,
			got.Viewport.Width, got.Viewport.Height, phoneWidth)
	}
	if got.LoadScrollY != 0 {
		t.Errorf("the page opens scrolled %v px down: the call is not what a member sees first", got.LoadScrollY)
	}
	if got.Top.Answers == nil {
		t.Fatal("the page has no answer bar (#answers)")
	}

	// The call's fixed lines on the first screen, above the answer bar.
	barTop := got.Top.Answers.Top
	for _, l := range []struct {
		what string
		b    *box
	}{{"the function name (h1)", got.Function}, {"the status line", got.Status}, {"the effect line", got.Effect}} {
		switch {
		case l.b == nil:
			t.Errorf("the card shows no %s", l.what)
		case l.b.Top < 0 || l.b.Bottom > barTop:
			t.Errorf("%s %q is at %v–%v px: not on the first screen above the answer bar (from %v px)",
				l.what, l.b.Text, l.b.Top, l.b.Bottom, barTop)
		}
	}
	if got.Function != nil && got.Function.Top > callWithin {
		t.Errorf("the function name starts %v px down the first screen, want within %d px", got.Function.Top, callWithin)
	}

	// The answers in reach at the top and halfway down.
	for _, at := range []struct {
		where string
		bar   *box
		btns  []box
	}{{"at the top", got.Top.Answers, got.Top.Buttons}, {"halfway down", got.Middle.Answers, got.Middle.Buttons}} {
		if at.bar == nil {
			continue
		}
		var ids []string
		for _, b := range at.btns {
			ids = append(ids, b.ID)
			if b.Top < 0 || b.Bottom > phoneHeight || b.Left < 0 || b.Right > phoneWidth {
				t.Errorf("%s, #%s is at (%v, %v)–(%v, %v): not inside the %dx%d screen", at.where, b.ID,
					b.Left, b.Top, b.Right, b.Bottom, phoneWidth, phoneHeight)
			}
		}
		if !slices.Equal(ids, bar) {
			t.Errorf("%s, the answer bar offers %q, want %q in that order", at.where, ids, bar)
		}
		// Shown side by side: the first in the document is the first
		// on the screen too.
		for i := 1; i < len(at.btns); i++ {
			if at.btns[i].Left < at.btns[i-1].Right && at.btns[i].Top < at.btns[i-1].Bottom {
				t.Errorf("%s, #%s does not come after #%s on the screen", at.where, at.btns[i].ID, at.btns[i-1].ID)
			}
		}
	}
	t.Logf("function name at %v px, answer bar from %v px; halfway down (scrolled %v px) from %v px",
		got.Function.Top, barTop, got.Middle.ScrollY, got.Middle.Answers.Top)

	if got.Focused != focused {
		t.Errorf("the focus is on %q, want %q", got.Focused, focused)
	}

	for _, b := range got.Targets {
		if b.Height < minTarget || b.Width < minTarget {
			t.Errorf("<%s id=%q> %q is %vx%v px: a target is at least %d px each way", b.Tag, b.ID, b.Text,
				b.Width, b.Height, minTarget)
		}
	}
	if len(got.Targets) < len(bar) {
		t.Errorf("only %d targets measured", len(got.Targets))
	}

	for _, s := range got.Texts {
		if s.Ratio < minContrast {
			t.Errorf("%q (%s, %s on %s) has contrast %.2f:1, want %.1f:1", s.Text, s.FontSize, s.Color, s.Background,
				s.Ratio, minContrast)
		}
	}
	if len(got.Texts) < 10 {
		t.Errorf("only %d texts measured", len(got.Texts))
	}
}
