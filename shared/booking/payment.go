package booking

import (
	"errors"
	"time"
)

// The vocabulary of payments, as the service speaks it to WeChat Pay (package
// wechatpay implements it; its simulator speaks the same protocol).

// Outcomes of payment calls the service tells apart (errors.Is).
var (
	// ErrOrderNotExist: WeChat Pay's signed answer says it has no such order,
	// so nothing can ever be paid for it.
	ErrOrderNotExist = errors.New("wechatpay: order does not exist")
	// ErrRefundRefused: WeChat Pay refused a refund for a reason asking again
	// cannot mend; the salon has to handle it.
	ErrRefundRefused = errors.New("WeChat Pay refused the refund for good")
	// ErrRefundWaitsForBalance: the merchant's balance is too low (NOT_ENOUGH);
	// the same request succeeds once the salon tops it up.
	ErrRefundWaitsForBalance = errors.New("the merchant's balance is too low for the refund")
)

// PayOrder is one JSAPI order: one booking, one out_trade_no.
type PayOrder struct {
	OutTradeNo  string // 6-32 of [0-9A-Za-z_-]; deterministic per booking so retries name the same order
	Description string // at most 127 characters, shown in the customer's bill
	OpenID      string // the payer, under WX_APPID
	AmountFen   int64
	TimeExpire  time.Time // the booking's lock_expire; zero means none
}

// PaymentParams are the arguments of wx.requestPayment in the mini-program.
type PaymentParams struct {
	TimeStamp string `json:"timeStamp"`
	NonceStr  string `json:"nonceStr"`
	Package   string `json:"package"`
	SignType  string `json:"signType"`
	PaySign   string `json:"paySign"`
}

// OrderState is a signature-verified answer about an order (a query's, or a
// payment notification's). The caller checks AppID, MchID and AmountTotal
// against its booking before trusting a SUCCESS.
type OrderState struct {
	TradeState    TradeState
	TransactionID string
	AppID         string
	MchID         string
	OutTradeNo    string
	PayerOpenID   string
	AmountTotal   int64
	SuccessTime   *time.Time // nil unless paid (or if WeChat sent an unparsable time)
}

// RefundRequest refunds (part of) a paid order. OutRefundNo must be deterministic
// (OutRefundNo): WeChat refunds a number once, so a retry with the same number
// after SYSTEM_ERROR or a timeout can never pay out twice.
type RefundRequest struct {
	OutTradeNo  string
	OutRefundNo string
	Reason      string
	RefundFen   int64
	TotalFen    int64 // the order's amount, which WeChat checks
}

// RefundResult is WeChat's view of a refund. Status is SUCCESS, CLOSED,
// PROCESSING or ABNORMAL; a new refund is normally PROCESSING and its outcome
// arrives as a refund notification (or through a query).
type RefundResult struct {
	RefundID    string
	OutRefundNo string
	Status      WeChatRefundState
	SuccessTime *time.Time
}

// PaymentNotice is a verified and decrypted payment notification. Nothing in it
// has been compared with a booking: the caller checks EventType/TradeState,
// AppID, MchID, OutTradeNo and AmountTotal.
type PaymentNotice struct {
	EventID   string
	EventType string // TRANSACTION.SUCCESS
	// OrderState is the decrypted transaction, the same shape a signed query
	// answers, so a payment is checked the same way however it was learnt.
	OrderState
}

// RefundNotice is a verified and decrypted refund notification.
type RefundNotice struct {
	EventID       string
	EventType     string // REFUND.SUCCESS, REFUND.ABNORMAL or REFUND.CLOSED
	MchID         string
	OutTradeNo    string
	TransactionID string
	OutRefundNo   string
	RefundID      string
	RefundStatus  WeChatRefundState // SUCCESS, ABNORMAL or CLOSED
	RefundFen     int64
	TotalFen      int64
	SuccessTime   *time.Time
}
