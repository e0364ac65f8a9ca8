package booking

import (
	"errors"
	"fmt"
)

// Application error codes, fixed by the API (functions/README.md, "Errors"). The
// HTTP mapping lives in one table
// in package apigw.
const (
	EBADREQUEST          = "BAD_REQUEST"
	EUNAUTHORIZED        = "UNAUTHORIZED"
	EFORBIDDEN           = "FORBIDDEN"
	ENOTFOUND            = "NOT_FOUND"
	ESOLDOUT             = "SOLD_OUT"
	EACTIVEBOOKINGEXISTS = "ACTIVE_BOOKING_EXISTS"
	EINVALIDSTATE        = "INVALID_STATE"
	EPAYLOADTOOLARGE     = "PAYLOAD_TOO_LARGE"
	ESLOTNOTBOOKABLE     = "SLOT_NOT_BOOKABLE"
	EINTERNAL            = "INTERNAL"
	EUPSTREAM            = "UPSTREAM_UNAVAILABLE"
	ENOSHOWLIMIT         = "NO_SHOW_LIMIT"
	ELATECANCEL          = "LATE_CANCEL"
	ESEATSAVAILABLE      = "SEATS_AVAILABLE"
	EWAITLISTLIMIT       = "WAITLIST_LIMIT"
	// The customer's reschedule: after cancelFreeUntil, moved RESCHEDULE_LIMIT
	// times already, or to a slot of another price.
	ELATERESCHEDULE  = "LATE_RESCHEDULE"
	ERESCHEDULELIMIT = "RESCHEDULE_LIMIT"
	EPRICEDIFFERS    = "PRICE_DIFFERS"
	// ETOOEARLY: the salon asked for check-in before it opens
	// (CHECKIN_OPENS_BEFORE) or for a no-show before the slot started.
	ETOOEARLY = "TOO_EARLY"
	// EUNAVAILABLE: the database did not answer or refused the connection (it
	// is down, restarting, unreachable, or out of connections). Nothing was
	// changed that the caller cannot see; trying again later is safe.
	EUNAVAILABLE = "UNAVAILABLE"
	// ETOOMANYATTEMPTS: the console sign-in (or 改密码) of a name that failed
	// too often lately from this address or from all (booking.SignInLocked);
	// the error's RetryAfter says when.
	ETOOMANYATTEMPTS = "TOO_MANY_ATTEMPTS"
)

// customerMessages are shown to the customer in the mini-program.
var customerMessages = map[string]string{
	EBADREQUEST:          "请求格式不正确",
	EUNAUTHORIZED:        "请重新登录",
	EFORBIDDEN:           "无权访问",
	ENOTFOUND:            "没有找到",
	ESOLDOUT:             "手慢了，这个时段刚刚被约满",
	EACTIVEBOOKINGEXISTS: "您已有一个未完成的预约",
	EINVALIDSTATE:        "当前状态不能进行此操作",
	EPAYLOADTOOLARGE:     "请求内容过大",
	ESLOTNOTBOOKABLE:     "这个时段现在不可预约",
	EINTERNAL:            "系统繁忙，请稍后再试",
	EUPSTREAM:            "微信暂时无法连接，请稍后再试",
	ENOSHOWLIMIT:         "您近期有多次预约未到店，暂时无法在线预约，请联系门店",
	ELATECANCEL:          "距开始时间太近，现在取消将不退还定金；确认取消请选择放弃定金",
	ESEATSAVAILABLE:      "这个时段还有空位，请直接预约",
	EWAITLISTLIMIT:       "最多同时候补3个时段",
	ELATERESCHEDULE:      "距开始时间太近，现在不能在线改约，请联系门店",
	ERESCHEDULELIMIT:     "这个预约的改约次数已用完，请联系门店",
	EPRICEDIFFERS:        "只能改约到价格相同的时段",
	ETOOEARLY:            "还没到时间，现在不能这样操作",
	EUNAVAILABLE:         "服务繁忙，请稍后再试",
	ETOOMANYATTEMPTS:     "尝试次数过多，请稍后再试",
}

// Error is an application error: a code for the program, a message for the customer.
// Detail is for the log only and never reaches the customer.
type Error struct {
	Code    string
	Message string
	Detail  string
	// RetryAfter, when positive, is the seconds after which trying again may
	// succeed (the answer's Retry-After header).
	RetryAfter int
}

func (e *Error) Error() string {
	if e.Detail != "" {
		return fmt.Sprintf("%s: %s", e.Code, e.Detail)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Errorf returns an application error with the customer message of code and a
// detail for the log.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: customerMessages[code], Detail: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of an application error anywhere in err's chain, or
// INTERNAL for any other error. A nil error has no code.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the customer message of err. Errors that are not application
// errors get the generic message so that no internal detail leaks.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Message != "" {
		return e.Message
	}
	if errors.As(err, &e) {
		return customerMessages[e.Code]
	}
	return customerMessages[EINTERNAL]
}

// IsCode reports whether err carries the given application code.
func IsCode(err error, code string) bool { return err != nil && ErrorCode(err) == code }
