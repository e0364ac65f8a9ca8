package wechatbill_test

import (
	"reflect"
	"testing"
	"time"

	"salon/shared/wechatbill"
)

func TestMatch(t *testing.T) {
	shanghai := time.FixedZone("CST", 8*3600)
	start := time.Date(2026, 12, 3, 0, 0, 0, 0, shanghai)
	w := wechatbill.Window{Start: start, End: start.AddDate(0, 0, 1)}
	at := func(h, m, s int) time.Time {
		return start.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(s)*time.Second)
	}
	pay := func(no string, fen int64, when time.Time) wechatbill.Line {
		return wechatbill.Line{TradeTime: when, OutTradeNo: no, TradeState: "SUCCESS", SettlementFen: fen, FeeFen: fen * 6 / 1000}
	}
	ref := func(no, refundNo string, fen int64, when time.Time) wechatbill.Line {
		return wechatbill.Line{TradeTime: when, OutTradeNo: no, OutRefundNo: refundNo, TradeState: "REFUND", RefundFen: fen, FeeFen: -fen * 6 / 1000}
	}
	dep := func(no string, fen int64, when time.Time) wechatbill.LedgerRow {
		return wechatbill.LedgerRow{Kind: "deposit", OutTradeNo: no, AmountFen: fen, At: when}
	}
	back := func(no, refundNo string, fen int64, when time.Time) wechatbill.LedgerRow {
		return wechatbill.LedgerRow{Kind: "refund", OutTradeNo: no, OutRefundNo: refundNo, AmountFen: fen, At: when}
	}
	fen := func(v int64) *int64 { return &v }

	tests := []struct {
		name        string
		lines       []wechatbill.Line
		rows        []wechatbill.LedgerRow
		earlier     []wechatbill.Line
		matched     int
		diffs       []wechatbill.Difference
		needEarlier bool
	}{
		{name: "every line has its row", lines: []wechatbill.Line{pay("SL1", 5000, at(10, 0, 0)), ref("SL1", "RF1", 5000, at(11, 0, 0))},
			rows: []wechatbill.LedgerRow{dep("SL1", 5000, at(10, 0, 1)), back("SL1", "RF1", 5000, at(11, 0, 2))}, matched: 2},
		{name: "nothing on either side", matched: 0},
		{name: "a line with no row", lines: []wechatbill.Line{pay("SL1", 5000, at(10, 0, 0))},
			diffs: []wechatbill.Difference{{OutTradeNo: "SL1", Kind: "missing_here", TheirsFen: fen(5000)}}},
		{name: "a refund line with no row", lines: []wechatbill.Line{ref("SL1", "RF1", 5000, at(10, 0, 0))},
			diffs: []wechatbill.Difference{{OutTradeNo: "SL1", OutRefundNo: "RF1", Kind: "missing_here", TheirsFen: fen(5000)}}},
		{name: "a row with no line", rows: []wechatbill.LedgerRow{dep("SL2", 8000, at(12, 0, 0))},
			diffs: []wechatbill.Difference{{OutTradeNo: "SL2", Kind: "missing_in_bill", OursFen: fen(8000)}}},
		{name: "amounts differ", lines: []wechatbill.Line{pay("SL1", 5000, at(10, 0, 0))}, rows: []wechatbill.LedgerRow{dep("SL1", 4900, at(10, 0, 1))},
			diffs: []wechatbill.Difference{{OutTradeNo: "SL1", Kind: "amount", OursFen: fen(4900), TheirsFen: fen(5000)}}},
		{name: "a payment and a refund of one order are told apart", lines: []wechatbill.Line{pay("SL1", 5000, at(10, 0, 0))},
			rows: []wechatbill.LedgerRow{dep("SL1", 5000, at(10, 0, 1)), back("SL1", "RF1", 5000, at(13, 0, 0))}, matched: 1,
			diffs: []wechatbill.Difference{{OutTradeNo: "SL1", OutRefundNo: "RF1", Kind: "missing_in_bill", OursFen: fen(5000)}}},
		{name: "taken at 23:59:59, written at 00:00:01 the next day", lines: []wechatbill.Line{pay("SL1", 5000, at(23, 59, 59))},
			rows: []wechatbill.LedgerRow{dep("SL1", 5000, at(24, 0, 1))}, matched: 1},
		{name: "a row written just after midnight of the next day is not this day's", rows: []wechatbill.LedgerRow{dep("SL9", 5000, at(24, 0, 1))}},
		{name: "a row written just before midnight the day before is not this day's", rows: []wechatbill.LedgerRow{dep("SL9", 5000, at(0, -1, 0))}},
		{name: "a row at the day's head asks for the day before's bill", rows: []wechatbill.LedgerRow{dep("SL0", 5000, at(0, 0, 1))}, needEarlier: true},
		{name: "a row at the day's head in the day before's bill", rows: []wechatbill.LedgerRow{dep("SL0", 5000, at(0, 0, 1))},
			earlier: []wechatbill.Line{pay("SL0", 5000, at(0, 0, -1))}},
		{name: "a row at the day's head in neither bill", rows: []wechatbill.LedgerRow{dep("SL0", 5000, at(0, 0, 1))}, earlier: []wechatbill.Line{},
			diffs: []wechatbill.Difference{{OutTradeNo: "SL0", Kind: "missing_in_bill", OursFen: fen(5000)}}},
		{name: "a row at the day's head in this day's bill", lines: []wechatbill.Line{pay("SL0", 5000, at(0, 0, 0))}, rows: []wechatbill.LedgerRow{dep("SL0", 5000, at(0, 0, 1))}, matched: 1},
		{name: "a payment listed twice pairs its row once", lines: []wechatbill.Line{pay("SL1", 3000, at(10, 0, 0)), pay("SL1", 3000, at(10, 0, 0))},
			rows: []wechatbill.LedgerRow{dep("SL1", 3000, at(10, 0, 1))}, matched: 1,
			diffs: []wechatbill.Difference{{OutTradeNo: "SL1", Kind: "missing_here", TheirsFen: fen(3000)}}},
		{name: "a refund listed twice pairs its row once", lines: []wechatbill.Line{pay("SL1", 5000, at(10, 0, 0)), ref("SL1", "RF1", 2000, at(11, 0, 0)), ref("SL1", "RF1", 2000, at(11, 0, 0))},
			rows: []wechatbill.LedgerRow{dep("SL1", 5000, at(10, 0, 1)), back("SL1", "RF1", 2000, at(11, 0, 2))}, matched: 2,
			diffs: []wechatbill.Difference{{OutTradeNo: "SL1", OutRefundNo: "RF1", Kind: "missing_here", TheirsFen: fen(2000)}}},
		{name: "a payment listed twice with another amount the second time", lines: []wechatbill.Line{pay("SL1", 3000, at(10, 0, 0)), pay("SL1", 5000, at(10, 0, 0))},
			rows: []wechatbill.LedgerRow{dep("SL1", 3000, at(10, 0, 1))}, matched: 1,
			diffs: []wechatbill.Difference{{OutTradeNo: "SL1", Kind: "missing_here", TheirsFen: fen(5000)}}},
		{name: "a payment listed twice, its row unwritten", lines: []wechatbill.Line{pay("SL1", 3000, at(10, 0, 0)), pay("SL1", 3000, at(10, 0, 0))},
			diffs: []wechatbill.Difference{{OutTradeNo: "SL1", Kind: "missing_here", TheirsFen: fen(3000)}, {OutTradeNo: "SL1", Kind: "missing_here", TheirsFen: fen(3000)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, need := wechatbill.Match(tt.lines, tt.rows, w, tt.earlier)
			if res.BillRows != len(tt.lines) || res.Matched != tt.matched || need != tt.needEarlier {
				t.Errorf("billRows %d matched %d needEarlier %v; want %d %d %v", res.BillRows, res.Matched, need, len(tt.lines), tt.matched, tt.needEarlier)
			}
			var fees int64
			for _, l := range tt.lines {
				fees += l.FeeFen
			}
			if res.FeesFen != fees {
				t.Errorf("fees %d, want %d", res.FeesFen, fees)
			}
			if !reflect.DeepEqual(res.Differences, tt.diffs) {
				t.Errorf("differences %s\nwant %s", show(res.Differences), show(tt.diffs))
			}
		})
	}
}

func show(ds []wechatbill.Difference) string {
	s := ""
	for _, d := range ds {
		v := func(p *int64) string {
			if p == nil {
				return "null"
			}
			return wechatbill.Yuan(*p)
		}
		s += d.Kind + " " + d.OutTradeNo + "/" + d.OutRefundNo + " ours " + v(d.OursFen) + " theirs " + v(d.TheirsFen) + "; "
	}
	return "[" + s + "]"
}

// TestDue: when the release run attempts a bill date.
func TestDue(t *testing.T) {
	shop := time.FixedZone("CST", 8*3600)
	day := time.Date(2026, 12, 3, 0, 0, 0, 0, shop)
	at := func(d, h, m int) time.Time {
		return day.AddDate(0, 0, d).Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
	}
	stored := func(status string, attempted time.Time) *wechatbill.DayResult {
		return &wechatbill.DayResult{Status: status, AttemptedAt: attempted}
	}
	for _, tt := range []struct {
		name   string
		stored *wechatbill.DayResult
		now    time.Time
		want   bool
	}{
		{"the day itself", nil, at(0, 23, 0), false},
		{"the next day before BILL_AFTER", nil, at(1, 9, 59), false},
		{"the next day at BILL_AFTER", nil, at(1, 10, 0), true},
		{"two days later, never run", nil, at(2, 1, 0), true},
		{"matched", stored("matched", at(1, 10, 0)), at(1, 11, 0), false},
		{"matched, days later", stored("matched", at(1, 10, 0)), at(2, 12, 0), false},
		{"differences, within the hour", stored("differences", at(1, 10, 0)), at(1, 10, 59), false},
		{"differences, an hour later", stored("differences", at(1, 10, 0)), at(1, 11, 0), true},
		{"failed, at the next run", stored("failed", at(1, 10, 0)), at(1, 10, 1), true},
		{"failed, an hour later", stored("failed", at(1, 10, 0)), at(1, 11, 0), true},
		{"failed, on the third day", stored("failed", at(2, 10, 0)), at(3, 23, 59), true},
		{"failed, three days passed", stored("failed", at(3, 10, 0)), at(4, 0, 1), false},
	} {
		if got := wechatbill.Due("2026-12-03", tt.stored, tt.now, shop, 10*time.Hour); got != tt.want {
			t.Errorf("%s: Due = %v, want %v", tt.name, got, tt.want)
		}
	}
	if got := wechatbill.DueDates(at(3, 10, 0)); len(got) != 3 || got[0] != "2026-12-03" || got[2] != "2026-12-05" {
		t.Errorf("DueDates = %v", got)
	}
}
