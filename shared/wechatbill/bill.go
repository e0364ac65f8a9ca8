// Package wechatbill reads WeChat Pay's daily trade bill (the CSV that
// GET /v3/bill/tradebill points at) and matches it with the salon's money
// ledger. It is pure: no network, no database. Package wechatpay fetches the
// bill, package mysql reads the ledger, package service puts them together.
//
// The format, as WeChat Pay documents and serves it: a header line of column
// names; one detail line per payment or refund; a header line of summary names;
// one summary line. Every field of a detail or summary line begins with a
// backtick (so that spreadsheets keep long numbers as text); the header lines
// do not. Amounts are yuan with two decimals. Columns are found by their names,
// never by position, so a column WeChat adds or moves changes nothing here.
package wechatbill

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The column names this package reads. A bill without any of them is refused.
const (
	colTradeTime    = "交易时间"
	colTransaction  = "微信订单号"
	colOutTradeNo   = "商户订单号"
	colTradeState   = "交易状态"
	colSettlement   = "应结订单金额"
	colRefundID     = "微信退款单号"
	colOutRefundNo  = "商户退款单号"
	colRefund       = "退款金额"
	colRefundStatus = "退款状态"
	colFee          = "手续费"
)

// Columns is the trade bill's header (bill_type=ALL), in WeChat's order. The
// simulator writes it; Parse reads any order.
var Columns = []string{
	colTradeTime, "公众账号ID", "商户号", "特约商户号", "设备号", colTransaction, colOutTradeNo,
	"用户标识", "交易类型", colTradeState, "付款银行", "货币种类", colSettlement, "代金券金额",
	colRefundID, colOutRefundNo, colRefund, "充值券退款金额", "退款类型", colRefundStatus,
	"商品名称", "商户数据包", colFee, "费率", "订单金额", "申请退款金额", "费率备注",
}

// The summary's column names, in WeChat's order.
const (
	sumTrades        = "总交易单数"
	sumSettlement    = "应结订单总金额"
	sumRefund        = "退款总金额"
	sumCouponRefund  = "充值券退款总金额"
	sumFee           = "手续费总金额"
	sumOrder         = "订单总金额"
	sumRequestRefund = "申请退款总金额"
)

// SummaryColumns is the summary header, in WeChat's order.
var SummaryColumns = []string{sumTrades, sumSettlement, sumRefund, sumCouponRefund, sumFee, sumOrder, sumRequestRefund}

// Trade states of a detail line: a payment is SUCCESS, a refund REFUND.
const (
	StatePaid     = "SUCCESS"
	StateRefunded = "REFUND"
)

// billZone is WeChat's time zone, in which the bill's times are written. A
// fixed zone: a minimal image may carry no tzdata, and China has no DST.
var billZone = time.FixedZone("CST", 8*3600)

// Line is one detail line: a payment (TradeState SUCCESS) or a refund
// (TradeState REFUND, with the refund's numbers and amount).
type Line struct {
	TradeTime     time.Time
	TransactionID string
	OutTradeNo    string
	TradeState    string
	SettlementFen int64 // 应结订单金额: what the payment settles to the merchant
	RefundID      string
	OutRefundNo   string
	RefundFen     int64 // 退款金额
	RefundStatus  string
	FeeFen        int64 // 手续费: WeChat's fee, negative on a refund that returns it
}

// IsRefund reports whether the line is a refund rather than a payment.
func (l Line) IsRefund() bool { return l.TradeState == StateRefunded }

// Summary is the bill's summary line.
type Summary struct {
	Trades             int
	SettlementFen      int64
	RefundFen          int64
	CouponRefundFen    int64
	FeeFen             int64
	OrderFen           int64
	RequestedRefundFen int64
}

// Bill is a parsed trade bill whose summary agrees with its lines.
type Bill struct {
	Lines   []Line
	Summary Summary
}

// ErrFormat is wrapped by every error of Parse: the bytes are not a trade
// bill this package can vouch for, and nothing of them is returned.
var ErrFormat = errors.New("wechatbill: not a valid trade bill")

// maxLines bounds the detail lines of one bill: far more than a salon's day.
const maxLines = 100000

// Parse reads a whole trade bill. It returns the bill only when every line is
// well formed and the summary's count and totals equal those of the detail
// lines: a bill that does not add up is an error, never a half-read bill. An
// empty body (a day without trade) is a bill with no lines.
func Parse(b []byte) (*Bill, error) {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")) // a UTF-8 BOM some tools add
	text := strings.ReplaceAll(string(b), "\r\n", "\n")
	text = strings.TrimRight(text, "\n")
	if strings.TrimSpace(text) == "" {
		return &Bill{}, nil
	}
	rows := strings.Split(text, "\n")
	if len(rows) < 3 {
		return nil, fmt.Errorf("%w: %d lines, want a header, a summary header and a summary line at least", ErrFormat, len(rows))
	}
	if len(rows)-3 > maxLines {
		return nil, fmt.Errorf("%w: more than %d detail lines", ErrFormat, maxLines)
	}
	head, err := header(rows[0], Columns)
	if err != nil {
		return nil, err
	}
	sumHead, err := header(rows[len(rows)-2], SummaryColumns)
	if err != nil {
		return nil, fmt.Errorf("%w (summary header, line %d)", err, len(rows)-1)
	}
	bill := &Bill{Lines: make([]Line, 0, len(rows)-3)}
	for i, row := range rows[1 : len(rows)-2] {
		l, err := detail(row, head)
		if err != nil {
			return nil, fmt.Errorf("%w (line %d)", err, i+2)
		}
		bill.Lines = append(bill.Lines, l)
	}
	bill.Summary, err = summary(rows[len(rows)-1], sumHead)
	if err != nil {
		return nil, fmt.Errorf("%w (summary line %d)", err, len(rows))
	}
	if err := bill.check(); err != nil {
		return nil, err
	}
	return bill, nil
}

// check compares the summary with the one the detail lines add up to
// (SummaryOf), in the totals WeChat's summary states for all of them.
func (b *Bill) check() error {
	s, want := b.Summary, SummaryOf(b.Lines)
	switch {
	case s.Trades != want.Trades:
		return fmt.Errorf("%w: the summary counts %d trades, the bill has %d lines", ErrFormat, s.Trades, want.Trades)
	case s.SettlementFen != want.SettlementFen:
		return fmt.Errorf("%w: the summary's %s is %s, the lines add up to %s", ErrFormat, sumSettlement, Yuan(s.SettlementFen), Yuan(want.SettlementFen))
	case s.RefundFen != want.RefundFen:
		return fmt.Errorf("%w: the summary's %s is %s, the lines add up to %s", ErrFormat, sumRefund, Yuan(s.RefundFen), Yuan(want.RefundFen))
	case s.FeeFen != want.FeeFen:
		return fmt.Errorf("%w: the summary's %s is %s, the lines add up to %s", ErrFormat, sumFee, Yuan(s.FeeFen), Yuan(want.FeeFen))
	}
	return nil
}

// header maps each wanted column name to its position in a header line
// (whose names carry no backtick). A wanted name missing or given twice is an error.
func header(row string, wanted []string) (map[string]int, error) {
	names := strings.Split(row, ",")
	pos := make(map[string]int, len(names))
	for i, n := range names {
		n = strings.TrimSpace(n)
		if _, dup := pos[n]; dup && n != "" {
			return nil, fmt.Errorf("%w: column %q appears twice", ErrFormat, n)
		}
		pos[n] = i
	}
	for _, w := range wanted {
		if _, ok := pos[w]; !ok {
			return nil, fmt.Errorf("%w: no column %q in the header", ErrFormat, w)
		}
	}
	pos[""] = len(names) // the field count every data line must have
	return pos, nil
}

// fields splits a detail or summary line, each field losing its backtick. The
// field count must equal the header's.
func fields(row string, head map[string]int) ([]string, error) {
	fs := strings.Split(row, ",")
	if len(fs) != head[""] {
		return nil, fmt.Errorf("%w: %d fields, the header has %d", ErrFormat, len(fs), head[""])
	}
	for i, f := range fs {
		rest, ok := strings.CutPrefix(f, "`")
		if !ok {
			return nil, fmt.Errorf("%w: field %d does not begin with a backtick", ErrFormat, i+1)
		}
		fs[i] = strings.TrimSpace(rest)
	}
	return fs, nil
}

func detail(row string, head map[string]int) (Line, error) {
	fs, err := fields(row, head)
	if err != nil {
		return Line{}, err
	}
	get := func(name string) string { return fs[head[name]] }
	var l Line
	if l.TradeTime, err = time.ParseInLocation(time.DateTime, get(colTradeTime), billZone); err != nil {
		return Line{}, fmt.Errorf("%w: %s %q is not yyyy-mm-dd hh:mm:ss", ErrFormat, colTradeTime, get(colTradeTime))
	}
	l.TransactionID, l.OutTradeNo = get(colTransaction), get(colOutTradeNo)
	l.TradeState = get(colTradeState)
	l.RefundID, l.OutRefundNo, l.RefundStatus = get(colRefundID), get(colOutRefundNo), get(colRefundStatus)
	for _, a := range []struct {
		name string
		to   *int64
	}{{colSettlement, &l.SettlementFen}, {colRefund, &l.RefundFen}, {colFee, &l.FeeFen}} {
		if *a.to, err = Fen(get(a.name)); err != nil {
			return Line{}, fmt.Errorf("%w: %s: %v", ErrFormat, a.name, err)
		}
	}
	if l.OutTradeNo == "" {
		return Line{}, fmt.Errorf("%w: %s is empty", ErrFormat, colOutTradeNo)
	}
	switch l.TradeState {
	case StatePaid:
	case StateRefunded:
		if noNumber(l.OutRefundNo) {
			return Line{}, fmt.Errorf("%w: a refund line without %s", ErrFormat, colOutRefundNo)
		}
	default:
		// A salon's JSAPI bill holds payments and refunds only; anything else
		// (REVOKED, a state added later) is reported, not guessed at.
		return Line{}, fmt.Errorf("%w: %s %q is neither %s nor %s", ErrFormat, colTradeState, l.TradeState, StatePaid, StateRefunded)
	}
	return l, nil
}

// noNumber reports an empty number field; WeChat writes 0 for "none".
func noNumber(s string) bool { return s == "" || s == "0" }

func summary(row string, head map[string]int) (Summary, error) {
	fs, err := fields(row, head)
	if err != nil {
		return Summary{}, err
	}
	get := func(name string) string { return fs[head[name]] }
	var s Summary
	n, err := strconv.Atoi(get(sumTrades))
	if err != nil || n < 0 {
		return Summary{}, fmt.Errorf("%w: %s %q is not a count", ErrFormat, sumTrades, get(sumTrades))
	}
	s.Trades = n
	for _, a := range []struct {
		name string
		to   *int64
	}{
		{sumSettlement, &s.SettlementFen}, {sumRefund, &s.RefundFen}, {sumCouponRefund, &s.CouponRefundFen},
		{sumFee, &s.FeeFen}, {sumOrder, &s.OrderFen}, {sumRequestRefund, &s.RequestedRefundFen},
	} {
		if *a.to, err = Fen(get(a.name)); err != nil {
			return Summary{}, fmt.Errorf("%w: %s: %v", ErrFormat, a.name, err)
		}
	}
	return s, nil
}

// maxYuanDigits bounds the whole yuan of one amount, far beyond any bill and
// far below int64's reach, so that no sum of maxLines amounts overflows.
const maxYuanDigits = 10

// Fen reads an amount in yuan with exactly two decimals ("50.00", "-0.30")
// as fen, without floating point.
func Fen(s string) (int64, error) {
	neg := strings.HasPrefix(s, "-")
	digits := strings.TrimPrefix(s, "-")
	whole, frac, ok := strings.Cut(digits, ".")
	if !ok || len(frac) != 2 || whole == "" || len(whole) > maxYuanDigits || !allDigits(whole) || !allDigits(frac) {
		return 0, fmt.Errorf("%q is not yuan with two decimals", s)
	}
	y, _ := strconv.ParseInt(whole, 10, 64)
	f, _ := strconv.ParseInt(frac, 10, 64)
	fen := y*100 + f
	if neg {
		fen = -fen
	}
	return fen, nil
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Yuan writes fen the way the bill does: "50.00", "-0.30".
func Yuan(fen int64) string {
	sign := ""
	if fen < 0 {
		sign, fen = "-", -fen
	}
	return fmt.Sprintf("%s%d.%02d", sign, fen/100, fen%100)
}
