package service

import (
	"context"
	"crypto/subtle"
	"time"

	"salon/shared/booking"
)

// Team is the salon's staff and the console's sign-in: accounts, passwords,
// sessions and the lock-out (function admin and the console).
type Team struct {
	*Common
	store TeamStore
	// Passwords hashes and checks the accounts' passwords; its zero value
	// is the production cost, booking.PasswordCost.
	Passwords booking.Passwords
}

// TeamStore is what the Team asks of the store.
type TeamStore interface {
	CreateStaff(ctx context.Context, s booking.NewStaff) (*booking.Staff, error)
	ListStaff(ctx context.Context) ([]booking.Staff, error)
	UpdateStaff(ctx context.Context, id int64, u booking.StaffUpdate) (*booking.Staff, error)
	SignInLocked(ctx context.Context, name, address string) error
	RecordSignIn(ctx context.Context, name, address string, ok bool) error
	StaffCredential(ctx context.Context, name string) (*booking.StaffCredential, error)
	ConsoleSessionEnded(ctx context.Context, sessionID string) (bool, error)
	FindStaff(ctx context.Context, id int64) (*booking.Staff, error)
	EndConsoleSession(ctx context.Context, sessionID string, expiresAt time.Time) error
}

// CreateStaff is the owner's new account: a name by booking.CleanStaffName, a
// role, a password of at least 10 characters, kept only as its bcrypt hash.
func (s *Team) CreateStaff(ctx context.Context, name string, role booking.Role, password string) (*booking.Staff, error) {
	if _, err := allow(ctx, booking.ActionStaff); err != nil {
		return nil, err
	}
	name, err := booking.CleanStaffName(name)
	if err != nil {
		return nil, err
	}
	if !role.Valid() {
		return nil, booking.Errorf(booking.EBADREQUEST, "role must be owner or staff")
	}
	hash, err := s.Passwords.Hash(password)
	if err != nil {
		return nil, err
	}
	return s.store.CreateStaff(ctx, booking.NewStaff{Name: name, Role: role, PasswordHash: hash})
}

// ListStaff is every account, without hashes.
func (s *Team) ListStaff(ctx context.Context) ([]booking.Staff, error) {
	if _, err := allow(ctx, booking.ActionStaff); err != nil {
		return nil, err
	}
	return s.store.ListStaff(ctx)
}

// UpdateStaff disables (or enables) an account, or resets its password (at
// least 10 characters). An update that changes nothing is BAD_REQUEST.
func (s *Team) UpdateStaff(ctx context.Context, id int64, disabled *bool, password *string) (*booking.Staff, error) {
	if _, err := allow(ctx, booking.ActionStaff); err != nil {
		return nil, err
	}
	if disabled == nil && password == nil {
		return nil, booking.Errorf(booking.EBADREQUEST, "nothing to change")
	}
	u := booking.StaffUpdate{Disabled: disabled}
	if password != nil {
		hash, err := s.Passwords.Hash(*password)
		if err != nil {
			return nil, err
		}
		u.PasswordHash = &hash
	}
	return s.store.UpdateStaff(ctx, id, u)
}

// SignIn checks a console sign-in from a client address (booking.SignInAddress
// of the source address the gateway reports): the name booking.OwnerName (any
// case) with adminToken (ADMIN_TOKEN; empty: no built-in owner) as the
// password is the built-in owner (a Staff with ID 0 and the owner's role), any
// other name an enabled account with its password. A wrong password, an
// unknown name and a disabled account are the same UNAUTHORIZED at the same
// cost (an unknown name's password is compared with a dummy hash). Failures
// lock a name for an address, or for every address (booking.SignInLocked):
// TOO_MANY_ATTEMPTS with when to try again, counted in the store so that every
// instance sees it. The built-in owner's right token always signs in, locked
// or not, so that no stranger can keep the owner out; a wrong one is counted
// and refused like any other.
func (s *Team) SignIn(ctx context.Context, name, password, address, adminToken string) (*booking.Staff, error) {
	refused := booking.Errorf(booking.EUNAUTHORIZED, "sign-in refused")
	name, err := booking.CleanName(name, booking.StaffNameMaxRunes)
	if err != nil {
		// No account has such a name (each was kept by the same rule), and the
		// store has no room for it.
		s.Passwords.Matches("", password)
		return nil, refused
	}
	if booking.IsOwnerName(name) {
		if adminToken != "" && subtle.ConstantTimeCompare([]byte(password), []byte(adminToken)) == 1 {
			return &booking.Staff{Name: booking.OwnerName, Role: booking.RoleOwner}, nil
		}
		if err := s.store.SignInLocked(ctx, name, address); err != nil {
			return nil, err
		}
		if err := s.store.RecordSignIn(ctx, name, address, false); err != nil {
			return nil, err
		}
		return nil, refused
	}
	if err := s.store.SignInLocked(ctx, name, address); err != nil {
		return nil, err
	}
	var who *booking.Staff
	c, err := s.store.StaffCredential(ctx, name)
	hash := ""
	if err == nil {
		hash = c.PasswordHash
	} else if !booking.IsCode(err, booking.ENOTFOUND) {
		return nil, err
	}
	if s.Passwords.Matches(hash, password) && !c.Disabled {
		who = &c.Staff
	}
	if err := s.store.RecordSignIn(ctx, name, address, who != nil); err != nil {
		return nil, err
	}
	if who == nil {
		return nil, refused
	}
	return who, nil
}

// ChangeMyPassword sets a new password for the account ctx names (as her
// session began: the account's UpdatedAt then), asked from a client address,
// after checking her current one. It is a sign-in of her name as far as the
// lock-out goes: while her name is locked for the address it is
// TOO_MANY_ATTEMPTS, and a wrong current password is counted as a failed
// sign-in and is BAD_REQUEST, changing nothing. A new password that breaks the
// rules is BAD_REQUEST before the current one is looked at. The built-in
// owner has no password of her own (hers is ADMIN_TOKEN): BAD_REQUEST. The
// change is made only if the account is unchanged since her session began: an
// owner's reset or disabling in between wins, her session has ended with it,
// and the change is UNAUTHORIZED. The change ends the account's sessions, the
// one that asked too; the caller issues that one a new session of the changed
// account.
func (s *Team) ChangeMyPassword(ctx context.Context, current, next, address string) (*booking.Staff, error) {
	who, ok := StaffOf(ctx)
	if !ok || who.ID == 0 {
		return nil, booking.Errorf(booking.EBADREQUEST, "the built-in owner's password is ADMIN_TOKEN")
	}
	if who.UpdatedAt.IsZero() {
		// Nothing says when her session began: no change is safe to make.
		return nil, booking.Errorf(booking.EUNAUTHORIZED, "own password change of staff %d without the account's stamp", who.ID)
	}
	if err := booking.CheckPassword(next); err != nil {
		return nil, err
	}
	if err := s.store.SignInLocked(ctx, who.Name, address); err != nil {
		return nil, err
	}
	c, err := s.store.StaffCredential(ctx, who.Name)
	if err != nil {
		return nil, err
	}
	if c.ID != who.ID || !s.Passwords.Matches(c.PasswordHash, current) {
		if err := s.store.RecordSignIn(ctx, who.Name, address, false); err != nil {
			return nil, err
		}
		return nil, booking.Errorf(booking.EBADREQUEST, "current password does not match")
	}
	hash, err := s.Passwords.Hash(next)
	if err != nil {
		return nil, err
	}
	st, err := s.store.UpdateStaff(ctx, who.ID, booking.StaffUpdate{PasswordHash: &hash, IfUnchangedSince: who.UpdatedAt})
	if booking.IsCode(err, booking.EINVALIDSTATE) || booking.IsCode(err, booking.ENOTFOUND) {
		return nil, booking.Errorf(booking.EUNAUTHORIZED, "own password change of staff %d: %v", who.ID, err)
	}
	return st, err
}

// ConsoleSession is who a console session is of, checked on every request it
// makes: staffID 0 is the built-in owner (her sessions end when ADMIN_TOKEN
// changes, as their keys derive from it); any other is an account, and its
// session stands only while the account is enabled and unchanged since the
// sign-in (stamp is booking.Staff.SessionStamp then): disabling it or setting a
// new password ends every session at once. A session signed out, or of an
// account that is gone, disabled or changed, is UNAUTHORIZED.
func (s *Team) ConsoleSession(ctx context.Context, sessionID string, staffID, stamp int64) (booking.Staff, error) {
	ended, err := s.store.ConsoleSessionEnded(ctx, sessionID)
	if err != nil {
		return booking.Staff{}, err
	}
	if ended {
		return booking.Staff{}, booking.Errorf(booking.EUNAUTHORIZED, "console session signed out")
	}
	if staffID == 0 {
		return booking.BuiltInOwner, nil
	}
	st, err := s.store.FindStaff(ctx, staffID)
	if booking.IsCode(err, booking.ENOTFOUND) {
		return booking.Staff{}, booking.Errorf(booking.EUNAUTHORIZED, "console session of staff %d: no such account", staffID)
	} else if err != nil {
		return booking.Staff{}, err
	}
	switch {
	case st.Disabled:
		return booking.Staff{}, booking.Errorf(booking.EUNAUTHORIZED, "console session of staff %d: account disabled", staffID)
	case st.SessionStamp() != stamp:
		return booking.Staff{}, booking.Errorf(booking.EUNAUTHORIZED, "console session of staff %d: account changed since the sign-in", staffID)
	}
	return *st, nil
}

// StaffNames names the accounts by id, for the console's audit trail and
// lists (who did what); every signed-in person may see them.
func (s *Team) StaffNames(ctx context.Context) (map[int64]string, error) {
	list, err := s.store.ListStaff(ctx)
	if err != nil {
		return nil, err
	}
	names := make(map[int64]string, len(list))
	for _, st := range list {
		names[st.ID] = st.Name
	}
	return names, nil
}

type staffKey struct{}

// WithStaff is ctx naming the staff member who asks (the admin middleware's
// job): the service allows each admin action by that member's role.
func WithStaff(ctx context.Context, st booking.Staff) context.Context {
	return context.WithValue(ctx, staffKey{}, st)
}

// StaffOf is the staff member ctx names, if any.
func StaffOf(ctx context.Context) (booking.Staff, bool) {
	st, ok := ctx.Value(staffKey{}).(booking.Staff)
	return st, ok
}

// allow is the staff member ctx names when her role may take action, and
// FORBIDDEN otherwise. It fails closed: a call that names nobody (a route that
// forgot to say who asks) is refused, never taken for the owner's.
func allow(ctx context.Context, action booking.AdminAction) (booking.Staff, error) {
	st, ok := StaffOf(ctx)
	if !ok {
		return booking.Staff{}, booking.Errorf(booking.EFORBIDDEN, "%s: nobody named as asking", action)
	}
	return st, st.Role.Allow(action)
}

// EndConsoleSession records a console sign-out, so the session's cookie is
// refused from now on even where a copy of it survives.
func (s *Team) EndConsoleSession(ctx context.Context, sessionID string, expiresAt time.Time) error {
	return s.store.EndConsoleSession(ctx, sessionID, expiresAt)
}
