package handler

import (
	"net/http"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/handler/consoleauth"
	"salon/shared/wechatbill"
)

// TestAdminReconciliation: the owner reads a day never run (not_yet), runs
// yesterday (the simulator's bill of a payment the ledger has, over the
// gateway and the contract), plants a difference and runs it again; today is
// not_yet without asking WeChat, a future or malformed date 400; a staff
// member is refused (403) and nothing is recorded by her.
func TestAdminReconciliation(t *testing.T) {
	t.Parallel()
	s := newSystem(t)
	yesterday := wechatbill.DateOf(time.Now().Add(-24 * time.Hour))

	a := s.call("GET", "/admin/reconciliation?date="+yesterday, testAdmin, nil)
	if a.Status != http.StatusOK || a.JSON["status"] != "not_yet" || a.JSON["date"] != yesterday || len(a.JSON["differences"].([]any)) != 0 {
		t.Fatalf("never run: %d %s", a.Status, a.Body)
	}
	// WeChat has no bill of yesterday, the ledger no row: matched, 0 rows.
	a = s.call("POST", "/admin/reconciliation", testAdmin, map[string]any{"date": yesterday})
	if a.Status != http.StatusOK || a.JSON["status"] != "matched" || a.JSON["billRows"] != float64(0) {
		t.Fatalf("no trade: %d %s", a.Status, a.Body)
	}

	// A ledger row WeChat's bill does not have, put in as 0023 describes it.
	if _, err := s.store.SQL().Exec(`INSERT INTO t_money (book_id, kind, amount_fen, method, out_trade_no, transaction_id, actor, created_at)
		VALUES (1, 'deposit', 5000, 'wechatpay', 'BK000000000001', '4200000001', 'wechatpay', UTC_TIMESTAMP(6) - INTERVAL 1 DAY)`); err != nil {
		t.Fatal(err)
	}
	date := yesterday
	a = s.call("POST", "/admin/reconciliation", testAdmin, map[string]any{"date": date})
	diffs, _ := a.JSON["differences"].([]any)
	if a.Status != http.StatusOK || a.JSON["status"] != "differences" || len(diffs) != 1 {
		t.Fatalf("a row missing in the bill: %d %s", a.Status, a.Body)
	}
	d := diffs[0].(map[string]any)
	if d["kind"] != "missing_in_bill" || d["outTradeNo"] != "BK000000000001" || d["outRefundNo"] != nil || d["oursFen"] != float64(5000) || d["theirsFen"] != nil {
		t.Fatalf("difference: %v", d)
	}
	if g := s.call("GET", "/admin/reconciliation?date="+date, testAdmin, nil); g.Status != http.StatusOK || g.JSON["status"] != "differences" {
		t.Fatalf("kept: %d %s", g.Status, g.Body)
	}

	// WeChat down: 200 with a failed day, recorded; back: differences again.
	s.sim.FailNext("/v3/bill/", http.StatusInternalServerError, "SYSTEM_ERROR", 1)
	if a := s.call("POST", "/admin/reconciliation", testAdmin, map[string]any{"date": date}); a.Status != http.StatusOK || a.JSON["status"] != "failed" || a.JSON["billRows"] != float64(0) {
		t.Fatalf("WeChat down: %d %s", a.Status, a.Body)
	}
	if g := s.call("GET", "/admin/reconciliation?date="+date, testAdmin, nil); g.JSON["status"] != "failed" {
		t.Fatalf("failed kept: %d %s", g.Status, g.Body)
	}

	today := wechatbill.DateOf(time.Now())
	if a := s.call("POST", "/admin/reconciliation", testAdmin, map[string]any{"date": today}); a.Status != http.StatusOK || a.JSON["status"] != "not_yet" {
		t.Fatalf("today: %d %s", a.Status, a.Body)
	}
	tomorrow := wechatbill.DateOf(time.Now().Add(24 * time.Hour))
	for _, body := range []any{
		map[string]any{"date": tomorrow},
		map[string]any{"date": "2026-02-30"},
		map[string]any{"date": nil},
		map[string]any{},
		map[string]any{"date": yesterday, "extra": 1},
	} {
		s.wantError(s.call("POST", "/admin/reconciliation", testAdmin, body), 400, booking.EBADREQUEST)
	}
	s.wantError(s.call("GET", "/admin/reconciliation", testAdmin, nil), 400, booking.EBADREQUEST)
	s.wantError(s.call("GET", "/admin/reconciliation?date=yesterday", testAdmin, nil), 400, booking.EBADREQUEST)
	s.wantError(s.call("GET", "/admin/reconciliation?date="+yesterday, "", nil), 401, booking.EUNAUTHORIZED)

	createStaff(t, s.svc(), "小美", booking.RoleStaff)
	cookie, csrf := s.consoleSignInAs("小美", techPassword)
	before := s.countRows("t_bill_day")
	s.wantError(s.call("GET", "/admin/reconciliation?date="+yesterday, "", nil, "Cookie", cookie, consoleauth.CSRFHeader, csrf), 403, booking.EFORBIDDEN)
	s.wantError(s.call("POST", "/admin/reconciliation", "", map[string]any{"date": yesterday}, "Cookie", cookie, consoleauth.CSRFHeader, csrf), 403, booking.EFORBIDDEN)
	if s.countRows("t_bill_day") != before {
		t.Fatal("a staff member's refused run recorded a day")
	}
}
