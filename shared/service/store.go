package service

import (
	"context"
	"time"

	"salon/shared/booking"
)

// What the service needs of its dependencies, each a small interface in the
// domain's words, declared here by their user: package mysql's *DB satisfies
// Store, package wechatpay's *Client Payments, package wxmsg (through package instance)
// Messenger, package cls AuditShipper. Nothing here names SQL, HTTP or WeChat's
// wire format.

// Bookings creates bookings and changes their status: the one status-change
// path, and the reads the rules decide on.
type Bookings interface {
	Reserve(ctx context.Context, req booking.ReserveRequest) (b *booking.Booking, created bool, err error)
	// ReserveService books a service at a start with a technician, or the
	// first free one in pick order (booking.Policy.TechniciansToTry).
	ReserveService(ctx context.Context, req booking.ServiceReserveRequest) (b *booking.Booking, created bool, err error)
	ChangeStatus(ctx context.Context, c booking.Change) (*booking.Booking, error)
	// Reschedule moves a confirmed booking to c.ToSlotID in one transaction
	// (booking.Policy.PlanReschedule decides on the facts it reads there).
	Reschedule(ctx context.Context, c booking.Change) (*booking.Booking, error)
	FindBooking(ctx context.Context, id int64) (*booking.Booking, error)
	FindCustomerBooking(ctx context.Context, openid string, id int64) (*booking.Booking, error)
	ListCustomerBookings(ctx context.Context, openid string, limit int) ([]*booking.Booking, error)
	ListSlotBookings(ctx context.Context, from, to time.Time) ([]*booking.Booking, error)
	CountNoShows(ctx context.Context, openid string, within time.Duration) (int, error)
	// CheckinCode gives a booking its check-in code for a shop day (YYYY-MM-DD)
	// the first time it is asked, and the same one after, while the booking is
	// still in the slot and status it was read with ("" once it is not: moved
	// or changed since); FindByCheckinCode is the booking of that day with the
	// code.
	CheckinCode(ctx context.Context, b *booking.Booking, day string) (string, error)
	FindByCheckinCode(ctx context.Context, day, code string) (*booking.Booking, error)
}

// Customers are the salon's customers: mini-program customers by openid (a row
// made the first time it is needed), walk-ins by id, and the walk-in booking
// that takes a seat for someone at the counter or on the phone.
type Customers interface {
	CustomerByOpenID(ctx context.Context, openid string) (*booking.Customer, error)
	// UpdateCustomer sets a mini-program customer's name (hers from then on)
	// and/or phone; nil leaves one unchanged. A walk-in customer with the phone
	// becomes her (ACTIVE_BOOKING_EXISTS while both hold an unfinished booking).
	UpdateCustomer(ctx context.Context, openid string, name, phone *string) (*booking.Customer, error)
	SetCustomerNote(ctx context.Context, id int64, note string) (*booking.Customer, error)
	Checkout(ctx context.Context, bookingID int64, c booking.Checkout, actor string) (*booking.Booking, error)
	// AttachCustomers fills in each booking's Customer, for the salon's views.
	AttachCustomers(ctx context.Context, bs []*booking.Booking) error
	// CustomerHistory is a customer with her bookings, newest first.
	CustomerHistory(ctx context.Context, id int64, limit int) (*booking.Customer, []*booking.Booking, error)
	// SearchBookings is the bookings of the customers a search names, with
	// their customers, newest first.
	SearchBookings(ctx context.Context, s booking.CustomerSearch, limit int) ([]*booking.Booking, error)
	WalkIn(ctx context.Context, req booking.WalkInRequest) (*booking.Booking, error)
	// OpenBookingOfPhone is the unfinished booking of the customer with the
	// phone, with her (NOT_FOUND: none).
	OpenBookingOfPhone(ctx context.Context, phone string) (*booking.Booking, error)
}

// Slots are the schedule.
type Slots interface {
	CreateSlots(ctx context.Context, slots []booking.ScheduledSlot) (created, skipped int, err error)
	UpdateSlot(ctx context.Context, id int64, u booking.SlotUpdate, actor string) (*booking.SlotView, error)
	ListSlots(ctx context.Context, from, to time.Time) ([]booking.SlotView, error)
	// FindSlot is one slot by its key (the console names a slot by its start).
	FindSlot(ctx context.Context, id int64) (*booking.Slot, error)
}

// Menus are the services, the technicians who do them, their cells (laid
// by Slots.CreateSlots) and time off, and the facts of a service's day.
type Menus interface {
	// Menu is the active services, each with the active technicians who do it.
	Menu(ctx context.Context) ([]booking.Service, error)
	ListServices(ctx context.Context) ([]booking.Service, error)
	CreateService(ctx context.Context, s booking.Service) (*booking.Service, error)
	// UpdateService applies u to the service as it is (booking.ServiceUpdate.Apply).
	UpdateService(ctx context.Context, id int64, u booking.ServiceUpdate) (*booking.Service, error)
	ListTechnicians(ctx context.Context) ([]booking.Technician, error)
	FindTechnician(ctx context.Context, id int64) (*booking.Technician, error)
	// CreateTechnician and UpdateTechnician: services or a staff account that
	// do not exist are BAD_REQUEST, an account another technician has
	// INVALID_STATE.
	CreateTechnician(ctx context.Context, t booking.Technician) (*booking.Technician, error)
	UpdateTechnician(ctx context.Context, id int64, u booking.TechnicianUpdate) (*booking.Technician, error)
	// TakeTimeOff closes a technician's cells starting in [from, to), all or
	// none: a booked one refuses it with *booking.InTheWay.
	TakeTimeOff(ctx context.Context, technicianID int64, from, to time.Time, actor string) (int, error)
	// ServiceDay is the facts of a service's bookings on a shop day.
	ServiceDay(ctx context.Context, serviceID, technicianID int64, dayStart, dayEnd time.Time) (booking.ServiceFacts, error)
	// TechnicianDayCells is a technician's cells starting in [from, to),
	// earliest first, each with the booking holding it (the salon's calendar).
	TechnicianDayCells(ctx context.Context, technician int64, from, to time.Time) ([]booking.DayCell, error)
}

// Waitlists are the lines of full slots.
type Waitlists interface {
	JoinWaitlist(ctx context.Context, openid string, slotID int64, maxEntries int) (*booking.WaitlistEntry, error)
	LeaveWaitlist(ctx context.Context, openid string, slotID int64) error
	CustomerWaitlist(ctx context.Context, openid string) ([]booking.WaitlistEntry, error)
	WaitlistLengths(ctx context.Context, slotIDs []int64) (map[int64]int, error)
	DropStartedWaitlists(ctx context.Context) (int, error)
}

// Refunds records refunds and leases the due ones to a release run.
type Refunds interface {
	StartRefund(ctx context.Context, id int64, from booking.Status, p booking.Payment, actor, reason string) (started bool, err error)
	SetRefundState(ctx context.Context, id int64, to booking.RefundStatus, refundedAt *time.Time, refundID, actor, reason string) (changed bool, err error)
	DeferRefund(ctx context.Context, id int64, after time.Duration) error
	ClaimDueRefunds(ctx context.Context, queryAfter, lease time.Duration, limit int) ([]*booking.Booking, error)
	ListRefunds(ctx context.Context, limit int, states ...booking.RefundStatus) ([]*booking.Booking, error)
	CountRefunds(ctx context.Context, states ...booking.RefundStatus) (map[booking.RefundStatus]int, error)
}

// Outbox holds the customers' notifications until they are sent.
type Outbox interface {
	EnqueueReminders(ctx context.Context, remindBefore time.Duration) (int, error)
	ClaimDueNotifications(ctx context.Context, lease time.Duration, limit int) ([]booking.Notification, time.Time, error)
	FinishNotification(ctx context.Context, id int64, status booking.NotificationStatus, lastError string) error
	RetryNotification(ctx context.Context, id int64, after time.Duration, lastError string) error
	NotificationCounts(ctx context.Context, since time.Time, statuses ...booking.NotificationStatus) (map[booking.NotificationStatus]int, error)
	CountRetryingNotifications(ctx context.Context) (int, error)
	// DeleteFinishedNotifications deletes up to limit notifications finished
	// and last due more than olderThan ago; a pending one is never deleted.
	DeleteFinishedNotifications(ctx context.Context, olderThan time.Duration, limit int) (int, error)
}

// Release is what the release run leases and records.
type Release interface {
	ClaimExpired(ctx context.Context, limit int, lease time.Duration) ([]*booking.Booking, error)
	DueNoShows(ctx context.Context, grace time.Duration, limit int) ([]booking.SeatedBooking, error)
	FindDrift(ctx context.Context) ([]booking.SlotDrift, error)
	RecordReleaseRun(ctx context.Context, r booking.ReleaseRun) error
	LastReleaseRun(ctx context.Context) (*booking.ReleaseRun, error)
}

// Audit is the audit trail: recorded in the database, shipped to CLS.
type Audit interface {
	RecordAudit(ctx context.Context, r booking.AuditRecord) error
	BookingAudit(ctx context.Context, bookingID int64) ([]booking.AuditRecord, error)
	BookingLedger(ctx context.Context, bookingID int64) ([]booking.Money, error)
	AuditOfBookings(ctx context.Context, bookingIDs []int64) ([]booking.AuditRecord, error)
	ListAudit(ctx context.Context, from, to time.Time, event string, limit int) ([]booking.AuditRecord, error)
	AuditEvents(ctx context.Context, from, to time.Time) ([]string, error)
	UnshippedAudit(ctx context.Context, limit int) ([]booking.AuditRecord, error)
	UnshippedAuditBacklog(ctx context.Context) (int, *time.Time, error)
	MarkShipped(ctx context.Context, ids []int64) error
	// DeleteShippedAudit deletes up to limit records CLS accepted more than
	// olderThan ago; an unshipped record is never deleted.
	DeleteShippedAudit(ctx context.Context, olderThan time.Duration, limit int) (int, error)
}

// ConsoleSessions remembers the console's signed-out sessions.
type ConsoleSessions interface {
	EndConsoleSession(ctx context.Context, sessionID string, expiresAt time.Time) error
	ConsoleSessionEnded(ctx context.Context, sessionID string) (bool, error)
}

// StaffAccounts are the people who sign in to the console, and the sign-in
// lock-out every instance shares.
type StaffAccounts interface {
	// CreateStaff: a name already taken is INVALID_STATE.
	CreateStaff(ctx context.Context, s booking.NewStaff) (*booking.Staff, error)
	ListStaff(ctx context.Context) ([]booking.Staff, error)
	FindStaff(ctx context.Context, id int64) (*booking.Staff, error)
	UpdateStaff(ctx context.Context, id int64, u booking.StaffUpdate) (*booking.Staff, error)
	// StaffCredential is the account of a name with its hash; NOT_FOUND when
	// there is none.
	StaffCredential(ctx context.Context, name string) (*booking.StaffCredential, error)
	// SignInLocked is TOO_MANY_ATTEMPTS while a name is locked out for a
	// client address (booking.SignInLocked).
	SignInLocked(ctx context.Context, name, address string) error
	// RecordSignIn counts a checked sign-in's outcome under the name's lock: a
	// name locked meanwhile is TOO_MANY_ATTEMPTS whatever the outcome.
	RecordSignIn(ctx context.Context, name, address string, ok bool) error
	// DeleteOldSignIns deletes up to limit sign-in records older than
	// olderThan.
	DeleteOldSignIns(ctx context.Context, olderThan time.Duration, limit int) (int, error)
}

// Store is all of the above, and the store's own: its clock (the one every
// rule about time is decided by), whether it answers, what its failures mean
// (UNAVAILABLE for a database that is down or out of connections), and closing
// it at the end of an instance.
type Store interface {
	Bookings
	Customers
	Slots
	Menus
	Waitlists
	Refunds
	Outbox
	Release
	Audit
	ConsoleSessions
	StaffAccounts
	ReportsStore
	ReconciliationStore
	Now(ctx context.Context) (time.Time, error)
	Ping(ctx context.Context) error
	Classify(err error) error
	Close() error
}

// Payments is the part of WeChat Pay the product uses (implemented by
// *wechatpay.Client; tests use the same client against the local simulator).
// An order WeChat has never heard of is booking.ErrOrderNotExist; a refund it
// refuses for good booking.ErrRefundRefused, one waiting for the merchant's
// balance booking.ErrRefundWaitsForBalance (errors.Is).
type Payments interface {
	Prepay(ctx context.Context, o booking.PayOrder) (*booking.PaymentParams, error)
	CloseOrder(ctx context.Context, outTradeNo string) error
	QueryOrder(ctx context.Context, outTradeNo string) (*booking.OrderState, error)
	Refund(ctx context.Context, r booking.RefundRequest) (*booking.RefundResult, error)
	QueryRefund(ctx context.Context, outRefundNo string) (*booking.RefundResult, error)
}

// Phones exchanges the code of the mini-program's getPhoneNumber button for the
// customer's number (implemented by *wxmsg.Client): a code WeChat rejects is
// BAD_REQUEST, WeChat not answering UPSTREAM_UNAVAILABLE.
type Phones interface {
	PhoneNumber(ctx context.Context, code string) (string, error)
}
