package booking

import (
	"strings"
	"testing"
	"time"
)

// TestCleanName is the one rule for every typed name, character by character:
// each invisible, bidirectional, filler or broken character is refused, alone
// and inside a name; the name is kept trimmed and in NFC, and its length is
// counted after both.
func TestCleanName(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"王小美", "王小美", true},
		{"  Amy Li \t", "Amy Li", true},
		{"\u3000小美\u3000", "小美", true}, // ideographic spaces trimmed
		{"Anne-Marie O'Neil", "Anne-Marie O'Neil", true},
		{"小美 2", "小美 2", true},
		{"7", "7", true}, // a digit is enough
		{strings.Repeat("美", 20), strings.Repeat("美", 20), true},
		{" " + strings.Repeat("a", 20) + " ", strings.Repeat("a", 20), true},
		{strings.Repeat("美", 21), "", false},
		// NFC: e + combining acute is kept as é, and counted as one character.
		{"Rene\u0301e", "Ren\u00e9e", true},
		{strings.Repeat("e\u0301", 20), strings.Repeat("\u00e9", 20), true},
		{strings.Repeat("e\u0301", 21), "", false},
		{"\uAC00", "\uAC00", true},       // 가, a Hangul syllable
		{"\u1100\u1161", "\uAC00", true}, // its jamo, composed by NFC
		{"", "", false},
		{"   ", "", false},
		{"a\nb", "", false},
		{"a\x00b", "", false},
		{"a\u0085b", "", false}, // NEL, a C1 control character
		{"\xff\xfe", "", false},
		{"a\u202Eb", "", false},   // right-to-left override
		{"\u202Eevil", "", false}, // leading, not trimmed away
		{"a\u202Db", "", false},   // left-to-right override
		{"a\u200Fb", "", false},   // right-to-left mark
		{"a\u2066b", "", false},   // left-to-right isolate
		{"a\u2067b", "", false},   // right-to-left isolate
		{"a\u2068b", "", false},   // first strong isolate
		{"a\u2069b", "", false},   // pop directional isolate
		{"\u200B", "", false},     // zero-width space alone
		{"\u200B\u200C\u200D\u2060", "", false},
		{"a\u200Bb", "", false},
		{"\uFEFF", "", false},   // byte-order mark alone
		{"\uFEFF小美", "", false}, // and leading
		{"\u00AD", "", false},   // a lone soft hyphen
		{"a\u00ADb", "", false},
		{"\u3164", "", false}, // Hangul filler
		{"\u3164\u3164", "", false},
		{"a\u3164", "", false},
		{"\u115F", "", false},   // Hangul choseong filler
		{"\u1160", "", false},   // Hangul jungseong filler
		{"\uFFA0", "", false},   // halfwidth Hangul filler
		{"a\uFFFDb", "", false}, // replacement character
		{"\uE000", "", false},   // private use
		{"a\U000F0000", "", false},
		{"a\u2028b", "", false}, // line separator
		{"a\u2029b", "", false}, // paragraph separator
		{"...", "", false},      // no letter or digit
		{"😀", "", false},
		{"- -", "", false},
	} {
		got, err := CleanName(c.in, MaxNameLen)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("CleanName(%q) = %q, %v; want %q ok=%v", c.in, got, err, c.want, c.ok)
		}
		if err != nil && !IsCode(err, EBADREQUEST) {
			t.Errorf("CleanName(%q): %v is not BAD_REQUEST", c.in, err)
		}
	}
	// Each caller has its own length.
	if got, err := CleanName(strings.Repeat("美", 40), 40); err != nil || got != strings.Repeat("美", 40) {
		t.Errorf("40 characters at most 40: %q, %v", got, err)
	}
	if _, err := CleanName(strings.Repeat("美", 41), 40); !IsCode(err, EBADREQUEST) {
		t.Errorf("41 characters at most 40: %v", err)
	}
}

func TestCleanNote(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"喜欢裸色，对甲油胶过敏", "喜欢裸色，对甲油胶过敏", true},
		{"", "", true},
		{"  ", "", true},
		{"line one\nline two", "line one\nline two", true},
		{strings.Repeat("注", 200), strings.Repeat("注", 200), true},
		{strings.Repeat("注", 201), "", false},
		{"bell\x07", "", false},
		{"\xff", "", false},
	} {
		got, err := CleanNote(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("CleanNote(%q) = %q, %v; want %q ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestJoinNotes(t *testing.T) {
	long, other := strings.Repeat("注", 600), strings.Repeat("备", 600)
	for _, c := range []struct{ mine, theirs, want string }{
		{"", "", ""},
		{"喜欢裸色", "", "喜欢裸色"},
		{"", "对甲油胶过敏", "对甲油胶过敏"},
		{"喜欢裸色", "对甲油胶过敏", "喜欢裸色\n对甲油胶过敏"},
		{"对甲油胶过敏", "对甲油胶过敏", "对甲油胶过敏"},
		{long, other, string([]rune(long + "\n" + other)[:MaxKeptNoteLen])},
	} {
		if got := JoinNotes(c.mine, c.theirs); got != c.want {
			t.Errorf("JoinNotes(%q, %q) = %q, want %q", c.mine, c.theirs, got, c.want)
		}
	}
}

func TestPhoneFormatAndMask(t *testing.T) {
	for _, c := range []struct {
		in    string
		valid bool
		mask  string
	}{
		{"13812345678", true, "138****5678"},
		{"1381234567", false, "138****4567"},
		{"138123456789", false, "138****6789"},
		{"1381234567a", false, "138****567a"},
		{"+8613812345", false, "+86****2345"},
		{"１３８１２３４５６７８", false, ""}, // full-width digits: not 11 ASCII digits
		{"", false, ""},
		{"1234567", false, "*******"},
	} {
		if got := ValidPhone(c.in); got != c.valid {
			t.Errorf("ValidPhone(%q) = %v, want %v", c.in, got, c.valid)
		}
		if c.mask != "" || c.in == "" {
			if got := MaskPhone(c.in); got != c.mask {
				t.Errorf("MaskPhone(%q) = %q, want %q", c.in, got, c.mask)
			}
		}
	}
}

func TestWalkInRequestClean(t *testing.T) {
	for _, c := range []struct {
		in   WalkInRequest
		want WalkInRequest
		ok   bool
	}{
		{WalkInRequest{SlotID: 3, Name: " 李女士 ", Phone: "13900001111"}, WalkInRequest{SlotID: 3, Name: "李女士", Phone: "13900001111"}, true},
		{WalkInRequest{SlotID: 3, Name: "李女士"}, WalkInRequest{SlotID: 3, Name: "李女士"}, true},
		{WalkInRequest{SlotID: 0, Name: "李女士"}, WalkInRequest{}, false},
		{WalkInRequest{SlotID: 3, Name: " "}, WalkInRequest{}, false},
		{WalkInRequest{SlotID: 3, Name: "李", Phone: "139-0000-1111"}, WalkInRequest{}, false},
		{WalkInRequest{SlotID: 3, Name: "李", Phone: "1390000111"}, WalkInRequest{}, false},
	} {
		got, err := c.in.Clean()
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("%+v.Clean() = %+v, %v; want %+v ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestOpenForWalkIn(t *testing.T) {
	now := time.Date(2026, 5, 1, 6, 0, 0, 0, time.UTC)
	slot := func(startIn, length time.Duration, open bool) Slot {
		return Slot{StartAt: now.Add(startIn), EndAt: now.Add(startIn + length), Open: open, Capacity: 1}
	}
	for name, c := range map[string]struct {
		s    Slot
		want bool
	}{
		"later today":               {slot(2*time.Hour, time.Hour, true), true},
		"started, not ended":        {slot(-30*time.Minute, time.Hour, true), true},
		"ended":                     {slot(-2*time.Hour, time.Hour, true), false},
		"ends right now":            {slot(-time.Hour, time.Hour, true), false},
		"closed":                    {slot(2*time.Hour, time.Hour, false), false},
		"beyond the booking window": {slot(15*24*time.Hour, time.Hour, true), false},
	} {
		if got := c.s.OpenForWalkIn(now, 14); got != c.want {
			t.Errorf("%s: OpenForWalkIn = %v, want %v", name, got, c.want)
		}
	}
}

func TestWalkInHold(t *testing.T) {
	now := time.Date(2026, 5, 1, 6, 0, 0, 0, time.UTC)
	h := DefaultPolicy.NewHold(Slot{PriceFen: 5000, StartAt: now.Add(-10 * time.Minute)}, now, EventWalkIn)
	if h.Status != StatusConfirmed || h.AmountFen != 0 || !h.LockExpire.Equal(now) {
		t.Errorf("walk-in hold = %+v, want confirmed, 0 fen, no hold", h)
	}
	tr, err := TransitionFor(Change{Event: EventWalkIn, From: StatusNew, To: StatusConfirmed, Actor: ActorSalon})
	if err != nil || tr.Seat != SeatTaken {
		t.Errorf("walk-in row: %+v, %v", tr, err)
	}
	if _, err := TransitionFor(Change{Event: EventWalkIn, From: StatusNew, To: StatusConfirmed, Actor: ActorCustomer}); !IsCode(err, EINVALIDSTATE) {
		t.Errorf("a customer's walk-in: %v, want INVALID_STATE", err)
	}
}
