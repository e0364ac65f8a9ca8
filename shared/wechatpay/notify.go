package wechatpay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"salon/shared/booking"
	"strings"
	"unicode/utf8"

	"github.com/wechatpay-apiv3/wechatpay-go/core/notify"
	"github.com/wechatpay-apiv3/wechatpay-go/services/payments"
)

// ErrInvalidNotification marks a notification that failed verification (header,
// signature, timestamp, serial) or decryption. Answer it with a failure status:
// a forged or probe notification must never look accepted, and a genuine one that
// failed for a transient reason will be redelivered.
var ErrInvalidNotification = errors.New("wechatpay: invalid notification")

// maxNotificationBytes bounds what is read from a notification body. WeChat's are
// about 1 KiB; the product's gateway limit is 64 KiB.
const maxNotificationBytes = 64 << 10

// Payment is a verified and decrypted payment notification, and RefundNotice
// a refund notification: the service's vocabulary (package booking).
type (
	Payment      = booking.PaymentNotice
	RefundNotice = booking.RefundNotice
)

// refundResource is the plaintext of a refund notification. The SDK has no model
// for it, and refunddomestic.Refund does not fit (its field is "status", the
// notification's is "refund_status").
type refundResource struct {
	MchID         string `json:"mchid"`
	OutTradeNo    string `json:"out_trade_no"`
	TransactionID string `json:"transaction_id"`
	OutRefundNo   string `json:"out_refund_no"`
	RefundID      string `json:"refund_id"`
	RefundStatus  string `json:"refund_status"`
	SuccessTime   string `json:"success_time"`
	Amount        struct {
		Total  int64 `json:"total"`
		Refund int64 `json:"refund"`
	} `json:"amount"`
}

// ParsePaymentNotification verifies (signature, then decryption) the payment
// notification in r and returns its content. Every failure wraps
// ErrInvalidNotification and carries only a short cause: the SDK's own error text
// dumps the whole request, which does not belong in an answer or a log line.
// r.Body is consumed and replaced by an in-memory copy.
func (c *Client) ParsePaymentNotification(ctx context.Context, r *http.Request) (*Payment, error) {
	tx := new(payments.Transaction)
	n, err := c.parse(ctx, r, tx, "TRANSACTION.")
	if err != nil {
		return nil, err
	}
	p := &Payment{EventID: n.ID, EventType: n.EventType, OrderState: *orderState(tx)}
	return p, nil
}

// ParseRefundNotification is ParsePaymentNotification for refund notifications.
func (c *Client) ParseRefundNotification(ctx context.Context, r *http.Request) (*RefundNotice, error) {
	res := new(refundResource)
	n, err := c.parse(ctx, r, res, "REFUND.")
	if err != nil {
		return nil, err
	}
	return &RefundNotice{
		EventID:       n.ID,
		EventType:     n.EventType,
		MchID:         res.MchID,
		OutTradeNo:    res.OutTradeNo,
		TransactionID: res.TransactionID,
		OutRefundNo:   res.OutRefundNo,
		RefundID:      res.RefundID,
		RefundStatus:  booking.WeChatRefundState(res.RefundStatus),
		RefundFen:     res.Amount.Refund,
		TotalFen:      res.Amount.Total,
		SuccessTime:   parseTime(res.SuccessTime),
	}, nil
}

// parse runs the SDK handler. content must be a pointer: the SDK unmarshals into
// &content, and a map passed by value silently stays empty. The event type prefix
// keeps a refund notification delivered to the payment URL (or the reverse) from
// being read as the wrong kind; it is protocol, not business.
func (c *Client) parse(ctx context.Context, r *http.Request, content any, eventPrefix string) (n *notify.Request, err error) {
	if r == nil {
		return nil, fmt.Errorf("%w: no request", ErrInvalidNotification)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	body, err := readBody(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidNotification, err)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))

	// A signed notification whose resource nonce is not 12 bytes makes the SDK's
	// gcm.Open panic. Real WeChat never sends one, but a panic must not take the
	// function down with it.
	defer func() {
		if p := recover(); p != nil {
			n, err = nil, fmt.Errorf("%w: decrypt: malformed resource (%s)", ErrInvalidNotification, shorten(fmt.Sprint(p)))
		}
	}()
	n, err = c.notify.ParseNotifyRequest(ctx, r, content)
	if err != nil {
		cause := shortCause(err)
		if n != nil && n.ID != "" {
			// Decryption failed after the signature was verified: the id is
			// WeChat's and helps to find the event in its merchant console.
			cause = "event " + shorten(n.ID) + ": " + cause
		}
		return nil, fmt.Errorf("%w: %s", ErrInvalidNotification, cause)
	}
	if !strings.HasPrefix(n.EventType, eventPrefix) {
		return nil, fmt.Errorf("%w: event type %q is not %s*", ErrInvalidNotification, shorten(n.EventType), eventPrefix)
	}
	return n, nil
}

func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	defer r.Body.Close()
	b, err := io.ReadAll(io.LimitReader(r.Body, maxNotificationBytes+1))
	if err != nil {
		return nil, errors.New("read body failed")
	}
	if len(b) > maxNotificationBytes {
		return nil, errors.New("body too large")
	}
	return b, nil
}

// shortCause keeps the SDK's reason and drops the request dump it appends
// ("invalid notification, err: <cause>, request: &{...}").
func shortCause(err error) string {
	s := err.Error()
	if i := strings.Index(s, ", request: "); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimPrefix(s, "invalid notification, err: ")
	return shorten(s)
}

// shorten bounds text that may come from the sender's headers, so a hostile
// notification cannot fill the log.
func shorten(s string) string {
	const max = 240
	if len(s) <= max {
		return s
	}
	s = s[:max]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "..."
}

// RequestFromEvent rebuilds the HTTP request WeChat sent from an API Gateway or
// Function URL event, in the only way the signature survives: the body byte for
// byte (the caller has already base64-decoded it when isBase64Encoded), and every
// header set through Header.Set, which canonicalises the gateway's lower-case
// names ("wechatpay-signature" -> "Wechatpay-Signature") so the SDK finds them.
func RequestFromEvent(ctx context.Context, path string, headers map[string]string, body []byte) *http.Request {
	if ctx == nil {
		ctx = context.Background()
	}
	if path == "" || !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, path, bytes.NewReader(body))
	if err != nil {
		// The path is only informational; an odd one must not lose the notification.
		r, _ = http.NewRequestWithContext(ctx, http.MethodPost, "/", bytes.NewReader(body))
	}
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	return r
}
