package wechatpay

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"salon/shared/wechatbill"
)

// ErrNoStatement is TradeBill's answer when WeChat has no bill for the day
// (NO_STATEMENT_EXIST): the merchant took and refunded nothing that day.
var ErrNoStatement = wechatbill.ErrNoStatement

// ErrBillHash is TradeBill's answer when the downloaded file's SHA1 is not
// the hash_value of the signed answer: the bytes are not WeChat's bill.
var ErrBillHash = errors.New("wechatpay: the bill's SHA1 is not the one WeChat announced")

// maxBillBytes bounds the download: a salon's day is a few kilobytes.
const maxBillBytes = 32 << 20

// billAnswer is the signed answer of GET /v3/bill/tradebill.
type billAnswer struct {
	HashType    string `json:"hash_type"`
	HashValue   string `json:"hash_value"`
	DownloadURL string `json:"download_url"`
}

// TradeBill fetches the trade bill (bill_type=ALL) of date (yyyy-mm-dd, a day
// of WeChat's time zone) in two calls, each bounded by the call timeout: the signed
// request for the bill, whose answer is verified like any other and names
// the file and its SHA1, then a signed GET of the file, whose answer WeChat
// does not sign, checked against that SHA1. The file is asked for uncompressed
// (no tar_type). A day without a bill is ErrNoStatement; a file that does not
// hash right is ErrBillHash; anything else (network, a timeout, a bill not yet
// generated) is an error to try again later.
func (c *Client) TradeBill(ctx context.Context, date string) ([]byte, error) {
	if _, err := time.Parse(time.DateOnly, date); err != nil {
		return nil, fmt.Errorf("wechatpay: trade bill: %q is not yyyy-mm-dd", date)
	}
	ans, err := c.billAnswer(ctx, date)
	if err != nil {
		return nil, err
	}
	if !strings.EqualFold(ans.HashType, "SHA1") || ans.HashValue == "" {
		return nil, fmt.Errorf("wechatpay: trade bill %s: hash_type %q, want SHA1 with a hash_value", date, ans.HashType)
	}
	fileURL, ok := c.billFileURL(ans.DownloadURL)
	if !ok {
		// The merchant's signature goes only to WeChat's API host or the configured base.
		return nil, fmt.Errorf("wechatpay: trade bill %s: download_url %q is neither on WeChat Pay's API host nor under WECHATPAY_API_BASE", date, ans.DownloadURL)
	}
	body, err := c.downloadBill(ctx, fileURL)
	if err != nil {
		return nil, fmt.Errorf("wechatpay: download trade bill %s: %w", date, err)
	}
	sum := sha1.Sum(body)
	if !strings.EqualFold(hex.EncodeToString(sum[:]), ans.HashValue) {
		return nil, fmt.Errorf("%w (trade bill %s)", ErrBillHash, date)
	}
	return body, nil
}

// billFileURL is what to GET for a bill's download_url, or false when the
// merchant's signed request must not go there. Two places are accepted:
//
//   - WeChat's API host over https, as WeChat names the file; like every call
//     it is sent to the configured base (the transport's rewrite);
//   - the configured base itself (WECHATPAY_API_BASE: WeChat's backup domain,
//     or a gateway in front of WeChat): its scheme, its host and port, and a
//     path under its path. It is requested as the same path on WeChat's API
//     host with the base's path taken off, so that the rewrite sends it back
//     to exactly that URL and the signature covers the path the server sees.
//
// Any other scheme, host or port is refused.
func (c *Client) billFileURL(downloadURL string) (string, bool) {
	u, err := url.Parse(downloadURL)
	if err != nil || u.Opaque != "" {
		return "", false
	}
	if u.Scheme == "https" && strings.EqualFold(u.Host, strings.TrimPrefix(DefaultAPIBase, "https://")) {
		return downloadURL, true
	}
	base := c.base
	if u.Scheme != base.Scheme || !strings.EqualFold(u.Host, base.Host) {
		return "", false
	}
	rest, under := strings.CutPrefix(u.EscapedPath(), strings.TrimRight(base.EscapedPath(), "/"))
	if !under || !strings.HasPrefix(rest, "/") {
		return "", false
	}
	file := DefaultAPIBase + rest
	if u.RawQuery != "" {
		file += "?" + u.RawQuery
	}
	return file, true
}

func (c *Client) billAnswer(ctx context.Context, date string) (*billAnswer, error) {
	ctx, cancel := c.withDeadline(ctx)
	defer cancel()
	res, err := c.sdk.Request(ctx, http.MethodGet, DefaultAPIBase+"/v3/bill/tradebill", nil,
		url.Values{"bill_date": {date}, "bill_type": {"ALL"}}, nil, "")
	defer closeResult(res)
	if err != nil {
		if _, code, ok := APIErrorCode(err); ok && code == "NO_STATEMENT_EXIST" {
			return nil, fmt.Errorf("%w: %s", ErrNoStatement, date)
		}
		return nil, fmt.Errorf("wechatpay: trade bill %s: %w", date, err)
	}
	var ans billAnswer
	if err := json.NewDecoder(res.Response.Body).Decode(&ans); err != nil {
		return nil, fmt.Errorf("wechatpay: trade bill %s: answer: %w", date, err)
	}
	return &ans, nil
}

func (c *Client) downloadBill(ctx context.Context, downloadURL string) ([]byte, error) {
	ctx, cancel := c.withDeadline(ctx)
	defer cancel()
	res, err := c.download.Request(ctx, http.MethodGet, downloadURL, nil, nil, nil, "")
	defer closeResult(res)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(res.Response.Body, maxBillBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxBillBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxBillBytes)
	}
	return body, nil
}
