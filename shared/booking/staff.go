package booking

import (
	"crypto/rand"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"
)

// Staff accounts: the owner and the people who work in the salon sign in to the
// console as themselves. The built-in owner is the name OwnerName with
// ADMIN_TOKEN as the password; it has no account row.

// Role is what a staff member may do.
type Role string

const (
	RoleOwner Role = "owner"
	RoleStaff Role = "staff"
)

// Valid reports whether r is one of the roles.
func (r Role) Valid() bool { return r == RoleOwner || r == RoleStaff }

// OwnerName is the name of the built-in owner, whose password is ADMIN_TOKEN;
// no account may take it.
const OwnerName = "admin"

// BuiltInOwner is the owner who signs in with ADMIN_TOKEN (or calls the JSON
// admin API with it as the bearer token); it has no account row, so ID 0.
var BuiltInOwner = Staff{Name: OwnerName, Role: RoleOwner}

// staffActorPrefix begins the audit actor of a staff account.
const staffActorPrefix = "staff:"

// Actor is how the audit trail names what this person did: "staff:<id>" for an
// account, ActorAdmin for the built-in owner.
func (st Staff) Actor() string {
	if st.ID == 0 {
		return ActorAdmin
	}
	return staffActorPrefix + strconv.FormatInt(st.ID, 10)
}

// StaffIDOfActor is the account an audit actor names, if it names one.
func StaffIDOfActor(actor string) (int64, bool) {
	rest, ok := strings.CutPrefix(actor, staffActorPrefix)
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	return id, err == nil && id > 0
}

// IsPersonActor reports whether an audit actor is a person of the salon (an
// account or the built-in owner), not the product or the customer.
func IsPersonActor(actor string) bool {
	_, staff := StaffIDOfActor(actor)
	return staff || actor == ActorAdmin
}

// Name and password rules.
const (
	StaffNameMaxRunes = 40
	PasswordMinRunes  = 10
	// PasswordMaxBytes is bcrypt's limit: it reads no further.
	PasswordMaxBytes = 72
)

// PasswordCost is the bcrypt cost. An SCF function of 128 MB gets a fraction of a
// core; cost 10 takes about 60-80 ms there (bcrypt needs only 4 KB of memory, so
// the small memory is no concern, only the CPU share), which a person signing in
// does not notice while a guesser who stole the hashes pays it per guess. Cost 12
// would be 4 times that on every sign-in and on the dummy hash of every unknown
// name; the lock-out (per name and address, and per name) stops online guessing.
const PasswordCost = 10

// Staff is an account as it is shown: never its password or hash.
type Staff struct {
	ID                int64     `json:"staffId"`
	Name              string    `json:"name"`
	Role              Role      `json:"role"`
	Disabled          bool      `json:"disabled"`
	PasswordChangedAt time.Time `json:"passwordChangedAt"`
	CreatedAt         time.Time `json:"createdAt"`
	UpdatedAt         time.Time `json:"updatedAt"`
}

// SessionStamp is what a console session remembers of the account it was
// signed in as: the time of the account's last change. Any change (disabled,
// enabled again, a new password) moves it and so ends the sessions made before.
func (st Staff) SessionStamp() int64 { return st.UpdatedAt.UnixMicro() }

// StaffCredential is an account with its password hash, for the sign-in check
// only; it never leaves the service.
type StaffCredential struct {
	Staff
	PasswordHash string `json:"-"`
}

// NewStaff is an account the owner creates.
type NewStaff struct {
	Name         string
	Role         Role
	PasswordHash string
}

// StaffUpdate is a change to an account: the owner disables it (or enables it
// again) or sets a new password hash; nil leaves that part unchanged. A staff
// member's change of her own password sets IfUnchangedSince to the account's
// UpdatedAt when her session began: the change is then made only if the
// account is still enabled and unchanged since, so that an owner's reset or
// disabling in between wins.
type StaffUpdate struct {
	Disabled         *bool
	PasswordHash     *string
	IfUnchangedSince time.Time
}

// CleanStaffName is the name of a new account as it is kept: CleanName's rule
// with at most StaffNameMaxRunes characters, and not the built-in owner's
// (compared without case, as the database compares names).
func CleanStaffName(name string) (string, error) {
	name, err := CleanName(name, StaffNameMaxRunes)
	if err != nil {
		return "", err
	}
	if IsOwnerName(name) {
		return "", Errorf(EBADREQUEST, "the name %s is the built-in owner's", OwnerName)
	}
	return name, nil
}

// CheckPassword checks a new password: at least 10 characters and at most 72
// bytes (all bcrypt reads).
func CheckPassword(password string) error {
	switch {
	case utf8.RuneCountInString(password) < PasswordMinRunes:
		return Errorf(EBADREQUEST, "password must have at least %d characters", PasswordMinRunes)
	case len(password) > PasswordMaxBytes:
		return Errorf(EBADREQUEST, "password must have at most %d bytes", PasswordMaxBytes)
	}
	return nil
}

// HashPassword checks password and returns its bcrypt hash at PasswordCost.
func HashPassword(password string) (string, error) {
	return Passwords{}.Hash(password)
}

// PasswordMatches reports whether password is the one of hash. An empty hash
// (no such account) is compared with a dummy hash and never matches.
func PasswordMatches(hash, password string) bool {
	return Passwords{}.Matches(hash, password)
}

// Passwords hashes and checks passwords at one bcrypt cost: Cost, or
// PasswordCost when it is zero, as it is everywhere in production. Only tests
// set a lower Cost: under the race detector one hash at PasswordCost takes
// seconds of CPU, and a request that makes one can outlast the gateway's
// serviceTimeout on a busy machine. A hash is checked at the cost it was made
// with, whatever Cost is.
type Passwords struct {
	Cost int
}

func (p Passwords) cost() int {
	if p.Cost == 0 {
		return PasswordCost
	}
	return p.Cost
}

// Hash checks password and returns its bcrypt hash.
func (p Passwords) Hash(password string) (string, error) {
	if err := CheckPassword(password); err != nil {
		return "", err
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), p.cost())
	if err != nil {
		return "", err
	}
	return string(h), nil
}

// Matches reports whether password is the one of hash. An empty hash (no such
// account) is compared with a dummy hash of p's cost and never matches.
func (p Passwords) Matches(hash, password string) bool {
	if hash == "" {
		bcrypt.CompareHashAndPassword(dummyHash(p.cost()), []byte(password))
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil
}

// dummyHashes holds by cost the hash compared against for a name that has no
// account, so that an unknown name costs what a wrong password does. Each is
// made on first use, not when a function starts.
var dummyHashes sync.Map

func dummyHash(cost int) []byte {
	if h, ok := dummyHashes.Load(cost); ok {
		return h.([]byte)
	}
	h, _ := bcrypt.GenerateFromPassword([]byte("no account has this password"), cost)
	h2, _ := dummyHashes.LoadOrStore(cost, h)
	return h2.([]byte)
}

// The sign-in lock-out. SignInMaxFailures failed sign-ins of one name from one
// client address within SignInWindow lock that name for that address, and
// SignInMaxFailuresAllAddresses from all addresses lock it for everyone, for
// SignInLock after the last of them. The built-in owner's right ADMIN_TOKEN
// is never refused by either (its 32 bytes are not guessed five at a time), so
// nobody can keep the owner out; every other name is locked as a stranger
// guesses it, which bounds what one guesser learns to five passwords per
// address and twenty in all per 15 minutes.
const (
	SignInMaxFailures             = 5
	SignInMaxFailuresAllAddresses = 20
	SignInWindow                  = 15 * time.Minute
	SignInLock                    = 15 * time.Minute
	// SignInRecordsKept is how long a failed sign-in and the name it was for
	// are kept: the release run deletes older ones. Only the last
	// SignInWindow+SignInLock decide a lock; the rest is there to be read
	// when someone asks who tried what.
	SignInRecordsKept = 24 * time.Hour
)

// SignInLocked decides whether a name is locked for a client address at now,
// and for how long still, on the name's recent failed sign-ins (each newest
// first): fromAddress those of this address (only the first SignInMaxFailures
// are read), allAddresses those of every address (the first
// SignInMaxFailuresAllAddresses). Either limit reached within SignInWindow
// locks it; no failure is counted while it is locked, so a lock ends
// SignInLock after the last failure that counted.
func SignInLocked(fromAddress, allAddresses []time.Time, now time.Time) (bool, time.Duration) {
	left := max(lockLeft(fromAddress, SignInMaxFailures, now), lockLeft(allAddresses, SignInMaxFailuresAllAddresses, now))
	return left > 0, left
}

// lockLeft is how long limit failures within SignInWindow (newest first) lock
// for still at now; 0 when they do not.
func lockLeft(failures []time.Time, limit int, now time.Time) time.Duration {
	if len(failures) < limit {
		return 0
	}
	last, first := failures[0], failures[limit-1]
	if last.Sub(first) > SignInWindow {
		return 0
	}
	return max(last.Add(SignInLock).Sub(now), 0)
}

// IsOwnerName reports whether a name typed at the sign-in is the built-in
// owner's: names compare without case, as the database compares them, so
// ADMIN is admin.
func IsOwnerName(name string) bool { return strings.EqualFold(name, OwnerName) }

// SignInAddressMaxBytes is the longest client address a sign-in is counted
// under (an IPv6 /64 prefix in text).
const SignInAddressMaxBytes = 45

// SignInAddress is the client address a sign-in is counted under, from the
// source address the gateway reports (API Gateway's requestContext.sourceIp;
// never a header the client writes): an IPv4 address as it is, an IPv6 one as
// its /64 prefix (one subscriber's network, which hands its devices any
// address in it), and an address that does not parse as "", which all such
// clients share.
func SignInAddress(source string) string {
	host := source
	if h, _, err := net.SplitHostPort(source); err == nil {
		host = h
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return ""
	}
	ip = ip.WithZone("").Unmap()
	if ip.Is4() {
		return ip.String()
	}
	p, err := ip.Prefix(64)
	if err != nil {
		return ""
	}
	return p.String()
}

// TooManyAttempts is the answer to a sign-in of a locked name, telling when to
// try again (whole seconds, at least one).
func TooManyAttempts(left time.Duration) *Error {
	e := Errorf(ETOOMANYATTEMPTS, "sign-in locked for %s", left)
	e.RetryAfter = int((left + time.Second - 1) / time.Second)
	if e.RetryAfter < 1 {
		e.RetryAfter = 1
	}
	return e
}

// generatedPasswordAlphabet leaves out the characters people misread when a
// password is read out at the counter (0 O o, 1 l I).
const generatedPasswordAlphabet = "23456789abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ"

// GeneratedPasswordLen is the length of a password the console makes for a new
// account or a reset: 14 of 56 characters, about 81 bits.
const GeneratedPasswordLen = 14

// NewPassword is a random password for a new account or a reset, which the
// owner hands over once; it meets CheckPassword.
func NewPassword() (string, error) {
	n := len(generatedPasswordAlphabet)
	limit := 256 / n * n // bytes from limit up are drawn again, so each character is as likely
	out := make([]byte, 0, GeneratedPasswordLen)
	var b [32]byte
	for len(out) < GeneratedPasswordLen {
		if _, err := rand.Read(b[:]); err != nil {
			return "", err
		}
		for _, v := range b {
			if int(v) < limit && len(out) < GeneratedPasswordLen {
				out = append(out, generatedPasswordAlphabet[int(v)%n])
			}
		}
	}
	return string(out), nil
}
