package handler

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/wechatbill"
)

// TestConsoleHealthShowsBills: in a real browser, the owner's health page
// lists the last days' reconciliation with WeChat Pay's bill, a difference in
// the salon's words with what to do; a staff member's does not show it.
func TestConsoleHealthShowsBills(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	b := newBrowser(t, s)
	twoDaysAgo := wechatbill.DateOf(time.Now().Add(-48 * time.Hour))
	yesterday := wechatbill.DateOf(time.Now().Add(-24 * time.Hour))

	// Two days ago: no trade on either side (matched). Yesterday: the ledger
	// has a payment WeChat's bill lacks, and WeChat was down at first.
	if a := s.call("POST", "/admin/reconciliation", testAdmin, map[string]any{"date": twoDaysAgo}); a.JSON["status"] != "matched" {
		t.Fatalf("two days ago: %d %s", a.Status, a.Body)
	}
	if _, err := s.store.SQL().Exec(`INSERT INTO t_money (book_id, kind, amount_fen, method, out_trade_no, transaction_id, actor, created_at)
		VALUES (1, 'deposit', 5000, 'wechatpay', 'BK000000000001', '4200000001', 'wechatpay', UTC_TIMESTAMP(6) - INTERVAL 1 DAY)`); err != nil {
		t.Fatal(err)
	}
	if a := s.call("POST", "/admin/reconciliation", testAdmin, map[string]any{"date": yesterday}); a.JSON["status"] != "differences" {
		t.Fatalf("yesterday: %d %s", a.Status, a.Body)
	}

	if st := b.signIn(testAdmin); st != http.StatusOK {
		t.Fatalf("sign-in: %d", st)
	}
	b.open("health")
	if n := b.count("#bills > li"); n != 2 {
		t.Fatalf("%d bill days shown, want 2", n)
	}
	if got := b.attr("#bills > li", "data-date"); got != yesterday {
		t.Errorf("the newest day first: %q, want %s", got, yesterday)
	}
	if got := b.text(`#bills li[data-date="` + twoDaysAgo + `"] .summary`); !strings.HasPrefix(got, "对上了") {
		t.Errorf("the matched day says %q", got)
	}
	got := b.text(`#bills li[data-date="` + yesterday + `"] li[data-kind="missing_in_bill"]`)
	if !strings.Contains(got, "系统记了这笔收款（商户订单号 BK000000000001，¥50.00），微信账单里没有") || !strings.Contains(got, "在微信支付商户平台按单号查询") {
		t.Errorf("the difference says %q", got)
	}
	b.shot("health-bills")

	// A staff member's health page has no bills: the money is the owner's.
	createStaff(t, s.svc(), "小美", booking.RoleStaff)
	staff := newBrowser(t, s)
	if st := staff.signInAs("小美", techPassword); st != http.StatusOK {
		t.Fatalf("staff sign-in: %d", st)
	}
	staff.open("health")
	if n := staff.count("#bills"); n != 0 {
		t.Errorf("a staff member sees the bills")
	}
}
