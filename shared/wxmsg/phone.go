package wxmsg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	"salon/shared/booking"
)

// CodeInvalidCode is WeChat refusing a phone code: unknown, expired or used
// before (a code is good for one exchange).
const CodeInvalidCode = 40029

type phoneAnswer struct {
	ErrCode   int    `json:"errcode"`
	ErrMsg    string `json:"errmsg"`
	PhoneInfo struct {
		PurePhoneNumber string `json:"purePhoneNumber"`
		Watermark       struct {
			AppID string `json:"appid"`
		} `json:"watermark"`
	} `json:"phone_info"`
}

// PhoneNumber exchanges the code of the mini-program's getPhoneNumber button
// for the customer's number (phone_info.purePhoneNumber) through
// getuserphonenumber, with the same shared access token as Send: when WeChat
// calls it invalid or expired (40001, 42001) a fresh one is taken once and the
// exchange tried once more. A code WeChat rejects (40029) is BAD_REQUEST; WeChat
// not answering, or answering anything else, is UPSTREAM_UNAVAILABLE. The
// number must carry the mini-program's own appid in its watermark.
func (c *Client) PhoneNumber(ctx context.Context, code string) (string, error) {
	switch {
	case c.AppID == "" || c.AppSecret == "":
		return "", booking.Errorf(booking.EUPSTREAM, "wxmsg: WX_APPID and WX_APPSECRET are needed for phone numbers")
	case c.Tokens == nil:
		return "", errors.New("wxmsg: Client.Tokens is nil: the access token must be shared through the store")
	}
	body, err := json.Marshal(map[string]string{"code": code})
	if err != nil {
		return "", fmt.Errorf("wxmsg: %w", err)
	}
	token, err := c.token(ctx)
	if err != nil {
		return "", upstream(err)
	}
	ans, err := c.phone(ctx, token, body)
	if err != nil {
		return "", upstream(err)
	}
	if ans.ErrCode == CodeInvalidToken || ans.ErrCode == CodeExpiredToken {
		if token, err = c.refresh(ctx, token); err != nil {
			return "", upstream(err)
		}
		if ans, err = c.phone(ctx, token, body); err != nil {
			return "", upstream(err)
		}
	}
	switch {
	case ans.ErrCode == CodeInvalidCode:
		return "", booking.Errorf(booking.EBADREQUEST, "getuserphonenumber: WeChat rejected the phone code (40029)")
	case ans.ErrCode != 0:
		return "", upstream(&APIError{Op: "getuserphonenumber", Code: ans.ErrCode, Msg: c.scrubString(truncate(ans.ErrMsg, 200), token)})
	case ans.PhoneInfo.Watermark.AppID != c.AppID:
		return "", booking.Errorf(booking.EUPSTREAM, "getuserphonenumber: the number is watermarked for appid %q, not ours", ans.PhoneInfo.Watermark.AppID)
	case ans.PhoneInfo.PurePhoneNumber == "" || len(ans.PhoneInfo.PurePhoneNumber) > 20:
		return "", booking.Errorf(booking.EUPSTREAM, "getuserphonenumber: an answer without a usable purePhoneNumber")
	}
	return ans.PhoneInfo.PurePhoneNumber, nil
}

func (c *Client) phone(ctx context.Context, token string, body []byte) (phoneAnswer, error) {
	var ans phoneAnswer
	err := c.post(ctx, "getuserphonenumber", "/wxa/business/getuserphonenumber?access_token="+url.QueryEscape(token), body, &ans, token)
	return ans, err
}

// upstream is err as the domain names it: WeChat did not give an answer the
// product can use.
func upstream(err error) error {
	if booking.ErrorCode(err) != booking.EINTERNAL && booking.ErrorCode(err) != "" {
		return err
	}
	return booking.Errorf(booking.EUPSTREAM, "%v", err)
}
