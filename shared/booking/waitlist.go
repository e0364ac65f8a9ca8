package booking

import "time"

// MaxWaitlistEntries is how many slots a customer may wait for at once.
const MaxWaitlistEntries = 3

// WaitlistEntry is a customer waiting for a seat of a full slot. Position is 1
// for the first in line.
type WaitlistEntry struct {
	SlotID    int64
	OpenID    string
	Position  int
	CreatedAt time.Time
	// The slot's times, for the customer's list.
	StartAt, EndAt time.Time
}
