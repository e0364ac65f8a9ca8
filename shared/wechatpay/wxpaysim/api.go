package wxpaysim

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// cst is WeChat's time zone (+08:00) for the times the sim writes.
var cst = time.FixedZone("CST", 8*3600)

const maxRequestBytes = 1 << 20

var (
	outTradeNoRe  = regexp.MustCompile(`^[0-9A-Za-z_\-|*]{6,32}$`)
	outRefundNoRe = regexp.MustCompile(`^[0-9A-Za-z_\-|*@]{1,64}$`)
	// WeChat documents time_expire as yyyy-MM-DDTHH:mm:ss+TIMEZONE. Whether it
	// accepts "Z" or fractions is unverified, so the sim refuses them: code that
	// passes here sends what WeChat documents.
	timeExpireRe = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$`)
)

// result is an answer before it is written: a 2xx with a JSON body (nil for 204)
// is signed; anything else is an error {"code","message"}.
type result struct {
	status  int
	body    []byte
	code    string
	message string
	// unsigned is a 2xx WeChat does not sign: a bill file's bytes.
	unsigned bool
}

func ok(v any) result {
	b, err := json.Marshal(v)
	if err != nil {
		return fail(http.StatusInternalServerError, "SYSTEM_ERROR", "sim: "+err.Error())
	}
	return result{status: http.StatusOK, body: b}
}

func fail(status int, code, message string) result {
	return result{status: status, code: code, message: message}
}

func (s *Sim) serveAPI(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	hook, latency, hung := s.onRequest, s.latency, s.hung
	if hung != nil {
		s.hanging++
		s.hangingChanged()
	}
	s.mu.Unlock()
	if hung != nil {
		// WeChat is not answering (Hang): nothing happens until it is back,
		// and a request whose caller gave up meanwhile never happens at all.
		// The body is read first: net/http notices a client that hung up (and
		// cancels r.Context()) only once the body has been consumed.
		body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBytes+1))
		if err == nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		select {
		case <-hung:
		case <-r.Context().Done():
		}
		s.mu.Lock()
		s.hanging--
		s.hangingChanged()
		s.mu.Unlock()
		if r.Context().Err() != nil {
			s.record(r, 0)
			return
		}
	}
	if hook != nil {
		hook(r)
	}
	if latency > 0 {
		t := time.NewTimer(latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			s.record(r, 0)
			return
		}
	}

	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBytes+1))
	if err != nil || len(body) > maxRequestBytes {
		s.write(w, r, fail(http.StatusBadRequest, "PARAM_ERROR", "请求体无法读取或过大"), false)
		return
	}
	if err := s.verifyAuthorization(r, body); err != nil {
		s.write(w, r, fail(http.StatusUnauthorized, "SIGN_ERROR", "签名错误: "+err.Error()), false)
		return
	}

	f := s.takeFault(r.URL.Path)
	switch {
	case f == nil:
		s.write(w, r, s.route(r, body), false)
	case f.status == Drop:
		s.record(r, 0)
		panic(http.ErrAbortHandler) // net/http closes the connection without an answer
	case f.status == ActThenDrop:
		s.route(r, body)
		s.record(r, 0)
		panic(http.ErrAbortHandler)
	case f.status == BadSignature:
		s.write(w, r, s.route(r, body), true)
	default:
		code := f.code
		if code == "" {
			code = "SYSTEM_ERROR"
		}
		s.write(w, r, fail(f.status, code, "sim: injected failure"), false)
	}
}

// takeFault consumes the first matching FailNext rule.
func (s *Sim) takeFault(path string) *fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.faults {
		if strings.HasPrefix(path, f.prefix) {
			f.left--
			if f.left <= 0 {
				s.faults = append(s.faults[:i], s.faults[i+1:]...)
			}
			return f
		}
	}
	return nil
}

func (s *Sim) record(r *http.Request, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, Call{Method: r.Method, Path: r.URL.Path, Status: status})
}

// write signs a 2xx the way the SDK checks it: SHA256withRSA over
// "ts\nnonce\nbody\n" with the platform key, the public key ID as serial. A 204
// is signed too (empty body); an unsigned 204 makes the SDK fail. Errors carry no
// signature, as WeChat's do not, which is why the SDK cannot verify them.
func (s *Sim) write(w http.ResponseWriter, r *http.Request, res result, badSignature bool) {
	s.record(r, res.status)
	h := w.Header()
	h.Set("Request-Id", "sim-"+randAlnum(16))
	if res.status < 200 || res.status > 299 {
		h.Set("Content-Type", "application/json")
		w.WriteHeader(res.status)
		_ = json.NewEncoder(w).Encode(map[string]string{"code": res.code, "message": res.message})
		return
	}
	if res.unsigned {
		h.Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(res.status)
		_, _ = w.Write(res.body)
		return
	}
	ts := strconv.FormatInt(s.opts.SignNow().Unix(), 10)
	nonce := randAlnum(32)
	msg := ts + "\n" + nonce + "\n" + string(res.body) + "\n"
	if badSignature {
		msg += "tampered"
	}
	key, serial := s.signer()
	sig, err := signSHA256(key, msg)
	if err != nil {
		http.Error(w, "sim: sign failed", http.StatusInternalServerError)
		return
	}
	h.Set("Wechatpay-Timestamp", ts)
	h.Set("Wechatpay-Nonce", nonce)
	h.Set("Wechatpay-Serial", serial)
	h.Set("Wechatpay-Signature", sig)
	h.Set("Wechatpay-Signature-Type", "WECHATPAY2-SHA256-RSA2048")
	if len(res.body) > 0 {
		h.Set("Content-Type", "application/json")
	}
	w.WriteHeader(res.status)
	_, _ = w.Write(res.body)
}

// verifyAuthorization checks the merchant signature exactly as WeChat does:
// WECHATPAY2-SHA256-RSA2048 with mchid, nonce_str, timestamp, serial_no and
// signature over "METHOD\nRequestURI\ntimestamp\nnonce\nbody\n". RequestURI is
// taken from r.URL, so a sim mounted under http.StripPrefix checks the path the
// SDK signed.
func (s *Sim) verifyAuthorization(r *http.Request, body []byte) error {
	scheme, params, found := strings.Cut(r.Header.Get("Authorization"), " ")
	if !found || scheme != "WECHATPAY2-SHA256-RSA2048" {
		return errors.New("请求头 Authorization 不是 WECHATPAY2-SHA256-RSA2048")
	}
	kv := map[string]string{}
	for _, part := range strings.Split(params, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		kv[k] = strings.Trim(v, `"`)
	}
	if kv["mchid"] != s.opts.MchID {
		return errors.New("mchid 与商户不符")
	}
	if s.opts.MerchantSerial != "" && kv["serial_no"] != s.opts.MerchantSerial {
		return errors.New("serial_no 与商户证书不符")
	}
	if kv["nonce_str"] == "" || kv["signature"] == "" {
		return errors.New("缺少 nonce_str 或 signature")
	}
	ts, err := strconv.ParseInt(kv["timestamp"], 10, 64)
	if err != nil {
		return errors.New("timestamp 无效")
	}
	if d := s.opts.SignNow().Unix() - ts; d >= 300 || d <= -300 {
		return errors.New("timestamp 已过期")
	}
	msg := r.Method + "\n" + r.URL.RequestURI() + "\n" + kv["timestamp"] + "\n" + kv["nonce_str"] + "\n" + string(body) + "\n"
	sig, err := base64.StdEncoding.DecodeString(kv["signature"])
	if err != nil {
		return errors.New("signature 不是 base64")
	}
	sum := sha256.Sum256([]byte(msg))
	if err := rsa.VerifyPKCS1v15(s.opts.MerchantPublicKey, crypto.SHA256, sum[:], sig); err != nil {
		return errors.New("验签失败")
	}
	return nil
}

func signSHA256(k *rsa.PrivateKey, msg string) (string, error) {
	sum := sha256.Sum256([]byte(msg))
	sig, err := rsa.SignPKCS1v15(nil, k, crypto.SHA256, sum[:])
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(sig), nil
}

const (
	pathJSAPI        = "/v3/pay/transactions/jsapi"
	pathCertificates = "/v3/certificates"
	pathOutTradeNo   = "/v3/pay/transactions/out-trade-no/"
	pathRefunds      = "/v3/refund/domestic/refunds"
	pathRefundsSlash = pathRefunds + "/"
)

func (s *Sim) route(r *http.Request, body []byte) result {
	p := r.URL.Path
	switch {
	case r.Method == http.MethodGet && p == pathCertificates:
		return s.certificates()
	case r.Method == http.MethodPost && p == pathJSAPI:
		return s.prepay(body)
	case r.Method == http.MethodPost && strings.HasPrefix(p, pathOutTradeNo) && strings.HasSuffix(p, "/close"):
		return s.closeOrder(strings.TrimSuffix(strings.TrimPrefix(p, pathOutTradeNo), "/close"), body)
	case r.Method == http.MethodGet && strings.HasPrefix(p, pathOutTradeNo):
		return s.queryOrder(strings.TrimPrefix(p, pathOutTradeNo), r.URL.Query().Get("mchid"))
	case r.Method == http.MethodPost && p == pathRefunds:
		return s.createRefund(body)
	case r.Method == http.MethodGet && strings.HasPrefix(p, pathRefundsSlash):
		return s.queryRefund(strings.TrimPrefix(p, pathRefundsSlash))
	case r.Method == http.MethodGet && p == pathTradeBill:
		return s.tradeBill(r.URL.Query())
	case r.Method == http.MethodGet && p == pathBillDownload:
		return s.billFile(r.URL.Query().Get("token"))
	}
	return fail(http.StatusNotFound, "NOT_FOUND", "sim: no such API: "+r.Method+" "+p)
}

type prepayRequest struct {
	AppID       string `json:"appid"`
	MchID       string `json:"mchid"`
	Description string `json:"description"`
	OutTradeNo  string `json:"out_trade_no"`
	TimeExpire  string `json:"time_expire"`
	Attach      string `json:"attach"`
	NotifyURL   string `json:"notify_url"`
	Amount      *struct {
		Total    *int64 `json:"total"`
		Currency string `json:"currency"`
	} `json:"amount"`
	Payer *struct {
		OpenID string `json:"openid"`
	} `json:"payer"`
}

// prepay implements POST /v3/pay/transactions/jsapi. An out_trade_no names one
// order for good: the same parameters again get a fresh prepay_id while it is
// payable; other parameters are OUT_TRADE_NO_USED; a closed (or expired) order
// is ORDER_CLOSED; a paid one ORDERPAID.
func (s *Sim) prepay(body []byte) result {
	var req prepayRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return fail(http.StatusBadRequest, "PARAM_ERROR", "请求体不是合法的JSON")
	}
	for _, f := range [][2]string{
		{"appid", req.AppID}, {"mchid", req.MchID}, {"description", req.Description},
		{"out_trade_no", req.OutTradeNo}, {"notify_url", req.NotifyURL},
	} {
		if f[1] == "" {
			return fail(http.StatusBadRequest, "PARAM_ERROR", "缺少参数 "+f[0])
		}
	}
	if req.Amount == nil || req.Amount.Total == nil {
		return fail(http.StatusBadRequest, "PARAM_ERROR", "缺少参数 amount.total")
	}
	if req.Payer == nil || req.Payer.OpenID == "" {
		return fail(http.StatusBadRequest, "PARAM_ERROR", "JSAPI支付必须传openid")
	}
	if req.MchID != s.opts.MchID {
		return fail(http.StatusBadRequest, "PARAM_ERROR", "mchid与请求商户号不一致")
	}
	if req.AppID != s.opts.AppID {
		return fail(http.StatusBadRequest, "APPID_MCHID_NOT_MATCH", "appid和mch_id不匹配")
	}
	if utf8.RuneCountInString(req.Description) > 127 {
		return fail(http.StatusBadRequest, "PARAM_ERROR", "description长度超过127")
	}
	if !outTradeNoRe.MatchString(req.OutTradeNo) {
		return fail(http.StatusBadRequest, "PARAM_ERROR", "out_trade_no格式错误")
	}
	if err := checkURL(req.NotifyURL); err != nil {
		return fail(http.StatusBadRequest, "PARAM_ERROR", "notify_url "+err.Error())
	}
	if *req.Amount.Total <= 0 {
		return fail(http.StatusBadRequest, "PARAM_ERROR", "amount.total必须大于0")
	}
	if req.Amount.Currency == "" {
		req.Amount.Currency = "CNY"
	}
	if req.Amount.Currency != "CNY" {
		return fail(http.StatusBadRequest, "PARAM_ERROR", "境内商户号仅支持CNY")
	}
	var expire time.Time
	if req.TimeExpire != "" {
		t, err := time.Parse(time.RFC3339, req.TimeExpire)
		if err != nil || !timeExpireRe.MatchString(req.TimeExpire) {
			return fail(http.StatusBadRequest, "PARAM_ERROR", "time_expire格式错误，应为yyyy-MM-DDTHH:mm:ss+TIMEZONE")
		}
		expire = t
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Now()
	prepayID := "wx" + now.In(cst).Format("20060102150405") + strings.ToLower(randAlnum(20))
	if o, found := s.orders[req.OutTradeNo]; found {
		switch {
		case o.State == StateClosed:
			return fail(http.StatusBadRequest, "ORDER_CLOSED", "订单已关闭")
		case o.State != StateNotPay:
			return fail(http.StatusBadRequest, "ORDERPAID", "该订单已支付")
		case !o.sameParams(&req, expire):
			return fail(http.StatusForbidden, "OUT_TRADE_NO_USED", "商户订单号重复")
		case o.hasExpire && now.After(o.TimeExpire):
			// The documents say a new out_trade_no is needed once time_expire has
			// passed; the sim answers like a closed order.
			return fail(http.StatusBadRequest, "ORDER_CLOSED", "订单已过期")
		}
		o.PrepayIDs = append(o.PrepayIDs, prepayID)
		return ok(map[string]string{"prepay_id": prepayID})
	}
	o := &order{Order: Order{
		OutTradeNo:    req.OutTradeNo,
		AppID:         req.AppID,
		MchID:         req.MchID,
		Description:   req.Description,
		Attach:        req.Attach,
		NotifyURL:     req.NotifyURL,
		OpenID:        req.Payer.OpenID,
		Total:         *req.Amount.Total,
		TimeExpireRaw: req.TimeExpire,
		CreatedAt:     now,
		State:         StateNotPay,
		PrepayIDs:     []string{prepayID},
	}}
	if req.TimeExpire != "" {
		// WeChat silently raises a deadline under one minute to one minute.
		o.requestedTime, o.hasExpire = expire, true
		o.TimeExpire = expire
		if min := now.Add(time.Minute); expire.Before(min) {
			o.TimeExpire = min
		}
	}
	s.orders[req.OutTradeNo] = o
	return ok(map[string]string{"prepay_id": prepayID})
}

func (o *order) sameParams(req *prepayRequest, expire time.Time) bool {
	if o.AppID != req.AppID || o.Description != req.Description || o.Attach != req.Attach ||
		o.NotifyURL != req.NotifyURL || o.Total != *req.Amount.Total || o.OpenID != req.Payer.OpenID {
		return false
	}
	if o.hasExpire != (req.TimeExpire != "") {
		return false
	}
	return !o.hasExpire || o.requestedTime.Equal(expire)
}

// closeOrder implements POST .../out-trade-no/{no}/close. WeChat answers 204 for
// an unknown or already closed number (it checks only the format), so the sim
// does too; only a paid order refuses, with ORDERPAID.
func (s *Sim) closeOrder(no string, body []byte) result {
	var req struct {
		MchID string `json:"mchid"`
	}
	if err := json.Unmarshal(body, &req); err != nil || req.MchID == "" {
		return fail(http.StatusBadRequest, "PARAM_ERROR", "缺少参数 mchid")
	}
	if req.MchID != s.opts.MchID {
		return fail(http.StatusBadRequest, "PARAM_ERROR", "mchid与请求商户号不一致")
	}
	if !outTradeNoRe.MatchString(no) {
		return fail(http.StatusBadRequest, "PARAM_ERROR", "out_trade_no格式错误")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if o, found := s.orders[no]; found {
		switch o.State {
		case StateNotPay:
			o.State = StateClosed
		case StateSuccess:
			return fail(http.StatusBadRequest, "ORDERPAID", "订单已支付，不能发起关单，请当作已支付的正常交易")
		}
	}
	return result{status: http.StatusNoContent}
}

// TransactionResource is the transaction as WeChat returns it from a query and
// encrypts it into a payment notification.
type TransactionResource struct {
	AppID          string             `json:"appid"`
	MchID          string             `json:"mchid"`
	OutTradeNo     string             `json:"out_trade_no"`
	TransactionID  string             `json:"transaction_id,omitempty"`
	TradeType      string             `json:"trade_type,omitempty"`
	TradeState     string             `json:"trade_state"`
	TradeStateDesc string             `json:"trade_state_desc"`
	BankType       string             `json:"bank_type,omitempty"`
	Attach         string             `json:"attach"`
	SuccessTime    string             `json:"success_time,omitempty"`
	Payer          *TransactionPayer  `json:"payer,omitempty"`
	Amount         *TransactionAmount `json:"amount,omitempty"`
}

// TransactionPayer is the payer of a transaction.
type TransactionPayer struct {
	OpenID string `json:"openid"`
}

// TransactionAmount is the amount of a transaction, in fen.
type TransactionAmount struct {
	Total         int64  `json:"total"`
	PayerTotal    int64  `json:"payer_total"`
	Currency      string `json:"currency"`
	PayerCurrency string `json:"payer_currency"`
}

var stateDesc = map[string]string{
	StateNotPay:  "订单未支付",
	StateSuccess: "支付成功",
	StateClosed:  "订单已关闭",
	StateRefund:  "转入退款",
}

// transaction renders an order; callers hold s.mu.
func (o *order) transaction() *TransactionResource {
	st := o.tradeState()
	t := &TransactionResource{
		AppID:          o.AppID,
		MchID:          o.MchID,
		OutTradeNo:     o.OutTradeNo,
		TradeState:     st,
		TradeStateDesc: stateDesc[st],
		Attach:         o.Attach,
		Payer:          &TransactionPayer{OpenID: o.OpenID},
		Amount:         &TransactionAmount{Total: o.Total, Currency: "CNY", PayerCurrency: "CNY"},
	}
	if o.TransactionID != "" {
		t.TransactionID = o.TransactionID
		t.TradeType = "JSAPI"
		t.BankType = "OTHERS"
		t.SuccessTime = o.SuccessTime.In(cst).Format(time.RFC3339)
		t.Amount.PayerTotal = o.Total
	}
	return t
}

// queryOrder implements GET .../out-trade-no/{no}?mchid=.
func (s *Sim) queryOrder(no, mchID string) result {
	if mchID != s.opts.MchID {
		return fail(http.StatusBadRequest, "PARAM_ERROR", "mchid缺失或与请求商户号不一致")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o, found := s.orders[no]
	if !found {
		return fail(http.StatusNotFound, "ORDER_NOT_EXIST", "订单不存在")
	}
	return ok(o.transaction())
}

type refundRequest struct {
	TransactionID string `json:"transaction_id"`
	OutTradeNo    string `json:"out_trade_no"`
	OutRefundNo   string `json:"out_refund_no"`
	Reason        string `json:"reason"`
	NotifyURL     string `json:"notify_url"`
	Amount        *struct {
		Refund   *int64 `json:"refund"`
		Total    *int64 `json:"total"`
		Currency string `json:"currency"`
	} `json:"amount"`
}

// createRefund implements POST /v3/refund/domestic/refunds. An out_refund_no
// refunds once: the same request again answers the existing refund.
func (s *Sim) createRefund(body []byte) result {
	var req refundRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return fail(http.StatusBadRequest, "PARAM_ERROR", "请求体不是合法的JSON")
	}
	switch {
	case !outRefundNoRe.MatchString(req.OutRefundNo):
		return fail(http.StatusBadRequest, "PARAM_ERROR", "out_refund_no缺失或格式错误")
	case req.OutTradeNo == "" && req.TransactionID == "":
		return fail(http.StatusBadRequest, "PARAM_ERROR", "transaction_id和out_trade_no必须二选一")
	case req.Amount == nil || req.Amount.Refund == nil || req.Amount.Total == nil || req.Amount.Currency == "":
		return fail(http.StatusBadRequest, "PARAM_ERROR", "缺少参数 amount.refund/total/currency")
	case req.Amount.Currency != "CNY":
		return fail(http.StatusBadRequest, "PARAM_ERROR", "境内商户号仅支持CNY")
	case *req.Amount.Refund <= 0 || *req.Amount.Total <= 0:
		return fail(http.StatusBadRequest, "PARAM_ERROR", "金额必须大于0")
	}
	if req.NotifyURL != "" {
		if err := checkURL(req.NotifyURL); err != nil {
			return fail(http.StatusBadRequest, "PARAM_ERROR", "notify_url "+err.Error())
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refusing[req.OutTradeNo] {
		return fail(http.StatusInternalServerError, "SYSTEM_ERROR", "系统错误")
	}
	o := s.findOrder(req.OutTradeNo, req.TransactionID)
	if rf, found := s.refunds[req.OutRefundNo]; found {
		if o == nil || rf.OutTradeNo != o.OutTradeNo || rf.Amount != *req.Amount.Refund {
			return fail(http.StatusBadRequest, "INVALID_REQUEST", "退款单号已存在，且与本次请求参数不一致")
		}
		return ok(rf.json())
	}
	if o == nil || o.TransactionID == "" {
		return fail(http.StatusNotFound, "RESOURCE_NOT_EXISTS", "订单不存在或未支付")
	}
	if *req.Amount.Total != o.Total {
		return fail(http.StatusBadRequest, "PARAM_ERROR", "订单金额total与原订单不一致")
	}
	if o.Refunded+*req.Amount.Refund > o.Total {
		return fail(http.StatusForbidden, "NOT_ENOUGH", "申请退款金额超过订单可退金额")
	}
	now := s.opts.Now()
	rf := &refund{Refund: Refund{
		OutRefundNo:   req.OutRefundNo,
		RefundID:      fmt.Sprintf("50%018d%012d", s.nextSeq(), now.Unix()%1e12),
		OutTradeNo:    o.OutTradeNo,
		TransactionID: o.TransactionID,
		Reason:        req.Reason,
		NotifyURL:     req.NotifyURL,
		Status:        RefundProcessing,
		Amount:        *req.Amount.Refund,
		Total:         o.Total,
		CreatedAt:     now,
	}}
	o.Refunded += rf.Amount
	s.refunds[req.OutRefundNo] = rf
	return ok(rf.json())
}

// findOrder looks an order up by out_trade_no or transaction_id; callers hold s.mu.
func (s *Sim) findOrder(outTradeNo, transactionID string) *order {
	if outTradeNo != "" {
		return s.orders[outTradeNo]
	}
	for _, o := range s.orders {
		if o.TransactionID != "" && o.TransactionID == transactionID {
			return o
		}
	}
	return nil
}

// queryRefund implements GET /v3/refund/domestic/refunds/{out_refund_no}.
func (s *Sim) queryRefund(no string) result {
	s.mu.Lock()
	defer s.mu.Unlock()
	rf, found := s.refunds[no]
	if !found {
		return fail(http.StatusNotFound, "RESOURCE_NOT_EXISTS", "退款单不存在")
	}
	return ok(rf.json())
}

type refundAmountJSON struct {
	Total            int64    `json:"total"`
	Refund           int64    `json:"refund"`
	From             []string `json:"from"`
	PayerTotal       int64    `json:"payer_total"`
	PayerRefund      int64    `json:"payer_refund"`
	SettlementRefund int64    `json:"settlement_refund"`
	SettlementTotal  int64    `json:"settlement_total"`
	DiscountRefund   int64    `json:"discount_refund"`
	Currency         string   `json:"currency"`
}

type refundJSON struct {
	RefundID            string           `json:"refund_id"`
	OutRefundNo         string           `json:"out_refund_no"`
	TransactionID       string           `json:"transaction_id"`
	OutTradeNo          string           `json:"out_trade_no"`
	Channel             string           `json:"channel"`
	UserReceivedAccount string           `json:"user_received_account"`
	SuccessTime         string           `json:"success_time,omitempty"`
	CreateTime          string           `json:"create_time"`
	Status              string           `json:"status"`
	FundsAccount        string           `json:"funds_account"`
	Amount              refundAmountJSON `json:"amount"`
}

// json renders a refund as the refund API answers it; callers hold s.mu.
func (rf *refund) json() refundJSON {
	j := refundJSON{
		RefundID:            rf.RefundID,
		OutRefundNo:         rf.OutRefundNo,
		TransactionID:       rf.TransactionID,
		OutTradeNo:          rf.OutTradeNo,
		Channel:             "ORIGINAL",
		UserReceivedAccount: "支付用户零钱",
		CreateTime:          rf.CreatedAt.In(cst).Format(time.RFC3339),
		Status:              rf.Status,
		FundsAccount:        "AVAILABLE",
		Amount: refundAmountJSON{
			Total: rf.Total, Refund: rf.Amount, From: []string{},
			PayerTotal: rf.Total, PayerRefund: rf.Amount,
			SettlementRefund: rf.Amount, SettlementTotal: rf.Total,
			Currency: "CNY",
		},
	}
	if !rf.SuccessTime.IsZero() {
		j.SuccessTime = rf.SuccessTime.In(cst).Format(time.RFC3339)
	}
	return j
}

// checkURL applies WeChat's notify_url rules, except that plain http is allowed
// for local development.
func checkURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return errors.New("必须是绝对URL")
	case u.RawQuery != "":
		return errors.New("不能携带参数")
	case len(s) > 255:
		return errors.New("长度超过255")
	}
	return nil
}

// jsonBytes marshals without HTML escaping, as WeChat's own JSON reads.
func jsonBytes(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
