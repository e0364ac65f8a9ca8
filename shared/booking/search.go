package booking

import (
	"strings"
	"unicode/utf8"
)

// CustomerSearch is what the salon typed to find a customer's bookings: one of
// a full phone number, the last four digits of one, or the start of a name.
type CustomerSearch struct {
	Phone      string // a phone number in full (11 digits)
	PhoneTail  string // its last four digits
	NamePrefix string // the start of a name, up to MaxNameLength characters
}

// MaxNameLength is the longest name a customer has (t_customer.name).
const MaxNameLength = 20

// ParseCustomerSearch reads what the salon typed into a customer search: 11
// digits are a phone number, 4 digits its last four, anything else that is no
// longer than a name the start of a name. Other digit strings (a booking
// number) and text longer than a name are not a customer search.
func ParseCustomerSearch(text string) (CustomerSearch, bool) {
	text = strings.TrimSpace(text)
	digits := text != "" && strings.Trim(text, "0123456789") == ""
	switch {
	case digits && len(text) == 11:
		return CustomerSearch{Phone: text}, true
	case digits && len(text) == 4:
		return CustomerSearch{PhoneTail: text}, true
	case digits, text == "", utf8.RuneCountInString(text) > MaxNameLength:
		return CustomerSearch{}, false
	}
	return CustomerSearch{NamePrefix: text}, true
}
