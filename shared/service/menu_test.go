package service_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"salon/shared/booking"
	"salon/shared/mysql"
	"salon/shared/mysql/mysqltest"
	"salon/shared/service"
)

var shopTZ = time.FixedZone("CST", 8*3600)

// menuDay sets up a salon through the service: two services and two
// technicians with hours 10:00-14:00 on the day after tomorrow (shop time),
// and answers the day and the ids.
type menuDay struct {
	date                string
	open                time.Time // 10:00 that day
	gel, brow, amy, bea int64
}

func newMenuDay(t *testing.T, svc *service.Service) menuDay {
	t.Helper()
	gel, err := svc.CreateService(ctx, booking.ServiceUpdate{Name: ptr("光疗甲"), Minutes: ptr(90), PriceFen: ptr(int64(30000)), DepositFen: ptr(int64(5000))})
	if err != nil {
		t.Fatal(err)
	}
	brow, err := svc.CreateService(ctx, booking.ServiceUpdate{Name: ptr("修眉"), Minutes: ptr(30), PriceFen: ptr(int64(3000)), DepositFen: ptr(int64(0))})
	if err != nil {
		t.Fatal(err)
	}
	amy, err := svc.CreateTechnician(ctx, booking.TechnicianUpdate{Name: ptr("Amy"), ServiceIDs: &[]int64{gel.ID, brow.ID}})
	if err != nil {
		t.Fatal(err)
	}
	bea, err := svc.CreateTechnician(ctx, booking.TechnicianUpdate{Name: ptr("Bea"), ServiceIDs: &[]int64{gel.ID}})
	if err != nil {
		t.Fatal(err)
	}
	now, err := svc.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	date := booking.ShopDay(now.AddDate(0, 0, 2), shopTZ)
	for _, id := range []int64{amy.ID, bea.ID} {
		created, skipped, err := svc.OpenHours(ctx, id, booking.Hours{From: date, To: date, Open: "10:00", Close: "14:00"})
		if err != nil || created != 8 || skipped != 0 {
			t.Fatalf("hours: %d %d %v", created, skipped, err)
		}
	}
	day, _ := booking.ParseDate(date, shopTZ)
	return menuDay{date: date, open: day.Add(10 * time.Hour), gel: gel.ID, brow: brow.ID, amy: amy.ID, bea: bea.ID}
}

func ptr[T any](v T) *T { return &v }

// TestMenuAndAvailability: the public menu lists the active services with
// the active technicians who do them; a day's free starts follow the cells
// (hours, bookings, time off), each with the technicians free at it in pick
// order; hours sent twice create nothing.
func TestMenuAndAvailability(t *testing.T) {
	t.Parallel()
	svc, store := newService(t)
	d := newMenuDay(t, svc)
	menu, err := svc.Services(ctx)
	if err != nil || len(menu) != 2 || menu[0].Name != "光疗甲" || len(menu[0].Technicians) != 2 || len(menu[1].Technicians) != 1 ||
		menu[1].Technicians[0].Name != "Amy" {
		t.Fatalf("menu %+v %v", menu, err)
	}
	if created, skipped, err := svc.OpenHours(ctx, d.amy, booking.Hours{From: d.date, To: d.date, Open: "10:00", Close: "14:00"}); err != nil || created != 0 || skipped != 8 {
		t.Fatalf("hours again: %d %d %v", created, skipped, err)
	}
	starts := func(service, tech int64) []string {
		t.Helper()
		a, err := svc.Availability(ctx, d.date, service, tech)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range a.Starts {
			names := ""
			for _, tr := range s.Technicians {
				names += tr.Name[:1]
			}
			out = append(out, s.StartAt.In(shopTZ).Format("15:04")+"-"+s.EndAt.In(shopTZ).Format("15:04")+names)
		}
		return out
	}
	// 90 minutes in 10:00-14:00: starts 10:00 .. 12:30, both technicians.
	if got, want := starts(d.gel, 0), []string{"10:00-11:30AB", "10:30-12:00AB", "11:00-12:30AB", "11:30-13:00AB", "12:00-13:30AB", "12:30-14:00AB"}; !slices.Equal(got, want) {
		t.Fatalf("starts %q, want %q", got, want)
	}
	if _, err := svc.ReserveService(ctx, "o-1", d.gel, d.amy, d.open.Add(time.Hour), ""); !booking.IsCode(err, booking.EUPSTREAM) {
		t.Fatalf("a deposit without WeChat Pay: %v", err) // the booking stays pending, holding its cells
	}
	if _, err := svc.TimeOff(ctx, d.bea, booking.TimeOff{Date: d.date, From: "13:00", To: "14:00"}); err != nil {
		t.Fatal(err)
	}
	// Amy holds 11:00-12:30; Bea is off from 13:00. B first: fewer minutes booked.
	if got, want := starts(d.gel, 0), []string{"10:00-11:30B", "10:30-12:00B", "11:00-12:30B", "11:30-13:00B", "12:30-14:00A"}; !slices.Equal(got, want) {
		t.Fatalf("starts %q, want %q", got, want)
	}
	if got, want := starts(d.brow, d.amy), []string{"10:00-10:30A", "10:30-11:00A", "12:30-13:00A", "13:00-13:30A", "13:30-14:00A"}; !slices.Equal(got, want) {
		t.Fatalf("Amy's 30-minute starts %q, want %q", got, want)
	}
	if got := starts(d.brow, d.bea); len(got) != 0 {
		t.Fatalf("Bea does not do it, yet %q", got)
	}
	for _, c := range []struct {
		date          string
		service, tech int64
		code          string
	}{
		{"2026-02-30", d.gel, 0, booking.EBADREQUEST},
		{d.date, 999, 0, booking.ENOTFOUND},
		{d.date, d.gel, 999, booking.ENOTFOUND},
	} {
		if _, err := svc.Availability(ctx, c.date, c.service, c.tech); !booking.IsCode(err, c.code) {
			t.Errorf("availability %+v: %v", c, err)
		}
	}
	// An inactive service leaves the menu; an inactive technician too.
	if _, err := svc.UpdateService(ctx, d.brow, booking.ServiceUpdate{Active: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.UpdateTechnician(ctx, d.bea, booking.TechnicianUpdate{Active: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	if menu, _ := svc.Services(ctx); len(menu) != 1 || len(menu[0].Technicians) != 1 {
		t.Fatalf("menu %+v", menu)
	}
	if all, _ := svc.AdminServices(ctx); len(all) != 2 || all[1].Active {
		t.Fatalf("the salon's list %+v", all)
	}
	mysqltest.CheckInvariant(t, store)
}

// TestMenuEdits: the owner's edits of services and technicians keep the
// rules (a deposit above the price, a length off the grid, services or a
// staff account that do not exist), a staff account is one technician's, and
// unlinking it is staffId null.
func TestMenuEdits(t *testing.T) {
	t.Parallel()
	svc, _ := newService(t)
	d := newMenuDay(t, svc)
	for _, u := range []booking.ServiceUpdate{
		{PriceFen: ptr(int64(4000))},
		{Minutes: ptr(45)},
		{},
	} {
		if _, err := svc.UpdateService(ctx, d.gel, u); !booking.IsCode(err, booking.EBADREQUEST) {
			t.Errorf("update %+v: %v", u, err)
		}
	}
	if _, err := svc.UpdateService(ctx, 999, booking.ServiceUpdate{Minutes: ptr(60)}); !booking.IsCode(err, booking.ENOTFOUND) {
		t.Errorf("unknown service: %v", err)
	}
	if s, err := svc.UpdateService(ctx, d.gel, booking.ServiceUpdate{Minutes: ptr(120), DepositFen: ptr(int64(0))}); err != nil || s.Minutes != 120 || s.DepositFen != 0 || s.PriceFen != 30000 {
		t.Fatalf("update: %+v %v", s, err)
	}
	amyStaff, err := svc.CreateStaff(ctx, "amy", booking.RoleStaff, "amy's password!")
	if err != nil {
		t.Fatal(err)
	}
	if tech, err := svc.UpdateTechnician(ctx, d.amy, booking.TechnicianUpdate{SetStaff: true, StaffID: amyStaff.ID}); err != nil || tech.StaffID != amyStaff.ID {
		t.Fatalf("link: %+v %v", tech, err)
	}
	if _, err := svc.UpdateTechnician(ctx, d.bea, booking.TechnicianUpdate{SetStaff: true, StaffID: amyStaff.ID}); !booking.IsCode(err, booking.EINVALIDSTATE) {
		t.Fatalf("her account to another technician: %v", err)
	}
	for _, u := range []booking.TechnicianUpdate{
		{ServiceIDs: &[]int64{d.gel, d.gel}},
		{Name: ptr("")},
		{},
	} {
		if _, err := svc.UpdateTechnician(ctx, d.bea, u); !booking.IsCode(err, booking.EBADREQUEST) {
			t.Errorf("update %+v: %v", u, err)
		}
	}
	for _, u := range []booking.TechnicianUpdate{
		{SetStaff: true, StaffID: 999},
		{ServiceIDs: &[]int64{d.gel, 999}},
	} {
		if _, err := svc.UpdateTechnician(ctx, d.bea, u); !booking.IsCode(err, booking.ENOTFOUND) {
			t.Errorf("update %+v: %v, want NOT_FOUND", u, err)
		}
	}
	if _, err := svc.CreateTechnician(ctx, booking.TechnicianUpdate{Name: ptr("Cat"), ServiceIDs: &[]int64{999}}); !booking.IsCode(err, booking.ENOTFOUND) {
		t.Errorf("a technician of a service that does not exist: %v", err)
	}
	if _, err := svc.CreateTechnician(ctx, booking.TechnicianUpdate{Name: ptr("Cat"), ServiceIDs: &[]int64{d.gel, d.brow, d.gel}}); !booking.IsCode(err, booking.EBADREQUEST) {
		t.Errorf("a service named twice: %v", err)
	}
	if tech, err := svc.UpdateTechnician(ctx, d.amy, booking.TechnicianUpdate{SetStaff: true}); err != nil || tech.StaffID != 0 {
		t.Fatalf("unlink: %+v %v", tech, err)
	}
	if tech, err := svc.UpdateTechnician(ctx, d.bea, booking.TechnicianUpdate{SetStaff: true, StaffID: amyStaff.ID, ServiceIDs: &[]int64{d.brow}}); err != nil ||
		tech.StaffID != amyStaff.ID || !slices.Equal(tech.ServiceIDs, []int64{d.brow}) {
		t.Fatalf("the account free again: %+v %v", tech, err)
	}
	list, err := svc.Technicians(ctx)
	if err != nil || len(list) != 2 || !slices.Equal(list[0].ServiceIDs, []int64{d.gel, d.brow}) || list[1].StaffID != amyStaff.ID {
		t.Fatalf("technicians %+v %v", list, err)
	}
	if _, _, err := svc.OpenHours(ctx, 999, booking.Hours{From: d.date, To: d.date, Open: "10:00", Close: "12:00"}); !booking.IsCode(err, booking.ENOTFOUND) {
		t.Fatalf("hours of nobody: %v", err)
	}
	if _, _, err := svc.OpenHours(ctx, d.amy, booking.Hours{From: d.date, To: d.date, Open: "10:15", Close: "12:00"}); !booking.IsCode(err, booking.EBADREQUEST) {
		t.Fatalf("hours off the grid: %v", err)
	}
}

// TestMenuByRole: staff read the salon's lists; the edits are the owner's
// (FORBIDDEN before anything changes); a call naming nobody is refused.
func TestMenuByRole(t *testing.T) {
	t.Parallel()
	svc, store := newService(t)
	d := newMenuDay(t, svc)
	staff := service.WithStaff(context.Background(), booking.Staff{ID: 7, Name: "amy", Role: booking.RoleStaff})
	if _, err := svc.AdminServices(staff); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Technicians(staff); err != nil {
		t.Fatal(err)
	}
	edits := map[string]func(context.Context) error{
		"create service": func(ctx context.Context) error {
			_, err := svc.CreateService(ctx, booking.ServiceUpdate{Name: ptr("x"), Minutes: ptr(30), PriceFen: ptr(int64(0)), DepositFen: ptr(int64(0))})
			return err
		},
		"update service": func(ctx context.Context) error {
			_, err := svc.UpdateService(ctx, d.gel, booking.ServiceUpdate{Active: ptr(false)})
			return err
		},
		"create technician": func(ctx context.Context) error {
			_, err := svc.CreateTechnician(ctx, booking.TechnicianUpdate{Name: ptr("x"), ServiceIDs: &[]int64{}})
			return err
		},
		"update technician": func(ctx context.Context) error {
			_, err := svc.UpdateTechnician(ctx, d.amy, booking.TechnicianUpdate{Active: ptr(false)})
			return err
		},
		"hours": func(ctx context.Context) error {
			_, _, err := svc.OpenHours(ctx, d.amy, booking.Hours{From: d.date, To: d.date, Open: "14:00", Close: "16:00"})
			return err
		},
		"time off": func(ctx context.Context) error {
			_, err := svc.TimeOff(ctx, d.amy, booking.TimeOff{Date: d.date, From: "10:00", To: "11:00"})
			return err
		},
	}
	for name, edit := range edits {
		for _, c := range []context.Context{staff, context.Background()} {
			if err := edit(c); !booking.IsCode(err, booking.EFORBIDDEN) {
				t.Errorf("%s: %v, want FORBIDDEN", name, err)
			}
		}
	}
	if _, err := svc.AdminServices(context.Background()); !booking.IsCode(err, booking.EFORBIDDEN) {
		t.Errorf("the salon's list naming nobody: %v", err)
	}
	if s, _ := svc.AdminServices(ctx); len(s) != 2 || !s[0].Active {
		t.Fatalf("a refused edit changed the menu: %+v", s)
	}
	var cells int
	store.SQL().QueryRow(`SELECT COUNT(*) FROM t_slot WHERE technician_id IS NOT NULL AND is_open = 1`).Scan(&cells)
	if cells != 16 {
		t.Fatalf("%d open cells after refused hours and time off", cells)
	}
}

// TestReserveServiceFlow: a service without a deposit is confirmed at once,
// with no payment; the idempotency key answers the same booking; a second
// booking of the customer is refused; the customer's cancel gives back
// every cell; NO_SHOW_LIMIT applies as at Reserve.
func TestReserveServiceFlow(t *testing.T) {
	t.Parallel()
	svc, store := newService(t)
	d := newMenuDay(t, svc)
	r, err := svc.ReserveService(ctx, "o-brow", d.brow, 0, d.open, "k-1")
	if err != nil || r.Payment != nil || !r.Created || r.Booking.Status != booking.StatusConfirmed || r.Booking.TechnicianID != d.amy ||
		r.Booking.ServiceName != "修眉" || r.Booking.PriceFen != 3000 || r.Booking.AmountFen != 0 {
		t.Fatalf("free service: %+v %v", r, err)
	}
	if again, err := svc.ReserveService(ctx, "o-brow", d.brow, 0, d.open, "k-1"); err != nil || again.Created || again.Booking.ID != r.Booking.ID {
		t.Fatalf("the key again: %+v %v", again, err)
	}
	if _, err := svc.ReserveService(ctx, "o-brow", d.gel, 0, d.open.Add(time.Hour), ""); !booking.IsCode(err, booking.EACTIVEBOOKINGEXISTS) {
		t.Fatalf("a second booking: %v", err)
	}
	if out, err := svc.CancelByCustomer(ctx, "o-brow", r.Booking.ID, false); err != nil || out.Status != booking.StatusCancelled {
		t.Fatalf("cancel: %+v %v", out, err)
	}
	mysqltest.CheckInvariant(t, store)
	if _, err := svc.ReserveService(ctx, "o-other", d.brow, d.amy, d.open, ""); err != nil {
		t.Fatalf("the cell given back: %v", err)
	}
	svc.Policy.NoShowLimit = 1
	store.SQL().Exec(`UPDATE t_booking SET status = 5 WHERE book_id = ?`, r.Booking.ID) // as if she had not come
	store.SQL().Exec(`DELETE FROM t_booking_slot WHERE book_id = ?`, r.Booking.ID)
	if _, err := svc.ReserveService(ctx, "o-brow", d.gel, 0, d.open.Add(time.Hour), ""); !booking.IsCode(err, booking.ENOSHOWLIMIT) {
		t.Fatalf("at the no-show limit: %v", err)
	}
}

// TestWalkInAServiceNow: the salon's walk-in of a service without a start
// sits down in the cell running now, with the technician free then.
func TestWalkInAServiceNow(t *testing.T) {
	t.Parallel()
	svc, store := newService(t)
	brow := mysqltest.AddService(t, store, "修眉", 30, 3000, 0)
	amy := mysqltest.AddTechnician(t, store, "Amy", brow)
	now, err := svc.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	running := booking.CellStart(now, shopTZ, store.Policy.GridMinutes)
	cells := mysqltest.LayCells(t, store, amy, running, 2)
	b, err := svc.WalkIn(ctx, booking.WalkInRequest{ServiceID: brow, Name: "李女士"})
	if err != nil || b.SlotID != cells[0] || b.Status != booking.StatusConfirmed || b.Customer == nil {
		t.Fatalf("walk-in now: %+v %v", b, err)
	}
	if _, err := svc.WalkIn(ctx, booking.WalkInRequest{ServiceID: brow, SlotID: cells[1], Name: "王女士"}); !booking.IsCode(err, booking.EBADREQUEST) {
		t.Fatalf("a slot and a service: %v", err)
	}
	staff := service.WithStaff(context.Background(), booking.Staff{ID: 7, Name: "amy", Role: booking.RoleStaff})
	if b, err := svc.WalkIn(staff, booking.WalkInRequest{ServiceID: brow, StartAt: running.Add(30 * time.Minute), Name: "王女士"}); err != nil || b.SlotID != cells[1] {
		t.Fatalf("staff's walk-in of the next cell: %+v %v", b, err)
	}
	mysqltest.CheckInvariant(t, store)
}

// TestRescheduleToStart: the customer moves her booking of a service half an
// hour later (the cells they share kept), once; the salon moves it to
// another technician; a refused move changes nothing.
func TestRescheduleToStart(t *testing.T) {
	t.Parallel()
	svc, store := newService(t)
	d := newMenuDay(t, svc)
	b := confirmedService(t, store, "o-move", d.gel, d.amy, d.open)
	moved, err := svc.RescheduleToStartByCustomer(ctx, "o-move", b.ID, d.open.Add(30*time.Minute), 0)
	if err != nil || !moved.StartAt.Equal(d.open.Add(30*time.Minute)) || moved.TechnicianID != d.amy || moved.Reschedules != 1 {
		t.Fatalf("her move: %+v %v", moved, err)
	}
	if _, err := svc.RescheduleToStartByCustomer(ctx, "o-move", b.ID, d.open.Add(2*time.Hour), 0); !booking.IsCode(err, booking.ERESCHEDULELIMIT) {
		t.Fatalf("her second move: %v", err)
	}
	if _, err := svc.RescheduleToStartByCustomer(ctx, "someone-else", b.ID, d.open, 0); !booking.IsCode(err, booking.ENOTFOUND) {
		t.Fatalf("someone else's booking: %v", err)
	}
	moved, err = svc.RescheduleToStartBySalon(ctx, b.ID, d.open.Add(2*time.Hour), d.bea, 0)
	if err != nil || moved.TechnicianID != d.bea || moved.TechnicianName != "Bea" || moved.Reschedules != 1 {
		t.Fatalf("the salon's move: %+v %v", moved, err)
	}
	if _, err := svc.RescheduleToStartBySalon(ctx, b.ID, d.open, d.bea, moved.SlotID+100); !booking.IsCode(err, booking.EINVALIDSTATE) {
		t.Fatalf("a move from where it no longer is: %v", err)
	}
	if _, err := svc.RescheduleBySalon(ctx, b.ID, moved.SlotID+1, 0); !booking.IsCode(err, booking.EINVALIDSTATE) {
		t.Fatalf("a technician's booking to a slot: %v", err)
	}
	if got, _ := store.FindBooking(ctx, b.ID); got.SlotID != moved.SlotID {
		t.Fatalf("a refused move moved it: %+v", got)
	}
	mysqltest.CheckInvariant(t, store)
}

// confirmedService books a service and records its payment.
func confirmedService(t *testing.T, store *mysql.DB, openid string, service, tech int64, start time.Time) *booking.Booking {
	t.Helper()
	from, to, _ := booking.DayBounds(booking.ShopDay(start, shopTZ), shopTZ)
	b, _, err := store.ReserveService(ctx, booking.ServiceReserveRequest{OpenID: openid, ServiceID: service, TechnicianID: tech,
		StartAt: start, DayStart: from, DayEnd: to})
	if err != nil {
		t.Fatal(err)
	}
	if b.Status == booking.StatusConfirmed {
		return b
	}
	b, err = store.ChangeStatus(ctx, booking.Change{BookingID: b.ID, From: booking.StatusPending, To: booking.StatusConfirmed,
		Event: booking.EventConfirm, Actor: booking.ActorWeChat, Reason: "test payment",
		Payment: &booking.Payment{TransactionID: fmt.Sprintf("4200%010d", b.ID), AmountFen: b.AmountFen, PaidAt: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLatePaymentOfAService: a payment for a technician's booking released
// meanwhile takes every cell of its span again and confirms it; one that
// finds a cell taken meanwhile takes none and is refunded in full.
func TestLatePaymentOfAService(t *testing.T) {
	t.Parallel()
	svc, store := newService(t)
	svc.AppID, svc.MchID = "wx-app", "mch-1"
	d := newMenuDay(t, svc)
	expired := func(openid string, start time.Time) *booking.Booking {
		t.Helper()
		from, to, _ := booking.DayBounds(d.date, shopTZ)
		b, _, err := store.ReserveService(ctx, booking.ServiceReserveRequest{OpenID: openid, ServiceID: d.gel, TechnicianID: d.amy,
			StartAt: start, DayStart: from, DayEnd: to})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.ChangeStatus(ctx, booking.Change{BookingID: b.ID, From: booking.StatusPending, To: booking.StatusExpired,
			Event: booking.EventRelease, Actor: booking.ActorTimer}); err != nil {
			t.Fatal(err)
		}
		return b
	}
	notice := func(b *booking.Booking) *booking.PaymentNotice {
		paidAt := time.Now()
		return &booking.PaymentNotice{EventID: "ev-" + b.OutTradeNo, EventType: "TRANSACTION.SUCCESS", OrderState: booking.OrderState{
			TradeState: booking.TradeSuccess, TransactionID: "4200-" + b.OutTradeNo, AppID: "wx-app", MchID: "mch-1",
			OutTradeNo: b.OutTradeNo, PayerOpenID: b.OpenID, AmountTotal: b.AmountFen, SuccessTime: &paidAt}}
	}
	a := expired("o-late-1", d.open)
	if out, err := svc.HandlePayment(ctx, notice(a)); err != nil || out != service.OutcomeConfirmed {
		t.Fatalf("late payment with her time free: %v %v", out, err)
	}
	var held int
	store.SQL().QueryRow(`SELECT COUNT(*) FROM t_booking_slot WHERE book_id = ?`, a.ID).Scan(&held)
	if held != 3 {
		t.Fatalf("re-seated in %d cells, want 3", held)
	}
	b := expired("o-late-2", d.open.Add(2*time.Hour))
	if _, err := svc.ReserveService(ctx, "o-brow", d.brow, d.amy, d.open.Add(3*time.Hour), ""); err != nil {
		t.Fatal(err) // her last cell of b's span
	}
	if out, err := svc.HandlePayment(ctx, notice(b)); err != nil || out != service.OutcomeRefunded {
		t.Fatalf("late payment with a cell taken: %v %v", out, err)
	}
	got, _ := store.FindBooking(ctx, b.ID)
	if got.Status != booking.StatusExpired || got.Refund == nil || got.Refund.AmountFen != b.AmountFen {
		t.Fatalf("after the refused re-seat: %+v %+v", got, got.Refund)
	}
	mysqltest.CheckInvariant(t, store)
}

// TestTimeOffNamesTheBookingsInTheWay: the owner's time off over a booked
// cell is INVALID_STATE with the booking and its customer, nothing closed.
func TestTimeOffNamesTheBookingsInTheWay(t *testing.T) {
	t.Parallel()
	svc, store := newService(t)
	d := newMenuDay(t, svc)
	b := confirmedService(t, store, "o-way", d.brow, d.amy, d.open.Add(time.Hour))
	_, err := svc.TimeOff(ctx, d.amy, booking.TimeOff{Date: d.date, From: "10:00", To: "12:00"})
	var way *booking.InTheWay
	if !errors.As(err, &way) || booking.ErrorCode(err) != booking.EINVALIDSTATE || len(way.Bookings) != 1 || way.Bookings[0].ID != b.ID ||
		way.Bookings[0].Customer == nil {
		t.Fatalf("time off over a booking: %v %+v", err, way)
	}
	if n, err := svc.TimeOff(ctx, d.amy, booking.TimeOff{Date: d.date, From: "12:00", To: "13:00"}); err != nil || n != 2 {
		t.Fatalf("time off: %d %v", n, err)
	}
	if _, err := svc.TimeOff(ctx, d.amy, booking.TimeOff{Date: d.date, From: "13:00", To: "12:00"}); !booking.IsCode(err, booking.EBADREQUEST) {
		t.Fatalf("backwards: %v", err)
	}
	mysqltest.CheckInvariant(t, store)
}
