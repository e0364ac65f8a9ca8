package wxpaysim

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// NotificationParts is everything a notification is made of, exposed so tests can
// forge variants: change a field in a mutate function passed to
// BuildPaymentNotification or BuildRefundNotification. The body is assembled from
// the envelope fields in WeChat's order, the resource is sealed with APIv3Key,
// and the body is signed with SigningKey, in that order, after all mutations.
type NotificationParts struct {
	// Envelope.
	ID           string
	CreateTime   string
	EventType    string // TRANSACTION.SUCCESS, REFUND.SUCCESS, ...
	ResourceType string // encrypt-resource
	Summary      string

	// Encrypted resource.
	OriginalType   string // transaction or refund
	Algorithm      string // AEAD_AES_256_GCM
	AssociatedData string
	GCMNonce       string // 12 bytes; another length is sealed with that nonce size
	// Resource is the plaintext: *TransactionResource or *RefundResource, or any
	// value that marshals to JSON. Change its fields to forge a verified
	// notification with a wrong amount, appid or mchid.
	Resource any
	APIv3Key []byte // seal with another key to model a decryption failure
	// Ciphertext, when set, is used verbatim instead of sealing Resource.
	Ciphertext string
	// Body, when non-nil, is signed and sent verbatim instead of the envelope
	// (for fuzzing and for bodies no envelope field can express).
	Body []byte

	// Headers.
	Timestamp     int64  // Wechatpay-Timestamp; move it 300 s or more to make it stale
	Nonce         string // Wechatpay-Nonce
	Serial        string // Wechatpay-Serial; the public key ID, or the certificate serial in ModePlatformCert
	SignatureType string // Wechatpay-Signature-Type
	SigningKey    *rsa.PrivateKey
	// Signature, when set, is sent verbatim (e.g. "WECHATPAY/SIGNTEST/..."),
	// as WeChat's deliberately mis-signed probes are.
	Signature string
}

// RefundResource is the plaintext of a refund notification.
type RefundResource struct {
	MchID               string               `json:"mchid"`
	OutTradeNo          string               `json:"out_trade_no"`
	TransactionID       string               `json:"transaction_id"`
	OutRefundNo         string               `json:"out_refund_no"`
	RefundID            string               `json:"refund_id"`
	RefundStatus        string               `json:"refund_status"`
	SuccessTime         string               `json:"success_time,omitempty"`
	UserReceivedAccount string               `json:"user_received_account"`
	Amount              RefundResourceAmount `json:"amount"`
}

// RefundResourceAmount is the amount block of a refund notification, in fen.
type RefundResourceAmount struct {
	Total       int64 `json:"total"`
	Refund      int64 `json:"refund"`
	PayerTotal  int64 `json:"payer_total"`
	PayerRefund int64 `json:"payer_refund"`
}

// envelope fixes WeChat's field order; encoding/json keeps struct order.
type envelope struct {
	ID           string           `json:"id"`
	CreateTime   string           `json:"create_time"`
	ResourceType string           `json:"resource_type"`
	EventType    string           `json:"event_type"`
	Summary      string           `json:"summary"`
	Resource     envelopeResource `json:"resource"`
}

type envelopeResource struct {
	OriginalType   string `json:"original_type"`
	Algorithm      string `json:"algorithm"`
	Ciphertext     string `json:"ciphertext"`
	AssociatedData string `json:"associated_data"`
	Nonce          string `json:"nonce"`
}

func (s *Sim) defaultParts() NotificationParts {
	key, serial := s.signer()
	return NotificationParts{
		ID:            newEventID(),
		CreateTime:    s.opts.Now().In(cst).Format(time.RFC3339),
		ResourceType:  "encrypt-resource",
		Algorithm:     "AEAD_AES_256_GCM",
		GCMNonce:      randAlnum(12),
		APIv3Key:      []byte(s.apiV3Key),
		Timestamp:     s.opts.SignNow().Unix(),
		Nonce:         randAlnum(32),
		Serial:        serial,
		SignatureType: "WECHATPAY2-SHA256-RSA2048",
		SigningKey:    key,
	}
}

// BuildPaymentNotification builds a TRANSACTION.SUCCESS notification for an order
// the sim knows, signed and encrypted exactly as WeChat's, and lets mutate change
// any part first. It describes the order as paid even if the sim has not marked
// it paid (a forged or early notification); Pay is the real thing. headers use
// canonical names.
func (s *Sim) BuildPaymentNotification(outTradeNo string, mutate ...func(*NotificationParts)) (headers map[string]string, body []byte, err error) {
	p := s.defaultParts()
	s.mu.Lock()
	o, found := s.orders[outTradeNo]
	if found {
		tx := o.transaction()
		if o.TransactionID == "" {
			now := s.opts.Now()
			tx.TransactionID = newTransactionID()
			tx.TradeType, tx.BankType = "JSAPI", "OTHERS"
			tx.SuccessTime = now.In(cst).Format(time.RFC3339)
			tx.Amount.PayerTotal = o.Total
		}
		tx.TradeState, tx.TradeStateDesc = StateSuccess, stateDesc[StateSuccess]
		p.Resource = tx
		if o.eventID != "" {
			p.ID = o.eventID
		}
	}
	s.mu.Unlock()
	if !found {
		return nil, nil, fmt.Errorf("%w: order %s", ErrNotFound, outTradeNo)
	}
	p.EventType, p.Summary = "TRANSACTION.SUCCESS", "支付成功"
	p.OriginalType, p.AssociatedData = "transaction", "transaction"
	for _, m := range mutate {
		m(&p)
	}
	return assemble(p)
}

// BuildRefundNotification builds the REFUND.* notification for a refund in its
// current state (a PROCESSING refund is described as SUCCESS).
func (s *Sim) BuildRefundNotification(outRefundNo string, mutate ...func(*NotificationParts)) (headers map[string]string, body []byte, err error) {
	p := s.defaultParts()
	s.mu.Lock()
	rf, found := s.refunds[outRefundNo]
	var status string
	if found {
		status = rf.Status
		res := &RefundResource{
			MchID:               s.opts.MchID,
			OutTradeNo:          rf.OutTradeNo,
			TransactionID:       rf.TransactionID,
			OutRefundNo:         rf.OutRefundNo,
			RefundID:            rf.RefundID,
			RefundStatus:        status,
			UserReceivedAccount: "支付用户零钱",
			Amount:              RefundResourceAmount{Total: rf.Total, Refund: rf.Amount, PayerTotal: rf.Total, PayerRefund: rf.Amount},
		}
		if status == RefundProcessing {
			status, res.RefundStatus = RefundSuccess, RefundSuccess
		}
		if status == RefundSuccess {
			t := rf.SuccessTime
			if t.IsZero() {
				t = s.opts.Now()
			}
			res.SuccessTime = t.In(cst).Format(time.RFC3339)
		}
		p.Resource = res
		if rf.eventID != "" {
			p.ID = rf.eventID
		}
	}
	s.mu.Unlock()
	if !found {
		return nil, nil, fmt.Errorf("%w: refund %s", ErrNotFound, outRefundNo)
	}
	p.EventType = "REFUND." + status
	p.Summary = map[string]string{RefundSuccess: "退款成功", RefundAbnormal: "退款异常", RefundClosed: "退款关闭"}[status]
	p.OriginalType, p.AssociatedData = "refund", "refund"
	for _, m := range mutate {
		m(&p)
	}
	return assemble(p)
}

// assemble seals, writes and signs a notification from its parts.
func assemble(p NotificationParts) (map[string]string, []byte, error) {
	if p.Body != nil {
		return sign(p, p.Body)
	}
	ciphertext := p.Ciphertext
	if ciphertext == "" {
		plaintext, err := jsonBytes(p.Resource)
		if err != nil {
			return nil, nil, fmt.Errorf("wxpaysim: marshal resource: %w", err)
		}
		ciphertext, err = seal(p.APIv3Key, p.GCMNonce, plaintext, p.AssociatedData)
		if err != nil {
			return nil, nil, err
		}
	}
	body, err := jsonBytes(envelope{
		ID: p.ID, CreateTime: p.CreateTime, ResourceType: p.ResourceType, EventType: p.EventType, Summary: p.Summary,
		Resource: envelopeResource{
			OriginalType: p.OriginalType, Algorithm: p.Algorithm, Ciphertext: ciphertext,
			AssociatedData: p.AssociatedData, Nonce: p.GCMNonce,
		},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("wxpaysim: marshal envelope: %w", err)
	}
	return sign(p, body)
}

// sign produces the Wechatpay-* headers over "ts\nnonce\nbody\n".
func sign(p NotificationParts, body []byte) (map[string]string, []byte, error) {
	var err error
	ts := strconv.FormatInt(p.Timestamp, 10)
	sig := p.Signature
	if sig == "" {
		if p.SigningKey == nil {
			return nil, nil, errors.New("wxpaysim: no signing key")
		}
		if sig, err = signSHA256(p.SigningKey, ts+"\n"+p.Nonce+"\n"+string(body)+"\n"); err != nil {
			return nil, nil, fmt.Errorf("wxpaysim: sign notification: %w", err)
		}
	}
	headers := map[string]string{
		"Content-Type":        "application/json",
		"Wechatpay-Timestamp": ts,
		"Wechatpay-Nonce":     p.Nonce,
		"Wechatpay-Serial":    p.Serial,
		"Wechatpay-Signature": sig,
	}
	if p.SignatureType != "" {
		headers["Wechatpay-Signature-Type"] = p.SignatureType
	}
	return headers, body, nil
}

// seal encrypts with AES-GCM under key, using the nonce's own length so a test can
// produce the wrong-length nonce that makes the SDK's gcm.Open panic.
func seal(key []byte, nonce string, plaintext []byte, ad string) (string, error) {
	if nonce == "" {
		junk := make([]byte, len(plaintext)+16)
		_, _ = rand.Read(junk)
		return base64.StdEncoding.EncodeToString(junk), nil
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return "", fmt.Errorf("wxpaysim: APIv3 key: %w", err)
	}
	var gcm cipher.AEAD
	if len(nonce) == 12 {
		gcm, err = cipher.NewGCM(block)
	} else {
		gcm, err = cipher.NewGCMWithNonceSize(block, len(nonce))
	}
	if err != nil {
		return "", fmt.Errorf("wxpaysim: gcm: %w", err)
	}
	return base64.StdEncoding.EncodeToString(gcm.Seal(nil, []byte(nonce), plaintext, []byte(ad))), nil
}

// Deliver POSTs a notification as WeChat does and reports an error unless the
// receiver answered 2xx. Use it to send forged notifications to a real handler.
func (s *Sim) Deliver(ctx context.Context, url string, headers map[string]string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("wxpaysim: notification request: %w", err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("User-Agent", "Mozilla/4.0")
	resp, err := s.opts.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("wxpaysim: deliver to %s: %w", url, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("wxpaysim: %s answered %d: %s", url, resp.StatusCode, answer)
	}
	return nil
}

// Pay marks a payable order paid (NOTPAY, and not past its time_expire) and
// delivers the TRANSACTION.SUCCESS notification to its notify_url. An error after
// the order was marked paid means only the delivery failed; Notify delivers again.
func (s *Sim) Pay(ctx context.Context, outTradeNo string) error {
	return s.pay(ctx, outTradeNo, false)
}

// PayLate pays even after time_expire, and even an order that was closed meanwhile
// (which WeChat itself cannot do). It stands for a payment completed at the last
// moment whose notification arrives after the booking was released.
func (s *Sim) PayLate(ctx context.Context, outTradeNo string) error {
	return s.pay(ctx, outTradeNo, true)
}

func (s *Sim) pay(ctx context.Context, outTradeNo string, late bool) error {
	s.mu.Lock()
	o, found := s.orders[outTradeNo]
	if !found {
		s.mu.Unlock()
		return fmt.Errorf("%w: order %s", ErrNotFound, outTradeNo)
	}
	now := s.opts.Now()
	switch {
	case o.State == StateSuccess:
		s.mu.Unlock()
		return fmt.Errorf("%w: %s is already paid", ErrNotPayable, outTradeNo)
	case o.State == StateClosed && !late:
		s.mu.Unlock()
		return fmt.Errorf("%w: %s is closed", ErrNotPayable, outTradeNo)
	case o.hasExpire && now.After(o.TimeExpire) && !late:
		s.mu.Unlock()
		return fmt.Errorf("%w: %s expired at %s", ErrNotPayable, outTradeNo, o.TimeExpire.In(cst).Format(time.RFC3339))
	}
	o.State = StateSuccess
	o.TransactionID = newTransactionID()
	o.SuccessTime = now
	o.eventID = newEventID()
	s.mu.Unlock()
	return s.Notify(ctx, outTradeNo)
}

// Notify (re)delivers the payment notification of a paid order, as WeChat does on
// its retry schedule and, at times, twice within a second.
func (s *Sim) Notify(ctx context.Context, outTradeNo string) error {
	url, err := s.paidNotifyURL(outTradeNo)
	if err != nil {
		return err
	}
	h, body, err := s.BuildPaymentNotification(outTradeNo)
	if err != nil {
		return err
	}
	if err := s.Deliver(ctx, url, h, body); err != nil {
		return err
	}
	s.mu.Lock()
	s.orders[outTradeNo].Notified++
	s.mu.Unlock()
	return nil
}

// NotifyConcurrently delivers the payment notification of a paid order n times at
// once (each separately signed, one event id), and joins the delivery errors.
func (s *Sim) NotifyConcurrently(ctx context.Context, outTradeNo string, n int) error {
	url, err := s.paidNotifyURL(outTradeNo)
	if err != nil {
		return err
	}
	type note struct {
		h    map[string]string
		body []byte
	}
	notes := make([]note, n)
	for i := range notes {
		if notes[i].h, notes[i].body, err = s.BuildPaymentNotification(outTradeNo); err != nil {
			return err
		}
	}
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		errs  = make([]error, n)
	)
	for i := range notes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start // release all at once so they really race at the receiver
			errs[i] = s.Deliver(ctx, url, notes[i].h, notes[i].body)
		}()
	}
	close(start)
	wg.Wait()
	delivered := 0
	for _, e := range errs {
		if e == nil {
			delivered++
		}
	}
	s.mu.Lock()
	s.orders[outTradeNo].Notified += delivered
	s.mu.Unlock()
	return errors.Join(errs...)
}

func (s *Sim) paidNotifyURL(outTradeNo string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, found := s.orders[outTradeNo]
	switch {
	case !found:
		return "", fmt.Errorf("%w: order %s", ErrNotFound, outTradeNo)
	case o.State != StateSuccess:
		return "", fmt.Errorf("wxpaysim: order %s is %s, not paid", outTradeNo, o.State)
	}
	return o.NotifyURL, nil
}

// CompleteRefund settles a PROCESSING refund as SUCCESS, ABNORMAL or CLOSED and
// delivers the REFUND.* notification to the refund's notify_url. Called again
// with the refund's current status, it redelivers. A CLOSED refund returns its
// amount to what the order can still refund.
func (s *Sim) CompleteRefund(ctx context.Context, outRefundNo, status string) error {
	return s.completeRefund(ctx, outRefundNo, status, true)
}

// CompleteRefundSilently settles a refund like CompleteRefund but its
// notification is lost on the way: only a refund query learns the outcome.
func (s *Sim) CompleteRefundSilently(outRefundNo, status string) error {
	return s.completeRefund(context.Background(), outRefundNo, status, false)
}

func (s *Sim) completeRefund(ctx context.Context, outRefundNo, status string, notify bool) error {
	if status != RefundSuccess && status != RefundAbnormal && status != RefundClosed {
		return fmt.Errorf("wxpaysim: refund status must be SUCCESS, ABNORMAL or CLOSED, not %q", status)
	}
	s.mu.Lock()
	rf, found := s.refunds[outRefundNo]
	if !found {
		s.mu.Unlock()
		return fmt.Errorf("%w: refund %s", ErrNotFound, outRefundNo)
	}
	switch rf.Status {
	case status: // redelivery
	case RefundProcessing:
		rf.Status = status
		rf.eventID = newEventID()
		switch status {
		case RefundSuccess:
			rf.SuccessTime = s.opts.Now()
		case RefundClosed:
			if o := s.orders[rf.OutTradeNo]; o != nil {
				o.Refunded -= rf.Amount
			}
		}
	default:
		s.mu.Unlock()
		return fmt.Errorf("wxpaysim: refund %s is already %s", outRefundNo, rf.Status)
	}
	url := rf.NotifyURL
	s.mu.Unlock()
	if !notify {
		return nil
	}
	if url == "" {
		return fmt.Errorf("wxpaysim: refund %s has no notify_url", outRefundNo)
	}
	h, body, err := s.BuildRefundNotification(outRefundNo)
	if err != nil {
		return err
	}
	if err := s.Deliver(ctx, url, h, body); err != nil {
		return err
	}
	s.mu.Lock()
	rf.Notified++
	s.mu.Unlock()
	return nil
}

func newTransactionID() string { return "4200" + randDigits(24) }

func newEventID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
