package handler

import (
	"time"

	"salon/shared/booking"
	"salon/shared/service"
	"salon/shared/wechatpay"
)

// The JSON shapes of the HTTP API (functions/README.md, "JSON shapes"). Times are
// RFC 3339 with the shop's offset.

type refundJSON struct {
	Status     string  `json:"status"`
	AmountFen  int64   `json:"amountFen"`
	RefundedAt *string `json:"refundedAt"`
}

type bookingJSON struct {
	BookingID int64  `json:"bookingId"`
	SlotID    int64  `json:"slotId"`
	Status    string `json:"status"`
	StartAt   string `json:"startAt"`
	EndAt     string `json:"endAt"`
	// The service and technician of a booking of a technician's time; null
	// for a seat of a slot.
	ServiceID      *int64  `json:"serviceId"`
	ServiceName    *string `json:"serviceName"`
	TechnicianID   *int64  `json:"technicianId"`
	TechnicianName *string `json:"technicianName"`
	AmountFen      int64   `json:"amountFen"`
	// PriceFen is the full price when it was booked: PriceFen - AmountFen is
	// what is left to pay in the shop.
	PriceFen     int64  `json:"priceFen"`
	LockExpireAt string `json:"lockExpireAt"`
	// CancelFreeUntil is the last moment the customer's cancel is refunded in full.
	CancelFreeUntil string      `json:"cancelFreeUntil"`
	CreatedAt       string      `json:"createdAt"`
	Refund          *refundJSON `json:"refund"`
	// CheckinCode is shown at the door on the appointment day; null otherwise
	// (and in the salon's lists, which check in by id).
	CheckinCode *string `json:"checkinCode"`
	OpenID      *string `json:"openid,omitempty"` // the salon's view only; "" for a walk-in without one
	// Customer is who the booking is for: the salon's view only.
	Customer *adminCustomerJSON `json:"customer,omitempty"`
}

// adminCustomerJSON is a customer as the salon sees her, the full phone number
// included; a field not given yet is null.
type adminCustomerJSON struct {
	CustomerID int64   `json:"customerId"`
	Name       *string `json:"name"`
	Phone      *string `json:"phone"`
	Visits     int     `json:"visits"`
	NoShows90d int     `json:"noShows90d"`
	Note       *string `json:"note"`
}

// meJSON is the customer as the mini-program sees herself: never the full
// phone number.
type meJSON struct {
	Name        *string `json:"name"`
	PhoneMasked *string `json:"phoneMasked"`
	NoShows90d  int     `json:"noShows90d"`
}

// idOrNull is id, or JSON null for 0 (none).
func idOrNull(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}

// orNull is s, or JSON null for "".
func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toAdminCustomerJSON(c *booking.Customer) *adminCustomerJSON {
	if c == nil {
		return nil
	}
	return &adminCustomerJSON{CustomerID: c.ID, Name: orNull(c.Name), Phone: orNull(c.Phone),
		Visits: c.Visits, NoShows90d: c.NoShows90d, Note: orNull(c.Note)}
}

func toMeJSON(c *booking.Customer) meJSON {
	return meJSON{Name: orNull(c.Name), PhoneMasked: orNull(booking.MaskPhone(c.Phone)), NoShows90d: c.NoShows90d}
}

type slotJSON struct {
	SlotID    int64  `json:"slotId"`
	StartAt   string `json:"startAt"`
	EndAt     string `json:"endAt"`
	Capacity  int    `json:"capacity"`
	Remaining int    `json:"remaining"`
	PriceFen  int64  `json:"priceFen"`
	Bookable  bool   `json:"bookable"`
	Open      *bool  `json:"open,omitempty"` // the salon's view only
}

type reservationJSON struct {
	Booking bookingJSON              `json:"booking"`
	Payment *wechatpay.PaymentParams `json:"payment,omitempty"`
}

func shopTime(t time.Time, loc *time.Location) string { return t.In(loc).Format(time.RFC3339) }

// toBookingJSON shapes b in the shop's time zone, with the free-cancel
// deadline of the salon's policy, both as the use case c has them.
func toBookingJSON(b *booking.Booking, c *service.Common, withOpenID bool) bookingJSON {
	loc := c.Loc
	j := bookingJSON{
		BookingID: b.ID, SlotID: b.SlotID, Status: b.Status.String(),
		StartAt: shopTime(b.StartAt, loc), EndAt: shopTime(b.EndAt, loc),
		ServiceID: idOrNull(b.ServiceID), ServiceName: orNull(b.ServiceName),
		TechnicianID: idOrNull(b.TechnicianID), TechnicianName: orNull(b.TechnicianName),
		AmountFen: b.AmountFen, PriceFen: b.PriceFen,
		LockExpireAt: shopTime(b.LockExpire, loc), CreatedAt: shopTime(b.CreatedAt, loc),
		CancelFreeUntil: shopTime(b.CancelFreeUntil(c.Policy.CancelFreeHours), loc),
	}
	if b.Refund != nil {
		// A refund WeChat has not accepted yet is, for the customer, in progress.
		status := string(b.Refund.Status)
		if b.Refund.Status == booking.RefundPending {
			status = string(booking.RefundProcessing)
		}
		j.Refund = &refundJSON{Status: status, AmountFen: b.Refund.AmountFen}
		if b.Refund.RefundedAt != nil {
			s := shopTime(*b.Refund.RefundedAt, loc)
			j.Refund.RefundedAt = &s
		}
	}
	if b.CheckinCode != "" {
		code := b.CheckinCode
		j.CheckinCode = &code
	}
	if withOpenID {
		openid := b.OpenID
		j.OpenID = &openid
		j.Customer = toAdminCustomerJSON(b.Customer)
	}
	return j
}

func toBookingsJSON(bs []*booking.Booking, c *service.Common, withOpenID bool) []bookingJSON {
	out := make([]bookingJSON, 0, len(bs))
	for _, b := range bs {
		out = append(out, toBookingJSON(b, c, withOpenID))
	}
	return out
}

func toSlotJSON(s *booking.Slot, bookable bool, loc *time.Location, withOpen bool) slotJSON {
	j := slotJSON{SlotID: s.ID, StartAt: shopTime(s.StartAt, loc), EndAt: shopTime(s.EndAt, loc),
		Capacity: s.Capacity, Remaining: s.Remaining(), PriceFen: s.PriceFen, Bookable: bookable}
	if withOpen {
		open := s.Open
		j.Open = &open
	}
	return j
}

func toSlotsJSON(vs []booking.SlotView, loc *time.Location) []slotJSON {
	out := make([]slotJSON, 0, len(vs))
	for i := range vs {
		out = append(out, toSlotJSON(&vs[i].Slot, vs[i].Bookable, loc, false))
	}
	return out
}

type waitlistJSON struct {
	SlotID    int64  `json:"slotId"`
	StartAt   string `json:"startAt,omitempty"` // the customer's list only
	EndAt     string `json:"endAt,omitempty"`
	Position  int    `json:"position"`
	CreatedAt string `json:"createdAt"`
}

func toWaitlistJSON(w *booking.WaitlistEntry, loc *time.Location, withTimes bool) waitlistJSON {
	j := waitlistJSON{SlotID: w.SlotID, Position: w.Position, CreatedAt: shopTime(w.CreatedAt, loc)}
	if withTimes {
		j.StartAt, j.EndAt = shopTime(w.StartAt, loc), shopTime(w.EndAt, loc)
	}
	return j
}
