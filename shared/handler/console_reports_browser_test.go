package handler

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/handler/consoleauth"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// TestReportsInABrowser: the owner opens 报表 from the top bar for the
// report day's range and finds, at phone and desktop width, one bar per day
// whose heights follow the days' net takings, the totals, the technicians
// and services, and a CSV link her session downloads; without a range the
// page covers the last 31 days to today (31 bars); the day page shows the
// day's takings in one line. A staff member has neither the tab, the page
// (403) nor the day's takings.
func TestReportsInABrowser(t *testing.T) {
	s := newSystem(t)
	r := s.reportDay()
	owner := newBrowser(t, s)
	if st := owner.signIn(testAdmin); st != http.StatusOK {
		t.Fatalf("owner sign-in: %d", st)
	}
	if owner.count(`nav a[href="report"]`) != 1 {
		t.Fatal("the owner has no 报表 tab")
	}
	if st := owner.open("report?from=" + r.from + "&to=" + r.to); st != http.StatusOK {
		t.Fatalf("report: %d", st)
	}
	nets := []string{"6000", "6000", "31600"}
	for _, width := range []int64{390, 1280} {
		if err := chromedp.Do(owner.timed(), chromedp.EmulateViewport(width, 844)); err != nil {
			t.Fatal(err)
		}
		if n := owner.count("#chart rect.bar"); n != len(nets) {
			t.Fatalf("%d px: %d bars, want %d", width, n, len(nets))
		}
		for i, want := range nets {
			if got := owner.attr("#chart rect.bar:nth-of-type("+itoa64(int64(i+1))+")", "data-net"); got != want {
				t.Errorf("%d px: bar %d net %s, want %s", width, i, got, want)
			}
		}
		// Drawn on the screen: each bar as tall as its day's net, relative to
		// the tallest, and inside the page's width.
		heights := eval[[]float64](owner, `[...document.querySelectorAll("#chart rect.bar")].map(b => b.getBoundingClientRect().height)`)
		if len(heights) != 3 || heights[2] < 100 || heights[0] < heights[2]*6000/31600-2 || heights[0] > heights[2]*6000/31600+2 || heights[0] != heights[1] {
			t.Errorf("%d px: bar heights %v, want in the ratio 6000:6000:31600", width, heights)
		}
		if right := eval[float64](owner, `document.querySelector("#chart").getBoundingClientRect().right`); right > float64(width) {
			t.Errorf("%d px: the chart ends at %.0f px", width, right)
		}
		if w := eval[float64](owner, `document.documentElement.scrollWidth`); w > float64(width) {
			t.Errorf("%d px: the page is %.0f px wide", width, w)
		}
	}
	for sel, want := range map[string]string{
		"#net": "¥436.00", "#online": "¥120.00", "#shop": "¥396.00", "#refunded": "¥80.00", "#kept": "¥60.00",
		"#noshow-rate":                       "33.3%",
		"#techs tbody tr:nth-child(1) .name": "小丽", "#techs tbody tr:nth-child(1) .takings": "¥248.00",
		"#techs tbody tr:nth-child(2) .name": "小美", "#techs tbody tr:nth-child(2) .takings": "¥128.00",
		"#services tbody tr:nth-child(1) .name": "延长甲", "#services tbody tr:nth-child(1) .takings": "¥248.00",
		"#services tbody tr:nth-child(2) .name": "单色美甲", "#services tbody tr:nth-child(2) .takings": "¥128.00",
	} {
		if got := owner.text(sel); got != want {
			t.Errorf("%s: %q, want %q", sel, got, want)
		}
	}
	if got := owner.text("#counts"); !strings.Contains(got, "7 个") || !strings.Contains(got, "逾时 2") {
		t.Errorf("counts %q", got)
	}
	owner.shot("reports")

	// The CSV link, downloaded with the browser's session cookie (the
	// console's Content-Security-Policy forbids its pages to fetch, so the
	// download is made beside the browser, as apiStatus does).
	href := owner.attr("#csv", "href")
	if href != "reports.csv?from="+r.from+"&to="+r.to {
		t.Errorf("csv link %q", href)
	}
	if !eval[bool](owner, `document.querySelector("#csv").hasAttribute("download")`) {
		t.Error("the csv link does not download")
	}
	cookies, err := chromedp.Call(owner.timed(), network.GetCookies, network.GetCookiesParams{})
	if err != nil {
		t.Fatal(err)
	}
	session := ""
	for _, c := range cookies.Cookies {
		if c.Name == consoleauth.CookieName {
			session = c.Name + "=" + c.Value
		}
	}
	a := s.call("GET", "/admin/"+href, "", nil, "Cookie", session)
	if a.Status != http.StatusOK || a.Header.Get("Content-Disposition") != `attachment; filename="bookings-`+r.from+`-`+r.to+`.csv"` ||
		strings.Count(string(a.Body), "\n") != 8 || !strings.Contains(string(a.Body), `"'=HYPERLINK(""a"",""b"")"`) {
		t.Errorf("csv with the session: %d %q\n%s", a.Status, a.Header.Get("Content-Disposition"), a.Body)
	}

	// Without a range: the last 31 days to today.
	if st := owner.open("report"); st != http.StatusOK {
		t.Fatalf("report: %d", st)
	}
	today := time.Now().In(r.m.loc)
	if n := owner.count("#chart rect.bar"); n != 31 {
		t.Errorf("default range: %d bars, want 31", n)
	}
	if from, to := owner.attr(`#range input[name="from"]`, "value"), owner.attr(`#range input[name="to"]`, "value"); to != today.Format(time.DateOnly) && to != today.AddDate(0, 0, -1).Format(time.DateOnly) ||
		from != mustDate(t, to).AddDate(0, 0, -30).Format(time.DateOnly) {
		t.Errorf("default range %s..%s", from, to)
	}
	// A range the page refuses.
	if st := owner.open("report?from=" + r.to + "&to=" + r.from); st != http.StatusBadRequest {
		t.Errorf("a reversed range: %d", st)
	}

	// The day page's takings.
	if st := owner.open("?date=" + r.to); st != http.StatusOK {
		t.Fatalf("day: %d", st)
	}
	if got, want := owner.text("#takings"), "收入 线上 ¥0.00 · 到店 ¥396.00 · 退款 ¥80.00 · 净额 ¥316.00"; got != want {
		t.Errorf("day takings %q, want %q", got, want)
	}
	owner.shot("reports-day")

	// A staff member: no tab, no page, no takings.
	createStaff(t, s.svc(), "小美", booking.RoleStaff)
	cookie, _ := s.consoleSignInAs("小美", techPassword)
	if resp := s.consoleGet("/admin/report", cookie); resp.StatusCode != http.StatusForbidden {
		t.Errorf("staff report page: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodGet, s.gw.URL+"/admin/?date="+r.to, nil)
	req.Header.Set("Cookie", cookie)
	if a := s.send(req); a.Status != http.StatusOK || strings.Contains(string(a.Body), `id="takings"`) || strings.Contains(string(a.Body), `href="report"`) {
		t.Errorf("staff day page: %d, takings or 报表 tab shown", a.Status)
	}
}

func mustDate(t *testing.T, s string) time.Time {
	t.Helper()
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
