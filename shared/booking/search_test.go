package booking

import "testing"

func TestParseCustomerSearch(t *testing.T) {
	for _, c := range []struct {
		in   string
		want CustomerSearch
		ok   bool
	}{
		{"13912345678", CustomerSearch{Phone: "13912345678"}, true},
		{" 5678 ", CustomerSearch{PhoneTail: "5678"}, true},
		{"王", CustomerSearch{NamePrefix: "王"}, true},
		{"王女士", CustomerSearch{NamePrefix: "王女士"}, true},
		{"Lin 小姐", CustomerSearch{NamePrefix: "Lin 小姐"}, true},
		{"17", CustomerSearch{}, false},           // a booking number
		{"000000000017", CustomerSearch{}, false}, // a booking number too
		{"", CustomerSearch{}, false},
		{"一二三四五六七八九十一二三四五六七八九十一", CustomerSearch{}, false}, // longer than a name
	} {
		got, ok := ParseCustomerSearch(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseCustomerSearch(%q) = %+v %v, want %+v %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
