package wxpaysim

import (
	"crypto/sha1"
	"encoding/hex"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"salon/shared/wechatbill"
)

// Bills: GET /v3/bill/tradebill?bill_date=&bill_type=ALL answers, signed, the
// SHA1 and the download_url of the day's trade bill, built from the sim's own
// orders and refunds (a payment by its success time, a refund by its success
// time, both in WeChat's time zone); a day without any is 400
// NO_STATEMENT_EXIST, as WeChat answers. The download_url names WeChat's API
// host (the client's base rewrite brings it here), or the base a BillPlant's
// DownloadBase names; its GET must be signed
// like any request and is answered unsigned, the bill's bytes. The sim serves
// any day's bill, today's so far included, so that a local run can show one.

const (
	pathTradeBill    = "/v3/bill/tradebill"
	pathBillDownload = "/v3/billdownload/file"
	// feeRate is the fee WeChat charges on a payment, in thousandths: 0.6%.
	feeRate = 6
)

// BillPlant changes the bills served from now on, to show and test what
// reconciliation finds: Drop leaves out the lines of one out_trade_no (a
// payment WeChat has no record of), Change and ChangeFen make the payment line
// of one out_trade_no another amount, BadHash announces a SHA1 that is not the
// file's, and DownloadBase (a base URL: scheme, host, optional path) names
// the file under that base instead of under WeChat's API host, as WeChat's
// backup domain or a gateway in front of it may. The zero value serves the
// bills as they are.
type BillPlant struct {
	Drop         string `json:"drop,omitempty"`
	Change       string `json:"change,omitempty"`
	ChangeFen    int64  `json:"changeFen,omitempty"`
	BadHash      bool   `json:"badHash,omitempty"`
	DownloadBase string `json:"downloadBase,omitempty"`
}

// PlantBill sets what the bills served from now on get wrong (BillPlant{}:
// nothing).
func (s *Sim) PlantBill(p BillPlant) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.plant = p
}

func (s *Sim) billLinesLocked(date string) []wechatbill.Line {
	var lines []wechatbill.Line
	for _, o := range s.orders {
		if o.SuccessTime.IsZero() || wechatbill.DateOf(o.SuccessTime) != date || o.OutTradeNo == s.plant.Drop {
			continue
		}
		fen := o.Total
		if o.OutTradeNo == s.plant.Change {
			fen = s.plant.ChangeFen
		}
		lines = append(lines, wechatbill.Line{
			TradeTime: o.SuccessTime, TransactionID: o.TransactionID, OutTradeNo: o.OutTradeNo,
			TradeState: wechatbill.StatePaid, SettlementFen: fen, RefundID: "0", OutRefundNo: "0",
			FeeFen: fee(fen),
		})
	}
	for _, rf := range s.refunds {
		if rf.Status != RefundSuccess || rf.SuccessTime.IsZero() || wechatbill.DateOf(rf.SuccessTime) != date || rf.OutTradeNo == s.plant.Drop {
			continue
		}
		lines = append(lines, wechatbill.Line{
			TradeTime: rf.SuccessTime, TransactionID: rf.TransactionID, OutTradeNo: rf.OutTradeNo,
			TradeState: wechatbill.StateRefunded, RefundID: rf.RefundID, OutRefundNo: rf.OutRefundNo,
			RefundFen: rf.Amount, RefundStatus: RefundSuccess, FeeFen: -fee(rf.Amount),
		})
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].TradeTime.Before(lines[j].TradeTime) })
	return lines
}

// fee is WeChat's fee on fen, rounded to the nearest fen.
func fee(fen int64) int64 { return (fen*feeRate + 500) / 1000 }

func (s *Sim) tradeBill(q url.Values) result {
	date := q.Get("bill_date")
	if _, err := time.Parse(time.DateOnly, date); err != nil {
		return fail(http.StatusBadRequest, "PARAM_ERROR", "bill_date 格式不正确")
	}
	if bt := q.Get("bill_type"); bt != "" && bt != "ALL" && bt != "SUCCESS" && bt != "REFUND" {
		return fail(http.StatusBadRequest, "PARAM_ERROR", "bill_type 不正确")
	}
	if q.Get("tar_type") != "" {
		return fail(http.StatusBadRequest, "PARAM_ERROR", "sim: tar_type is not simulated")
	}
	s.mu.Lock()
	lines := s.billLinesLocked(date)
	plant := s.plant
	body := wechatbill.Format(wechatbill.Account{AppID: s.opts.AppID, MchID: s.opts.MchID, Description: "美甲定金"}, lines)
	token := randAlnum(32)
	if len(lines) > 0 {
		if s.bills == nil {
			s.bills = map[string][]byte{}
		}
		s.bills[token] = body
	}
	s.mu.Unlock()
	if len(lines) == 0 {
		return fail(http.StatusBadRequest, "NO_STATEMENT_EXIST", "账单不存在")
	}
	sum := sha1.Sum(body)
	hash := hex.EncodeToString(sum[:])
	if plant.BadHash {
		hash = hex.EncodeToString(make([]byte, sha1.Size))
	}
	base := "https://api.mch.weixin.qq.com"
	if plant.DownloadBase != "" {
		base = strings.TrimRight(plant.DownloadBase, "/")
	}
	return ok(map[string]string{
		"hash_type":    "SHA1",
		"hash_value":   hash,
		"download_url": base + pathBillDownload + "?token=" + token,
	})
}

func (s *Sim) billFile(token string) result {
	s.mu.Lock()
	body, found := s.bills[token]
	s.mu.Unlock()
	if !found {
		return fail(http.StatusNotFound, "RESOURCE_NOT_EXISTS", "账单文件不存在或已过期")
	}
	return result{status: http.StatusOK, body: body, unsigned: true}
}

// simBill: POST /sim/bill?drop=OUT_TRADE_NO | change=OUT_TRADE_NO&fen=N | bad_hash=1;
// with none of them the bills are served as they are again.
func (s *Sim) simBill(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := BillPlant{Drop: q.Get("drop"), Change: q.Get("change"), BadHash: q.Get("bad_hash") == "1"}
	if p.Change != "" {
		fen, err := strconv.ParseInt(q.Get("fen"), 10, 64)
		if err != nil || fen < 0 {
			writeJSON(w, http.StatusBadRequest, map[string]string{"code": "PARAM_ERROR", "message": "change needs fen, a whole number of fen"})
			return
		}
		p.ChangeFen = fen
	}
	s.PlantBill(p)
	writeJSON(w, http.StatusOK, p)
}
