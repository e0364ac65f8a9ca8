package booking

// DayCell is one of a technician's cells as the salon's calendar draws it:
// the cell (its start, end, whether it is open, its booked counter) and the
// booking holding it, 0 when none does. A cell closed is time off; a start
// with no cell is outside her hours; a free open cell whose end has passed
// is gone by.
type DayCell struct {
	Slot
	BookingID int64
}
