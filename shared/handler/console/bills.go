package console

// The health page's reconciliation with WeChat Pay's bills: the last days'
// results in the salon's words, each difference with what to do about it.

import (
	"fmt"

	"salon/shared/booking"
	"salon/shared/wechatbill"
)

// billDaysShown is how many bill dates the health page lists.
const billDaysShown = 7

type billDayRow struct {
	Date, Status string
	Bad          bool
	Summary      string
	Differences  []billDifferenceRow
}

type billDifferenceRow struct {
	Kind, What, Todo string
}

// billRows loads the last days' results for the owner; nil for anyone else
// (the salon's money is the owner's) or when nothing was run yet.
func (q *Request) billRows() ([]billDayRow, error) {
	if q.s.Bills == nil || !q.may(booking.ActionReconcile) {
		return nil, nil
	}
	days, err := q.s.Bills.Recent(q.ctx, billDaysShown)
	if err != nil {
		return nil, err
	}
	rows := make([]billDayRow, 0, len(days))
	for _, d := range days {
		rows = append(rows, billDay(d))
	}
	return rows, nil
}

func billDay(d wechatbill.DayResult) billDayRow {
	row := billDayRow{Date: d.Date, Status: d.Status}
	switch d.Status {
	case wechatbill.StatusMatched:
		row.Summary = fmt.Sprintf("对上了：微信账单 %d 笔，系统记录一致。微信手续费 %s。", d.BillRows, yuan(d.FeesFen))
	case wechatbill.StatusDifferences:
		row.Bad = true
		row.Summary = fmt.Sprintf("有 %d 处对不上（微信账单 %d 笔，对上 %d 笔）。系统每小时会再对一次，三天内对上就不用管。", len(d.Differences), d.BillRows, d.Matched)
	default:
		row.Bad = true
		row.Summary = "没有取到微信账单（微信暂时连不上，或账单文件校验不对）。系统每分钟会再试，三天内。"
	}
	for _, x := range d.Differences {
		row.Differences = append(row.Differences, billDifference(x))
	}
	return row
}

// billDifference says a difference the way the salon sees it, and what to do.
func billDifference(x wechatbill.Difference) billDifferenceRow {
	what, no := "收款", "商户订单号 "+x.OutTradeNo
	if x.OutRefundNo != "" {
		what, no = "退款", "商户退款单号 "+x.OutRefundNo
	}
	amount := func(p *int64) string {
		if p == nil {
			return "-"
		}
		return yuan(*p)
	}
	switch x.Kind {
	case wechatbill.MissingHere:
		return billDifferenceRow{Kind: x.Kind,
			What: fmt.Sprintf("微信有这笔%s（%s，%s），系统没有记录", what, no, amount(x.TheirsFen)),
			Todo: "在微信支付商户平台查这笔订单；如果顾客确实付了款，请联系技术人员补记，不要让顾客重复付款。"}
	case wechatbill.MissingInBill:
		return billDifferenceRow{Kind: x.Kind,
			What: fmt.Sprintf("系统记了这笔%s（%s，%s），微信账单里没有", what, no, amount(x.OursFen)),
			Todo: "在微信支付商户平台按单号查询；如果微信也没有这笔交易，请联系技术人员。"}
	}
	return billDifferenceRow{Kind: x.Kind,
		What: fmt.Sprintf("这笔%s金额不一致（%s）：系统记 %s，微信账单 %s", what, no, amount(x.OursFen), amount(x.TheirsFen)),
		Todo: "以微信支付商户平台为准核对这笔订单，再联系技术人员。"}
}
