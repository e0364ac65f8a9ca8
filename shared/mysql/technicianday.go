package mysql

import (
	"context"
	"time"

	"salon/shared/booking"
)

// TechnicianDayCells returns technician's cells starting in [from, to) (the
// shop day), earliest first, each with the booking holding it, if any: the
// salon's calendar tells her hours, her time off, the cells gone by and the
// free ones apart from these, which the availability of services (a start
// where a service fits) cannot. One statement: her cells by uk_slot_start
// (technician_key, start_at), in its order, each joined with its seat row by
// idx_booking_slot_slot (a cell holds at most one booking: capacity 1).
func (db *DB) TechnicianDayCells(ctx context.Context, technician int64, from, to time.Time) (_ []booking.DayCell, err error) {
	defer wrap(&err, "TechnicianDayCells(technician %d, %s)", technician, span(from, to))
	rows, err := db.db.QueryContext(ctx, `SELECT s.slot_id, s.start_at, s.end_at, s.capacity, s.booked, s.price_fen, s.is_open,
			COALESCE(bs.book_id, 0)
		FROM t_slot s LEFT JOIN t_booking_slot bs ON bs.slot_id = s.slot_id
		WHERE s.technician_key = ? AND s.start_at >= ? AND s.start_at < ?
		ORDER BY s.start_at`, technician, from.UTC(), to.UTC())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []booking.DayCell
	for rows.Next() {
		var c booking.DayCell
		if err := rows.Scan(&c.ID, &c.StartAt, &c.EndAt, &c.Capacity, &c.Booked, &c.PriceFen, &c.Open, &c.BookingID); err != nil {
			return nil, err
		}
		c.TechnicianID = technician
		out = append(out, c)
	}
	return out, rows.Err()
}
