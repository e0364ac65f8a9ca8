package console

// 报表, the owner's figures: a range of shop dates (the last 31 days to today
// unless she picks another), the net takings by day as a bar chart the page
// draws itself (inline SVG, no script), the totals, the technicians and the
// services, and the bookings' CSV export (ReportCSV, served by the JSON
// API's GET /admin/reports.csv, which the console's session cookie
// authorises). The route refuses the page to staff before it runs
// (Route.Needs); the service refuses the figures to anyone but the owner.

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"salon/shared/booking"
	"salon/shared/wechatbill"
)

// reportDefaultDays is the range the page opens with: the last 31 days to
// today.
const reportDefaultDays = 31

type reportBody struct {
	From, To string
	Rep      *booking.Report
	Chart    reportChart
	// Money is the range's takings in the salon's words, NoShowRate the
	// no-show rate ("—" when there were neither completed bookings nor
	// no-shows).
	Online, Shop, Refunded, Net, Kept, NoShowRate string
	Techs, Services                               []reportTakingsRow
	CSV                                           string
}

type reportTakingsRow struct {
	Name, Minutes, Takings string
	Completed              int
}

// reportChart is the bar chart of the net takings by day, in the SVG's own
// units: one bar per day, above the zero line for takings and below it for a
// day that refunded more than it took.
type reportChart struct {
	Width, Height, Zero int
	Bars                []reportBar
}

type reportBar struct {
	X, Y, W, H int
	Date       string
	NetFen     int64
	Label      string
	Negative   bool
}

// Chart units: each day is barStep wide, its bar barWidth; the chart is
// chartHeight high.
const (
	barStep     = 12
	barWidth    = 9
	chartHeight = 120
)

func drawChart(days []booking.ReportDay) reportChart {
	var top, bottom int64 // the largest net and the smallest (0 at most)
	for _, d := range days {
		top, bottom = max(top, d.NetFen), min(bottom, d.NetFen)
	}
	c := reportChart{Width: barStep * len(days), Height: chartHeight}
	span := top - bottom
	if span == 0 {
		span = 1
	}
	c.Zero = int(top * chartHeight / span)
	for i, d := range days {
		h := int(abs(d.NetFen) * chartHeight / span)
		if d.NetFen != 0 && h == 0 {
			h = 1 // a day with takings is never drawn as none
		}
		b := reportBar{X: i*barStep + (barStep-barWidth)/2, W: barWidth, H: h, Date: d.Date, NetFen: d.NetFen,
			Label: d.Date + " " + yuan(d.NetFen), Negative: d.NetFen < 0}
		b.Y = c.Zero - h
		if b.Negative {
			b.Y = c.Zero
		}
		c.Bars = append(c.Bars, b)
	}
	return c
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

func (c *Console) reports(w http.ResponseWriter, q *Request) error {
	v := q.r.URL.Query()
	from, to := v.Get("from"), v.Get("to")
	if from == "" && to == "" {
		today := c.shopDay(q)
		from, to = today.AddDate(0, 0, 1-reportDefaultDays).Format(time.DateOnly), today.Format(time.DateOnly)
	}
	rep, err := q.s.Reports.Report(q.ctx, from, to)
	if err != nil {
		return err
	}
	t := rep.Total
	body := &reportBody{From: rep.From, To: rep.To, Rep: rep, Chart: drawChart(rep.Days),
		Online: yuan(t.OnlineFen), Shop: yuan(t.ShopFen), Refunded: yuan(t.RefundedFen), Net: yuan(t.NetFen),
		Kept: yuan(t.KeptFen), NoShowRate: "—",
		CSV: "reports.csv?" + url.Values{"from": {rep.From}, "to": {rep.To}}.Encode()}
	if rep.NoShowRate != nil {
		body.NoShowRate = fmt.Sprintf("%.1f%%", *rep.NoShowRate*100)
	}
	for _, tk := range rep.Technicians {
		body.Techs = append(body.Techs, reportTakingsRow{Name: tk.Name, Completed: tk.Completed,
			Minutes: fmt.Sprintf("%d 小时 %d 分", tk.Minutes/60, tk.Minutes%60), Takings: yuan(tk.TakingsFen)})
	}
	for _, sv := range rep.Services {
		body.Services = append(body.Services, reportTakingsRow{Name: sv.Name, Completed: sv.Completed, Takings: yuan(sv.TakingsFen)})
	}
	render(w, http.StatusOK, "reports", q.page("报表 "+rep.From+" 至 "+rep.To, "reports", body))
	return nil
}

// dayTakings is the day page's line of takings: the money that moved that
// shop day so far. Only the owner sees it (nil for staff).
func (q *Request) dayTakings(day time.Time) (*takingsLine, error) {
	if !q.may(booking.ActionReports) || q.s.Reports == nil {
		return nil, nil
	}
	d, err := q.s.Reports.DayTakings(q.ctx, day.Format(time.DateOnly))
	if err != nil {
		return nil, err
	}
	return &takingsLine{Online: yuan(d.OnlineFen), Shop: yuan(d.ShopFen), Refunded: yuan(d.RefundedFen), Net: yuan(d.NetFen)}, nil
}

type takingsLine struct{ Online, Shop, Refunded, Net string }

// reportCSVHeader is the export's header line.
var reportCSVHeader = []string{"日期", "时间", "项目", "技师", "顾客", "电话", "状态", "定金", "到店付款", "付款方式", "退款", "扣留定金"}

// methodWords names how money was paid.
var methodWords = map[string]string{
	"wechatpay": "微信支付", "wechat": "微信", "alipay": "支付宝", "cash": "现金", "card": "刷卡",
}

// ReportCSV is the bookings' export: a UTF-8 byte order mark (Excel then
// reads the file as UTF-8), the header, and one line per booking: its shop
// date and start, service, technician, customer and phone, status (a late
// cancel is 已取消 with its kept deposit), and its money in yuan with two
// decimals (deposit paid online, paid in the shop and how, refunded, kept).
// A value that starts with =, +, - or @ gets a leading ' so that no
// spreadsheet takes it for a formula.
func ReportCSV(lines []booking.ReportLine, loc *time.Location) []byte {
	var buf bytes.Buffer
	buf.WriteString("\uFEFF")
	cw := csv.NewWriter(&buf)
	cw.UseCRLF = true
	cw.Write(reportCSVHeader)
	for _, l := range lines {
		b := l.B
		var name, phone string
		if b.Customer != nil {
			name, phone = b.Customer.Name, b.Customer.Phone
		}
		cw.Write(neutralise([]string{
			b.StartAt.In(loc).Format(time.DateOnly), b.StartAt.In(loc).Format("15:04"),
			b.ServiceName, b.TechnicianName, name, phone, statusWord(b.Status),
			wechatbill.Yuan(l.DepositFen), wechatbill.Yuan(l.BalanceFen), methodWords[l.BalanceMethod], wechatbill.Yuan(l.RefundedFen), wechatbill.Yuan(l.KeptFen),
		}))
	}
	cw.Flush()
	return buf.Bytes()
}

// neutralise puts a ' before every value a spreadsheet would read as a
// formula: one starting with =, +, - or @.
func neutralise(row []string) []string {
	for i, v := range row {
		if v != "" && strings.ContainsRune("=+-@", rune(v[0])) {
			row[i] = "'" + v
		}
	}
	return row
}
