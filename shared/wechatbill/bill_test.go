package wechatbill_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"salon/shared/wechatbill"
)

// The header lines and lines below are in the trade bill's real format: 27
// columns, every field of a detail or summary line behind a backtick.
const (
	head    = "交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易状态,付款银行,货币种类,应结订单金额,代金券金额,微信退款单号,商户退款单号,退款金额,充值券退款金额,退款类型,退款状态,商品名称,商户数据包,手续费,费率,订单金额,申请退款金额,费率备注"
	paid    = "`2026-12-03 10:15:02,`wxd678efh567hg6787,`1230000109,`0,`,`4200001234202612031234567890,`SL000000000101,`oUpF8uMuAJO_M2pxb1Q9zNjWeS6o,`JSAPI,`SUCCESS,`OTHERS,`CNY,`50.00,`0.00,`0,`0,`0.00,`0.00,`,`,`美甲定金,`,`0.30,`0.60%,`50.00,`0.00,`"
	paid2   = "`2026-12-03 23:59:59,`wxd678efh567hg6787,`1230000109,`0,`,`4200001234202612031234567891,`SL000000000102,`oUpF8uMuAJO_M2pxb1Q9zNjWeS6o,`JSAPI,`SUCCESS,`OTHERS,`CNY,`80.00,`0.00,`0,`0,`0.00,`0.00,`,`,`美甲定金,`,`0.48,`0.60%,`80.00,`0.00,`"
	refund  = "`2026-12-03 12:00:00,`wxd678efh567hg6787,`1230000109,`0,`,`4200001234202612031234567890,`SL000000000101,`oUpF8uMuAJO_M2pxb1Q9zNjWeS6o,`JSAPI,`REFUND,`OTHERS,`CNY,`0.00,`0.00,`50000000012026120312345678,`RF000000000101,`50.00,`0.00,`ORIGINAL,`SUCCESS,`美甲定金,`,`-0.30,`0.60%,`0.00,`50.00,`"
	sumHead = "总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额"
)

func bill(lines ...string) string { return strings.Join(lines, "\r\n") + "\r\n" }

func TestParse(t *testing.T) {
	shanghai := time.FixedZone("CST", 8*3600)
	tests := []struct {
		name    string
		body    string
		lines   int
		fees    int64
		refunds int
		err     string // "" for a good bill
	}{
		{"a payment", bill(head, paid, sumHead, "`1,`50.00,`0.00,`0.00,`0.30,`50.00,`0.00"), 1, 30, 0, ""},
		{"a payment and its refund", bill(head, paid, refund, sumHead, "`2,`50.00,`50.00,`0.00,`0.00,`50.00,`50.00"), 2, 0, 1, ""},
		{"two payments, \\n line ends", strings.Join([]string{head, paid, paid2, sumHead, "`2,`130.00,`0.00,`0.00,`0.78,`130.00,`0.00"}, "\n"), 2, 78, 0, ""},
		{"an empty body (no trade)", "", 0, 0, 0, ""},
		{"a summary of no lines", bill(head, sumHead, "`0,`0.00,`0.00,`0.00,`0.00,`0.00,`0.00"), 0, 0, 0, ""},
		{"columns in another order", bill(reorder(head), reorder(paid), sumHead, "`1,`50.00,`0.00,`0.00,`0.30,`50.00,`0.00"), 1, 30, 0, ""},
		{"a BOM", "\xef\xbb\xbf" + bill(head, paid, sumHead, "`1,`50.00,`0.00,`0.00,`0.30,`50.00,`0.00"), 1, 30, 0, ""},

		{"the summary counts another number of lines", bill(head, paid, sumHead, "`2,`50.00,`0.00,`0.00,`0.30,`50.00,`0.00"), 0, 0, 0, "counts 2 trades"},
		{"the summary's amount differs", bill(head, paid, sumHead, "`1,`50.01,`0.00,`0.00,`0.30,`50.00,`0.00"), 0, 0, 0, "应结订单总金额"},
		{"the summary's refunds differ", bill(head, paid, refund, sumHead, "`2,`50.00,`0.00,`0.00,`0.00,`50.00,`50.00"), 0, 0, 0, "退款总金额"},
		{"the summary's fees differ", bill(head, paid, sumHead, "`1,`50.00,`0.00,`0.00,`0.31,`50.00,`0.00"), 0, 0, 0, "手续费总金额"},
		{"no summary", bill(head, paid, paid2, refund), 0, 0, 0, "summary header"},
		{"a field without its backtick", bill(head, strings.Replace(paid, "`50.00", "50.00", 1), sumHead, "`1,`50.00,`0.00,`0.00,`0.30,`50.00,`0.00"), 0, 0, 0, "backtick"},
		{"a missing column", bill(strings.Replace(head, "商户订单号", "订单号", 1), paid, sumHead, "`1,`50.00,`0.00,`0.00,`0.30,`50.00,`0.00"), 0, 0, 0, "商户订单号"},
		{"a column twice", bill(strings.Replace(head, "设备号", "商户订单号", 1), paid, sumHead, "`1,`50.00,`0.00,`0.00,`0.30,`50.00,`0.00"), 0, 0, 0, "twice"},
		{"a short line", bill(head, paid[:len(paid)-2], sumHead, "`1,`50.00,`0.00,`0.00,`0.30,`50.00,`0.00"), 0, 0, 0, "fields"},
		{"one decimal", bill(head, strings.Replace(paid, "`50.00,`0.00", "`50.0,`0.00", 1), sumHead, "`1,`50.00,`0.00,`0.00,`0.30,`50.00,`0.00"), 0, 0, 0, "two decimals"},
		{"a float with an exponent", bill(head, strings.Replace(paid, "`50.00,`0.00", "`5e1,`0.00", 1), sumHead, "`1,`50.00,`0.00,`0.00,`0.30,`50.00,`0.00"), 0, 0, 0, "two decimals"},
		{"a bad time", bill(head, strings.Replace(paid, "2026-12-03 10:15:02", "2026/12/03 10:15", 1), sumHead, "`1,`50.00,`0.00,`0.00,`0.30,`50.00,`0.00"), 0, 0, 0, "交易时间"},
		{"an unknown trade state", bill(head, strings.Replace(paid, "`SUCCESS", "`REVOKED", 1), sumHead, "`1,`50.00,`0.00,`0.00,`0.30,`50.00,`0.00"), 0, 0, 0, "REVOKED"},
		{"a refund line without its number", bill(head, strings.Replace(refund, "`RF000000000101", "`0", 1), sumHead, "`1,`0.00,`50.00,`0.00,`-0.30,`0.00,`50.00"), 0, 0, 0, "商户退款单号"},
		{"a summary count that is not a number", bill(head, paid, sumHead, "`one,`50.00,`0.00,`0.00,`0.30,`50.00,`0.00"), 0, 0, 0, "总交易单数"},
		{"two lines only", bill(head, paid), 0, 0, 0, "lines"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := wechatbill.Parse([]byte(tt.body))
			if tt.err != "" {
				if err == nil || !errors.Is(err, wechatbill.ErrFormat) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Parse = %v, %v; want ErrFormat mentioning %q", b, err, tt.err)
				}
				if b != nil {
					t.Fatalf("a refused bill came back with %d lines", len(b.Lines))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			refunds := 0
			var fees int64
			for _, l := range b.Lines {
				fees += l.FeeFen
				if l.IsRefund() {
					refunds++
				}
			}
			if len(b.Lines) != tt.lines || fees != tt.fees || refunds != tt.refunds {
				t.Fatalf("lines %d fees %d refunds %d; want %d %d %d", len(b.Lines), fees, refunds, tt.lines, tt.fees, tt.refunds)
			}
		})
	}

	b, err := wechatbill.Parse([]byte(bill(head, paid, refund, sumHead, "`2,`50.00,`50.00,`0.00,`0.00,`50.00,`50.00")))
	if err != nil {
		t.Fatal(err)
	}
	want := []wechatbill.Line{
		{TradeTime: time.Date(2026, 12, 3, 10, 15, 2, 0, shanghai), TransactionID: "4200001234202612031234567890", OutTradeNo: "SL000000000101",
			TradeState: "SUCCESS", SettlementFen: 5000, RefundID: "0", OutRefundNo: "0", FeeFen: 30},
		{TradeTime: time.Date(2026, 12, 3, 12, 0, 0, 0, shanghai), TransactionID: "4200001234202612031234567890", OutTradeNo: "SL000000000101",
			TradeState: "REFUND", RefundID: "50000000012026120312345678", OutRefundNo: "RF000000000101", RefundFen: 5000, RefundStatus: "SUCCESS", FeeFen: -30},
	}
	for i, l := range b.Lines {
		if !l.TradeTime.Equal(want[i].TradeTime) {
			t.Errorf("line %d time %v, want %v", i, l.TradeTime, want[i].TradeTime)
		}
		l.TradeTime = want[i].TradeTime
		if l != want[i] {
			t.Errorf("line %d = %+v\nwant %+v", i, l, want[i])
		}
	}
}

// reorder swaps the first two columns of a header or a line.
func reorder(s string) string {
	f := strings.Split(s, ",")
	f[0], f[1] = f[1], f[0]
	return strings.Join(f, ",")
}

func TestFen(t *testing.T) {
	for in, want := range map[string]int64{"0.00": 0, "50.00": 5000, "0.01": 1, "-0.30": -30, "1234567.89": 123456789, "9999999999.99": 999999999999} {
		if got, err := wechatbill.Fen(in); err != nil || got != want {
			t.Errorf("Fen(%q) = %d, %v; want %d", in, got, err, want)
		}
		if got := wechatbill.Yuan(want); got != in {
			t.Errorf("Yuan(%d) = %q, want %q", want, got, in)
		}
	}
	for _, in := range []string{"", "50", "50.0", "50.000", ".50", "-", "+1.00", "1,000.00", "5e1.00", "0x1.00", "12345678901.00", " 1.00", "1.0a", "--1.00"} {
		if got, err := wechatbill.Fen(in); err == nil {
			t.Errorf("Fen(%q) = %d, want an error", in, got)
		}
	}
}

// TestFormatParses: what the simulator serves is read back line for line.
func TestFormatParses(t *testing.T) {
	at := time.Date(2026, 12, 3, 23, 59, 59, 0, time.UTC)
	lines := []wechatbill.Line{
		{TradeTime: at, TransactionID: "42001", OutTradeNo: "SL1", TradeState: "SUCCESS", SettlementFen: 5000, RefundID: "0", OutRefundNo: "0", FeeFen: 30},
		{TradeTime: at, TransactionID: "42001", OutTradeNo: "SL1", TradeState: "REFUND", RefundID: "5001", OutRefundNo: "RF1", RefundFen: 5000, RefundStatus: "SUCCESS", FeeFen: -30},
	}
	b, err := wechatbill.Parse(wechatbill.Format(wechatbill.Account{AppID: "wx1", MchID: "123", Description: "美甲定金"}, lines))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Lines) != 2 || b.Summary != wechatbill.SummaryOf(lines) {
		t.Fatalf("read back %+v", b)
	}
	for i := range lines {
		b.Lines[i].TradeTime = b.Lines[i].TradeTime.UTC()
		if b.Lines[i] != lines[i] {
			t.Errorf("line %d = %+v, want %+v", i, b.Lines[i], lines[i])
		}
	}
	if got := wechatbill.Format(wechatbill.Account{}, nil); len(got) != 0 {
		t.Errorf("no lines formatted as %q, want an empty body", got)
	}
}
