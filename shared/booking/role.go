package booking

// AdminAction is a change the salon makes through the console or the admin API.
type AdminAction string

const (
	ActionCheckIn    AdminAction = "check_in"
	ActionNoShow     AdminAction = "no_show"
	ActionWalkIn     AdminAction = "walk_in"
	ActionReschedule AdminAction = "reschedule"
	ActionNote       AdminAction = "note"
	// ActionCheckout records what a customer paid in the shop.
	ActionCheckout AdminAction = "checkout"
	// ActionCancel is the salon's cancel of a paid booking, which refunds the
	// deposit in full; ActionCancelUnpaid the cancel of one that has nothing
	// to refund (no WeChat payment: unpaid, a walk-in, free).
	ActionCancel       AdminAction = "cancel"
	ActionCancelUnpaid AdminAction = "cancel_unpaid"
	// ActionSchedule creates slots; ActionSlotChange closes, reopens or
	// resizes one.
	ActionSchedule   AdminAction = "schedule"
	ActionSlotChange AdminAction = "slot_change"
	ActionStaff      AdminAction = "staff"
	// ActionMenu changes the menu: services, technicians, their hours and
	// time off. ActionMenuView reads them (the salon's lists).
	ActionMenu     AdminAction = "menu"
	ActionMenuView AdminAction = "menu_view"
	// ActionReports reads the owner's figures: the reports, the bookings'
	// export and the day's takings.
	ActionReports AdminAction = "reports"
	// ActionReconcile reads and runs the reconciliation with WeChat Pay's
	// bills: the salon's money, the owner's.
	ActionReconcile AdminAction = "reconcile"
)

// AdminActions is every admin action.
var AdminActions = []AdminAction{ActionCheckIn, ActionNoShow, ActionWalkIn, ActionReschedule, ActionNote, ActionCheckout,
	ActionCancelUnpaid, ActionCancel, ActionSchedule, ActionSlotChange, ActionStaff, ActionMenu, ActionMenuView, ActionReports, ActionReconcile}

// staffMay is what a staff member (not the owner) may do: the work at the
// counter, and reading the menu. Money going back, the schedule, the menu and
// the accounts are the owner's.
var staffMay = map[AdminAction]bool{
	ActionCheckIn: true, ActionNoShow: true, ActionWalkIn: true, ActionReschedule: true, ActionNote: true,
	ActionCheckout: true, ActionCancelUnpaid: true, ActionMenuView: true,
}

// May reports whether role may take action: the owner anything, staff the
// counter's work.
func (r Role) May(a AdminAction) bool {
	switch r {
	case RoleOwner:
		return true
	case RoleStaff:
		return staffMay[a]
	}
	return false
}

// CancelAction is what the salon's cancel of b is by the roles: a booking
// with a WeChat payment is refunded (ActionCancel, the owner's); any other has
// nothing to refund (ActionCancelUnpaid).
func CancelAction(b *Booking) AdminAction {
	if b.Paid() {
		return ActionCancel
	}
	return ActionCancelUnpaid
}

// Allow is nil when role may take action, and FORBIDDEN otherwise.
func (r Role) Allow(a AdminAction) error {
	if r.May(a) {
		return nil
	}
	return Errorf(EFORBIDDEN, "%s may not %s", r, a)
}
