package wxmsg

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"salon/shared/booking"
)

const goodTemplate = `{"id":"tmpl-confirmed","page":"pages/booking/detail?id={bookingId}","data":{"time2":"{startAt}","thing1":"{shopName}"}}`

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestTemplatesFromEnv(t *testing.T) {
	got, errs := TemplatesFromEnv(env(map[string]string{
		"WX_TMPL_CONFIRMED": goodTemplate,
		"WX_TMPL_REMINDER":  `{"id":"tmpl-reminder","data":{"thing1":"{shopName}","time2":"{startAt}~{endAt}"}}`,
		"WX_TMPL_WAITLIST":  "  ", // blank is unset
	}))
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	if len(got) != 2 || got[booking.NotifyConfirmed] == nil || got[booking.NotifyReminder] == nil {
		t.Fatalf("templates: %v", got)
	}
	c := got[booking.NotifyConfirmed]
	if c.ID != "tmpl-confirmed" || c.Page != "pages/booking/detail?id={bookingId}" || strings.Join(c.Keywords(), ",") != "thing1,time2" {
		t.Fatalf("confirmed: %+v %v", c, c.Keywords())
	}
	if r := got[booking.NotifyReminder]; r.Page != "" {
		t.Fatalf("reminder page %q, want none", r.Page)
	}
	if all, errs := TemplatesFromEnv(env(nil)); len(all) != 0 || len(errs) != 0 {
		t.Fatalf("nothing set: %v %v", all, errs)
	}
}

// Each bad setting is reported, naming the setting and never quoting its value,
// and turns off only its own kind.
func TestBadTemplateSettings(t *testing.T) {
	const secret = "s3cr3t-pasted-here"
	bad := map[string]string{
		"not JSON":              secret,
		"truncated":             `{"id":"` + secret,
		"an array":              `["` + secret + `"]`,
		"unknown field":         `{"id":"x","data":{"thing1":"a"},"color":"` + secret + `"}`,
		"missing id":            `{"data":{"thing1":"` + secret + `"}}`,
		"empty id":              `{"id":" ","data":{"thing1":"a"}}`,
		"id with spaces":        `{"id":"a b","data":{"thing1":"a"}}`,
		"empty data":            `{"id":"x","data":{}}`,
		"no data":               `{"id":"x"}`,
		"data not strings":      `{"id":"x","data":{"thing1":5}}`,
		"data not an object":    `{"id":"x","data":"` + secret + `"}`,
		"unknown placeholder":   `{"id":"x","data":{"thing1":"{customerName}"}}`,
		"placeholder in page":   `{"id":"x","page":"p?id={id}","data":{"thing1":"a"}}`,
		"unclosed brace":        `{"id":"x","data":{"thing1":"{shopName"}}`,
		"stray brace":           `{"id":"x","data":{"thing1":"shop}"}}`,
		"keyword without type":  `{"id":"x","data":{"shop1":"{shopName}"}}`,
		"keyword without digit": `{"id":"x","data":{"thing":"{shopName}"}}`,
		"keyword empty text":    `{"id":"x","data":{"thing1":""}}`,
		"text after":            goodTemplate + ` {}`,
		"too long":              `{"id":"x","data":{"thing1":"` + strings.Repeat("a", 5000) + `"}}`,
	}
	for name, raw := range bad {
		t.Run(name, func(t *testing.T) {
			got, errs := TemplatesFromEnv(env(map[string]string{
				"WX_TMPL_CONFIRMED": goodTemplate,
				"WX_TMPL_CANCELLED": raw,
			}))
			if len(errs) != 1 {
				t.Fatalf("errors: %v", errs)
			}
			msg := errs[0].Error()
			if !strings.HasPrefix(msg, "WX_TMPL_CANCELLED: ") || !strings.Contains(msg, "cancelled notifications are off") {
				t.Fatalf("error does not name the setting: %s", msg)
			}
			if strings.Contains(msg, secret) || strings.Contains(msg, strings.Repeat("a", 40)) {
				t.Fatalf("error quotes the value: %s", msg)
			}
			if got[booking.NotifyCancelled] != nil || got[booking.NotifyConfirmed] == nil || len(got) != 1 {
				t.Fatalf("templates: %v", got)
			}
			t.Log(msg)
		})
	}
}

func TestRender(t *testing.T) {
	shanghai := time.FixedZone("CST", 8*3600)
	tmpl, err := ParseTemplate(`{"id":"x","page":"pages/booking/detail?id={bookingId}&shop={shopName}",` +
		`"data":{"thing1":"{shopName}","time2":"{startAt}~{endAt}","amount3":"{amountYuan}元","character_string4":"BK{bookingId}",` +
		`"phrase5":"预约已经确认了","name6":"{shopName}","symbol7":"!!!!!!!","number8":"{bookingId}","thing9":"请准时到店"}}`)
	if err != nil {
		t.Fatal(err)
	}
	v := Values{
		BookingID: 42,
		StartAt:   time.Date(2026, 5, 1, 2, 0, 0, 0, time.UTC),
		EndAt:     time.Date(2026, 5, 1, 3, 30, 0, 0, time.UTC),
		AmountFen: 5005,
		ShopName:  "Nail & Co\n小店\t\u200b 旗舰",
	}
	page, data := tmpl.Render(v, shanghai)
	if page != "pages/booking/detail?id=42&shop=Nail+%26+Co%0A%E5%B0%8F%E5%BA%97%09%E2%80%8B+%E6%97%97%E8%88%B0" {
		t.Errorf("page %q", page)
	}
	want := map[string]string{
		"thing1":            "Nail & Co 小店 旗舰",
		"time2":             "2026-05-01 10:00~2026-05-01 11:30",
		"amount3":           "50.05元",
		"character_string4": "BK42",
		"phrase5":           "预约已经确",
		"name6":             "Nail & Co", // cut to 10 characters, then the trailing space dropped
		"symbol7":           "!!!!!",
		"number8":           "42",
		"thing9":            "请准时到店",
	}
	for k, w := range want {
		if data[k] != w {
			t.Errorf("%s = %q, want %q", k, data[k], w)
		}
	}
	if len(data) != len(want) {
		t.Errorf("data %v", data)
	}

	// A 30-character shop name into a thing: 19 characters and "…".
	v.ShopName = strings.Repeat("美", 30)
	_, data = tmpl.Render(v, nil)
	if n := utf8.RuneCountInString(data["thing1"]); n != 20 || !strings.HasSuffix(data["thing1"], "…") {
		t.Errorf("thing1 %q (%d characters)", data["thing1"], n)
	}
	if data["time2"] != "2026-05-01 02:00~2026-05-01 03:30" {
		t.Errorf("nil location: time2 %q, want UTC", data["time2"])
	}
	for _, fen := range []struct {
		fen  int64
		yuan string
	}{{0, "0.00"}, {5, "0.05"}, {5000, "50.00"}, {123456, "1234.56"}, {-150, "-1.50"}} {
		if got := yuan(fen.fen); got != fen.yuan {
			t.Errorf("yuan(%d) = %s, want %s", fen.fen, got, fen.yuan)
		}
	}
}
