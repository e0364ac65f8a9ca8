package booking

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Customer is one customer of the salon: a mini-program customer (OpenID set)
// or someone the salon booked at the counter or on the phone (no OpenID). Name,
// Phone and Note are "" until given.
type Customer struct {
	ID     int64
	OpenID string
	Name   string
	Phone  string
	Note   string
	// Visits counts her completed bookings; NoShows90d her no-shows whose slot
	// started within NoShowWindow (NO_SHOW_LIMIT's count).
	Visits     int
	NoShows90d int
}

// MaxNameLen and MaxNoteLen are in characters: a name as the column of
// t_customer, a note as the salon may type it. MaxKeptNoteLen is the column of
// the note, with room for the notes of customers who became one (JoinNotes).
const (
	MaxNameLen     = 20
	MaxNoteLen     = 200
	MaxKeptNoteLen = 1000
	PhoneLen       = 11
)

// CleanName is the one rule for every name a person types (a customer's own,
// a walk-in's, a staff account's and the name signed in with; each caller
// gives its own maxLen): trimmed, in Unicode NFC, then 1-maxLen characters
// counted after both, at least one of them a letter or a digit (Unicode L or
// N), and none of them invisible or breaking the text: control (Cc), format
// (Cf: bidirectional overrides and isolates, zero-width characters, the soft
// hyphen, the byte-order mark), private-use (Co) or surrogate (Cs) characters,
// line and paragraph separators, U+FFFD (the mark of a broken text) and the
// Hangul fillers, which are letters that draw nothing (isFiller). Anything
// else is BAD_REQUEST; what it returns is the name as it is kept.
func CleanName(s string, maxLen int) (string, error) {
	if !utf8.ValidString(s) {
		return "", Errorf(EBADREQUEST, "name: not valid UTF-8")
	}
	s = norm.NFC.String(strings.TrimSpace(s))
	n := utf8.RuneCountInString(s)
	switch {
	case n == 0:
		return "", Errorf(EBADREQUEST, "name: empty")
	case n > maxLen:
		return "", Errorf(EBADREQUEST, "name: %d characters, at most %d", n, maxLen)
	}
	seen := false
	for _, r := range s {
		switch {
		case unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs, unicode.Zl, unicode.Zp):
			return "", Errorf(EBADREQUEST, "name: invisible or control character U+%04X", r)
		case r == utf8.RuneError || isFiller(r):
			return "", Errorf(EBADREQUEST, "name: character U+%04X", r)
		case unicode.In(r, unicode.L, unicode.N):
			seen = true
		}
	}
	if !seen {
		return "", Errorf(EBADREQUEST, "name: no letter or digit")
	}
	return s, nil
}

// isFiller reports the Hangul fillers: Unicode letters (Lo) that draw nothing,
// so a name of them alone would look empty.
func isFiller(r rune) bool {
	switch r {
	case '\u115F', '\u1160', '\u3164', '\uFFA0':
		return true
	}
	return false
}

// CleanNote is the salon's note as it is kept: at most MaxNoteLen characters of
// valid UTF-8, trimmed; "" clears it. Line breaks and tabs are allowed (it is
// the salon's own text), other control characters are not.
func CleanNote(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", Errorf(EBADREQUEST, "note: not valid UTF-8")
	}
	s = strings.TrimSpace(s)
	if n := utf8.RuneCountInString(s); n > MaxNoteLen {
		return "", Errorf(EBADREQUEST, "note: %d characters, at most %d", n, MaxNoteLen)
	}
	if strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r' }) {
		return "", Errorf(EBADREQUEST, "note: control characters")
	}
	return s, nil
}

// JoinNotes is the note of two customers who became one (a walk-in's phone
// joined a mini-program customer): both, hers first, each on its own line; the
// same note once. Past MaxKeptNoteLen characters the end is cut off.
func JoinNotes(mine, theirs string) string {
	switch {
	case theirs == "" || theirs == mine:
		return mine
	case mine == "":
		return theirs
	}
	j := []rune(mine + "\n" + theirs)
	if len(j) > MaxKeptNoteLen {
		j = j[:MaxKeptNoteLen]
	}
	return string(j)
}

// ValidPhone reports whether s is a phone number the salon may write down: 11
// digits (a mainland mobile number), nothing else.
func ValidPhone(s string) bool {
	if len(s) != PhoneLen {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// MaskPhone is the number as the mini-program may show it: the first three and
// the last four digits, the rest hidden (138****5678); a number too short to
// keep anything hidden is all stars. "" stays "" (no number).
func MaskPhone(p string) string {
	if p == "" {
		return ""
	}
	if len(p) < 8 {
		return strings.Repeat("*", len(p))
	}
	return p[:3] + "****" + p[len(p)-4:]
}

// WalkInRequest is the salon taking a seat for someone at the counter or on the
// phone: the slot (or a service with a technician's time), the name
// (required) and the phone (optional).
type WalkInRequest struct {
	SlotID int64
	// The technician form, instead of SlotID: the service, its start (zero:
	// the cell running now, which the service fills in) and the technician
	// (0: any free one, as a reservation picks).
	ServiceID    int64
	StartAt      time.Time
	TechnicianID int64
	Name         string
	Phone        string
	// By is who at the salon took it (Staff.Actor), for the audit trail; the
	// service sets it.
	By string
	// Day is the shop day StartAt falls on, [DayStart, DayEnd), which the
	// service sets: the technicians' booked minutes that day order the pick.
	DayStart, DayEnd time.Time
}

// Clean checks the request and returns it as it is kept: a slot or a
// service (one of them), the name by CleanName's rules (at most MaxNameLen),
// the phone "" or 11 digits.
func (r WalkInRequest) Clean() (WalkInRequest, error) {
	switch {
	case r.ServiceID != 0 && (r.SlotID != 0 || r.ServiceID < 0 || r.TechnicianID < 0):
		return r, Errorf(EBADREQUEST, "want slotId or serviceId (with startAt and technicianId), positive")
	case r.ServiceID == 0 && r.SlotID <= 0:
		return r, Errorf(EBADREQUEST, "slotId: want a positive integer")
	}
	name, err := CleanName(r.Name, MaxNameLen)
	if err != nil {
		return r, err
	}
	r.Name = name
	if r.Phone != "" && !ValidPhone(r.Phone) {
		return r, Errorf(EBADREQUEST, "phone: want %d digits", PhoneLen)
	}
	return r, nil
}

// OpenForWalkIn reports whether the salon can seat someone in the slot at now,
// apart from a free seat: open, not ended (a slot under way takes the walk-in
// sitting down now), starting within windowDays. The store's SQL spells the
// same rule (walkInOpenExpr; a test checks the two agree).
func (s *Slot) OpenForWalkIn(now time.Time, windowDays int) bool {
	return s.Open && s.EndAt.After(now) && !s.StartAt.After(now.Add(time.Duration(windowDays)*24*time.Hour))
}
