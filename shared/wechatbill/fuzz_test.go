package wechatbill_test

import (
	"errors"
	"strings"
	"testing"

	"salon/shared/wechatbill"
)

// FuzzParse: Parse never panics, fails only with ErrFormat, and a bill it
// accepts is whole: every detail line of the input is a line of the bill and
// the summary agrees with them (no silent half-parse).
func FuzzParse(f *testing.F) {
	f.Add([]byte(bill(head, paid, refund, sumHead, "`2,`50.00,`50.00,`0.00,`0.00,`50.00,`50.00")))
	f.Add([]byte(bill(head, paid, paid2, sumHead, "`2,`130.00,`0.00,`0.00,`0.78,`130.00,`0.00")))
	f.Add([]byte(bill(head, sumHead, "`0,`0.00,`0.00,`0.00,`0.00,`0.00,`0.00")))
	f.Add([]byte(""))
	f.Add([]byte(bill(head, paid, sumHead, "`2,`50.00,`0.00,`0.00,`0.30,`50.00,`0.00")))
	f.Fuzz(func(t *testing.T, body []byte) {
		b, err := wechatbill.Parse(body)
		if err != nil {
			if !errors.Is(err, wechatbill.ErrFormat) || b != nil {
				t.Fatalf("Parse = %v, %v: want nil and ErrFormat", b, err)
			}
			return
		}
		text := strings.TrimRight(strings.ReplaceAll(strings.TrimPrefix(string(body), "\xef\xbb\xbf"), "\r\n", "\n"), "\n")
		if strings.TrimSpace(text) == "" {
			if len(b.Lines) != 0 {
				t.Fatalf("an empty body gave %d lines", len(b.Lines))
			}
			return
		}
		if want := len(strings.Split(text, "\n")) - 3; len(b.Lines) != want {
			t.Fatalf("%d detail lines in the input, %d in the bill", want, len(b.Lines))
		}
		s := wechatbill.SummaryOf(b.Lines)
		if b.Summary.Trades != s.Trades || b.Summary.SettlementFen != s.SettlementFen || b.Summary.RefundFen != s.RefundFen || b.Summary.FeeFen != s.FeeFen {
			t.Fatalf("summary %+v does not add up to the lines' %+v", b.Summary, s)
		}
	})
}
