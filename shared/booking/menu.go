package booking

import (
	"slices"
)

// A nail salon sells a technician's time for services of different lengths:
// the menu (Service), the people who do the work (Technician), and the rules
// the salon's own edits of them follow. Her time itself is cells of
// GRID_MINUTES (grid.go); a booking of a service takes a span of them.

// Service is one item of the salon's menu.
type Service struct {
	ID      int64
	Name    string
	Minutes int // how long it takes: a multiple of GRID_MINUTES, at most MaxServiceMinutes
	// PriceFen is the full price; DepositFen (0 to PriceFen) what the
	// mini-program pays at reserve (0 confirms at once, with no payment).
	PriceFen   int64
	DepositFen int64
	Active     bool
	// Technicians are the active technicians who do it, for the public menu
	// (nil in the salon's own list).
	Technicians []TechnicianRef
}

// TechnicianRef names a technician where a service or a free start lists her.
type TechnicianRef struct {
	ID   int64
	Name string
}

// Technician is one person whose time the salon sells.
type Technician struct {
	ID     int64
	Name   string
	Active bool
	// ServiceIDs are the services she does, ascending.
	ServiceIDs []int64
	// StaffID is the staff account she signs in to the console with, 0 for
	// none (null in JSON).
	StaffID int64
}

// Does reports whether she takes bookings of service id: active, and it is
// one of hers.
func (t *Technician) Does(id int64) bool {
	return t.Active && slices.Contains(t.ServiceIDs, id)
}

// The bounds of the salon's edits of the menu. Names are in characters, after
// CleanName.
const (
	MaxServiceNameLen    = 30
	MaxTechnicianNameLen = 20
	MaxServiceMinutes    = 480
	MaxPriceFen          = 1000000
	// MaxTechnicianServices bounds one technician's list, so a request cannot
	// name a million ids.
	MaxTechnicianServices = 200
)

// ServiceUpdate is the salon's create (POST /admin/services: every field but
// Active) or change (PATCH: any of them) of a service; nil leaves a field as
// it is.
type ServiceUpdate struct {
	Name       *string
	Minutes    *int
	PriceFen   *int64
	DepositFen *int64
	Active     *bool
}

// NewService is the service the create request u makes, valid with the grid
// of gridMinutes (GRID_MINUTES): name, minutes, price and deposit required,
// active unless u says otherwise.
func (u ServiceUpdate) NewService(gridMinutes int) (Service, error) {
	if u.Name == nil || u.Minutes == nil || u.PriceFen == nil || u.DepositFen == nil {
		return Service{}, Errorf(EBADREQUEST, "service: name, minutes, priceFen and depositFen are required")
	}
	return u.Apply(Service{Active: true}, gridMinutes)
}

// Apply is service s with u's fields, checked as a whole (so a lower price
// under an unchanged deposit is refused): the name by CleanName's rules (at
// most MaxServiceNameLen), minutes a multiple of gridMinutes and at most
// MaxServiceMinutes, the price 0-MaxPriceFen, the deposit 0 to the price.
// Anything else is BAD_REQUEST, and so is an update that names no field.
func (u ServiceUpdate) Apply(s Service, gridMinutes int) (Service, error) {
	if u == (ServiceUpdate{}) {
		return s, Errorf(EBADREQUEST, "service: nothing to change")
	}
	if u.Name != nil {
		n, err := CleanName(*u.Name, MaxServiceNameLen)
		if err != nil {
			return s, err
		}
		s.Name = n
	}
	if u.Minutes != nil {
		s.Minutes = *u.Minutes
	}
	if u.PriceFen != nil {
		s.PriceFen = *u.PriceFen
	}
	if u.DepositFen != nil {
		s.DepositFen = *u.DepositFen
	}
	if u.Active != nil {
		s.Active = *u.Active
	}
	switch {
	case !ValidGrid(gridMinutes):
		return s, Errorf(EINTERNAL, "GRID_MINUTES %d does not divide an hour", gridMinutes)
	case s.Minutes <= 0 || s.Minutes > MaxServiceMinutes || s.Minutes%gridMinutes != 0:
		return s, Errorf(EBADREQUEST, "service: minutes %d: want a multiple of %d up to %d", s.Minutes, gridMinutes, MaxServiceMinutes)
	case s.PriceFen < 0 || s.PriceFen > MaxPriceFen:
		return s, Errorf(EBADREQUEST, "service: priceFen %d outside 0-%d", s.PriceFen, MaxPriceFen)
	case s.DepositFen < 0 || s.DepositFen > s.PriceFen:
		return s, Errorf(EBADREQUEST, "service: depositFen %d outside 0-%d (the price)", s.DepositFen, s.PriceFen)
	}
	return s, nil
}

// TechnicianUpdate is the salon's create (POST /admin/technicians: name and
// serviceIds required) or change (PATCH: any field) of a technician; nil
// leaves a field as it is. Her staff account is the one field that can be
// set to nothing, so it says whether it is given (SetStaff) apart from its
// value (StaffID, 0 for null: unlink).
type TechnicianUpdate struct {
	Name       *string
	Active     *bool
	ServiceIDs *[]int64
	SetStaff   bool
	StaffID    int64
}

// NewTechnician is the technician the create request u makes (active unless
// u says otherwise).
func (u TechnicianUpdate) NewTechnician() (Technician, error) {
	if u.Name == nil || u.ServiceIDs == nil {
		return Technician{}, Errorf(EBADREQUEST, "technician: name and serviceIds are required")
	}
	return u.Apply(Technician{Active: true})
}

// Apply is technician t with u's fields: the name by CleanName's rules (at
// most MaxTechnicianNameLen), the services positive ids (kept ascending; one
// named twice is BAD_REQUEST, as the contract's uniqueItems says; at most
// MaxTechnicianServices), the staff account a positive id or 0.
// Whether those services and that account exist is the store's to check, on
// the rows it writes with. An update that names no field is BAD_REQUEST.
func (u TechnicianUpdate) Apply(t Technician) (Technician, error) {
	if u.Name == nil && u.Active == nil && u.ServiceIDs == nil && !u.SetStaff {
		return t, Errorf(EBADREQUEST, "technician: nothing to change")
	}
	if u.Name != nil {
		n, err := CleanName(*u.Name, MaxTechnicianNameLen)
		if err != nil {
			return t, err
		}
		t.Name = n
	}
	if u.Active != nil {
		t.Active = *u.Active
	}
	if u.ServiceIDs != nil {
		ids := slices.Clone(*u.ServiceIDs)
		slices.Sort(ids)
		if len(slices.Compact(slices.Clone(ids))) != len(ids) {
			return t, Errorf(EBADREQUEST, "technician: serviceIds names a service twice")
		}
		if len(ids) > MaxTechnicianServices {
			return t, Errorf(EBADREQUEST, "technician: %d services, at most %d", len(ids), MaxTechnicianServices)
		}
		if len(ids) > 0 && ids[0] <= 0 {
			return t, Errorf(EBADREQUEST, "technician: serviceIds: want positive ids")
		}
		if ids == nil {
			ids = []int64{}
		}
		t.ServiceIDs = ids
	}
	if u.SetStaff {
		if u.StaffID < 0 {
			return t, Errorf(EBADREQUEST, "technician: staffId: want a positive id or null")
		}
		t.StaffID = u.StaffID
	}
	return t, nil
}
