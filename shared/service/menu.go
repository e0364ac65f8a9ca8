package service

import (
	"context"
	"time"

	"salon/shared/booking"
)

// Menu is the salon's services and the technicians who do them (functions
// slots and admin): the public menu and a day's free starts, and the
// salon's edits of services, technicians, their hours and time off. Staff
// may read the salon's lists; changing them is the owner's
// (booking.ActionMenu).
type Menu struct {
	*Common
	store MenuStore
}

// MenuStore is what the Menu asks of the store.
type MenuStore interface {
	Menu(ctx context.Context) ([]booking.Service, error)
	ListServices(ctx context.Context) ([]booking.Service, error)
	CreateService(ctx context.Context, s booking.Service) (*booking.Service, error)
	UpdateService(ctx context.Context, id int64, u booking.ServiceUpdate) (*booking.Service, error)
	ListTechnicians(ctx context.Context) ([]booking.Technician, error)
	FindTechnician(ctx context.Context, id int64) (*booking.Technician, error)
	CreateTechnician(ctx context.Context, t booking.Technician) (*booking.Technician, error)
	UpdateTechnician(ctx context.Context, id int64, u booking.TechnicianUpdate) (*booking.Technician, error)
	CreateSlots(ctx context.Context, slots []booking.ScheduledSlot) (created, skipped int, err error)
	TakeTimeOff(ctx context.Context, technicianID int64, from, to time.Time, actor string) (int, error)
	ServiceDay(ctx context.Context, serviceID, technicianID int64, dayStart, dayEnd time.Time) (booking.ServiceFacts, error)
}

// Services is the public menu (GET /services): the active services, each
// with the active technicians who do it.
func (s *Menu) Services(ctx context.Context) ([]booking.Service, error) {
	return s.store.Menu(ctx)
}

// Availability is a shop day's free starts of a service (GET /availability).
type Availability struct {
	Date      string
	ServiceID int64
	Starts    []booking.FreeStart
}

// Availability lists each start on date (YYYY-MM-DD, shop time) at which a
// technician who does service serviceID (technicianID, or any when 0) has
// every cell of it open and free, not started and inside the booking
// window, with the technicians free at it in the order a booking without a
// named one tries them (booking.Policy.FreeStarts). One read of the day's
// facts (three statements), whatever the number of technicians or starts. A
// bad date is BAD_REQUEST; a service not on the menu, or a technician who
// does not exist, NOT_FOUND.
func (s *Menu) Availability(ctx context.Context, date string, serviceID, technicianID int64) (*Availability, error) {
	from, to, err := booking.DayBounds(date, s.Loc)
	if err != nil {
		return nil, err
	}
	f, err := s.store.ServiceDay(ctx, serviceID, technicianID, from, to)
	if err != nil {
		return nil, err
	}
	starts, err := s.Policy.FreeStarts(f, serviceID)
	if err != nil {
		return nil, err
	}
	return &Availability{Date: date, ServiceID: serviceID, Starts: starts}, nil
}

// AdminServices is every service, inactive ones too (GET /admin/services).
func (s *Menu) AdminServices(ctx context.Context) ([]booking.Service, error) {
	if _, err := allow(ctx, booking.ActionMenuView); err != nil {
		return nil, err
	}
	return s.store.ListServices(ctx)
}

// CreateService adds a service (POST /admin/services): name, minutes,
// priceFen and depositFen required, by booking.ServiceUpdate's rules with
// GRID_MINUTES.
func (s *Menu) CreateService(ctx context.Context, u booking.ServiceUpdate) (*booking.Service, error) {
	if _, err := allow(ctx, booking.ActionMenu); err != nil {
		return nil, err
	}
	svc, err := u.NewService(s.Policy.GridMinutes)
	if err != nil {
		return nil, err
	}
	return s.store.CreateService(ctx, svc)
}

// UpdateService changes any of a service's fields (PATCH
// /admin/services/{id}); the result must keep the rules as a whole. A new
// length or price applies to bookings made after it.
func (s *Menu) UpdateService(ctx context.Context, id int64, u booking.ServiceUpdate) (*booking.Service, error) {
	if _, err := allow(ctx, booking.ActionMenu); err != nil {
		return nil, err
	}
	if u == (booking.ServiceUpdate{}) {
		return nil, booking.Errorf(booking.EBADREQUEST, "service: nothing to change")
	}
	return s.store.UpdateService(ctx, id, u)
}

// Technicians is every technician, inactive ones too, with the services she
// does and her staff account (GET /admin/technicians).
func (s *Menu) Technicians(ctx context.Context) ([]booking.Technician, error) {
	if _, err := allow(ctx, booking.ActionMenuView); err != nil {
		return nil, err
	}
	return s.store.ListTechnicians(ctx)
}

// CreateTechnician adds a technician (POST /admin/technicians): name and
// serviceIds required, staffId optional.
func (s *Menu) CreateTechnician(ctx context.Context, u booking.TechnicianUpdate) (*booking.Technician, error) {
	if _, err := allow(ctx, booking.ActionMenu); err != nil {
		return nil, err
	}
	t, err := u.NewTechnician()
	if err != nil {
		return nil, err
	}
	return s.store.CreateTechnician(ctx, t)
}

// UpdateTechnician changes any of a technician's fields (PATCH
// /admin/technicians/{id}); staffId null (SetStaff with StaffID 0) unlinks
// her account.
func (s *Menu) UpdateTechnician(ctx context.Context, id int64, u booking.TechnicianUpdate) (*booking.Technician, error) {
	if _, err := allow(ctx, booking.ActionMenu); err != nil {
		return nil, err
	}
	if _, err := u.Apply(booking.Technician{}); err != nil {
		return nil, err // the shape, before the store is asked
	}
	return s.store.UpdateTechnician(ctx, id, u)
}

// OpenHours lays a technician's cells (POST /admin/technicians/{id}/hours):
// one of GRID_MINUTES from open while a whole one ends by close, every day
// from from to to (booking.Hours); a cell that exists at a start is skipped,
// so the same hours sent twice create nothing. An unknown technician is
// NOT_FOUND.
func (s *Menu) OpenHours(ctx context.Context, technicianID int64, h booking.Hours) (created, skipped int, err error) {
	if _, err := allow(ctx, booking.ActionMenu); err != nil {
		return 0, 0, err
	}
	cells, err := h.Cells(s.Loc, s.Policy.GridMinutes, technicianID)
	if err != nil {
		return 0, 0, err
	}
	if _, err := s.store.FindTechnician(ctx, technicianID); err != nil {
		return 0, 0, err
	}
	return s.store.CreateSlots(ctx, cells)
}

// TimeOff closes a technician's cells that start in [from, to) of a date
// (POST /admin/technicians/{id}/off), all or none, and answers how many it
// closed. A cell someone holds refuses the whole of it: INVALID_STATE, as a
// *booking.InTheWay naming the bookings in the way (with their customers),
// for the console to list. Race-safe against a reservation of those cells:
// one of the two wins (mysql's TakeTimeOff).
func (s *Menu) TimeOff(ctx context.Context, technicianID int64, o booking.TimeOff) (int, error) {
	who, err := allow(ctx, booking.ActionMenu)
	if err != nil {
		return 0, err
	}
	from, to, err := o.Range(s.Loc)
	if err != nil {
		return 0, err
	}
	return s.store.TakeTimeOff(ctx, technicianID, from, to, who.Actor())
}
