package wechatbill

import (
	"strconv"
	"strings"
)

// Account is what a bill line says of the merchant besides the trade.
type Account struct {
	AppID, MchID string
	Description  string // 商品名称
}

// Format writes lines as WeChat Pay serves a trade bill (bill_type=ALL), with
// the summary computed from them; no lines is an empty body, as for a day
// without trade. The simulator serves what this writes.
func Format(acct Account, lines []Line) []byte {
	if len(lines) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString(strings.Join(Columns, ",") + "\r\n")
	for _, l := range lines {
		order, refundType, refundID, outRefundNo, requested := l.SettlementFen, "", "0", "0", int64(0)
		if l.IsRefund() {
			refundType, refundID, outRefundNo, requested = "ORIGINAL", l.RefundID, l.OutRefundNo, l.RefundFen
		}
		rate := "0.60%"
		values := map[string]string{
			colTradeTime: l.TradeTime.In(billZone).Format("2006-01-02 15:04:05"),
			"公众账号ID":     acct.AppID, "商户号": acct.MchID, "特约商户号": "0",
			colTransaction: l.TransactionID, colOutTradeNo: l.OutTradeNo, "用户标识": "",
			"交易类型": "JSAPI", colTradeState: l.TradeState, "付款银行": "OTHERS", "货币种类": "CNY",
			colSettlement: Yuan(l.SettlementFen), "代金券金额": "0.00",
			colRefundID: refundID, colOutRefundNo: outRefundNo, colRefund: Yuan(l.RefundFen),
			"充值券退款金额": "0.00", "退款类型": refundType, colRefundStatus: l.RefundStatus,
			"商品名称": acct.Description, colFee: Yuan(l.FeeFen), "费率": rate,
			"订单金额": Yuan(order), "申请退款金额": Yuan(requested),
		}
		for i, c := range Columns {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("`" + values[c])
		}
		b.WriteString("\r\n")
	}
	s := SummaryOf(lines)
	b.WriteString(strings.Join(SummaryColumns, ",") + "\r\n")
	for i, v := range []string{
		strconv.Itoa(s.Trades), Yuan(s.SettlementFen), Yuan(s.RefundFen), Yuan(s.CouponRefundFen),
		Yuan(s.FeeFen), Yuan(s.OrderFen), Yuan(s.RequestedRefundFen),
	} {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("`" + v)
	}
	b.WriteString("\r\n")
	return []byte(b.String())
}

// SummaryOf is the summary line WeChat writes under lines.
func SummaryOf(lines []Line) Summary {
	s := Summary{Trades: len(lines)}
	for _, l := range lines {
		s.SettlementFen += l.SettlementFen
		s.RefundFen += l.RefundFen
		s.FeeFen += l.FeeFen
		s.OrderFen += l.SettlementFen
		if l.IsRefund() {
			s.RequestedRefundFen += l.RefundFen
		}
	}
	return s
}
