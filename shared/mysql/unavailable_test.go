package mysql_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	drv "github.com/go-sql-driver/mysql"

	"salon/shared/booking"
	"salon/shared/mysql"
)

func TestClassify(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: &net.OpError{Op: "connect", Err: syscall.ECONNREFUSED}}
	tests := []struct {
		name string
		err  error
		want string // "" means returned unchanged
	}{
		{"too many connections", &drv.MySQLError{Number: 1040, Message: "Too many connections"}, booking.EUNAVAILABLE},
		{"max_user_connections", &drv.MySQLError{Number: 1203, Message: "User root already has more than 'max_user_connections' active connections"}, booking.EUNAVAILABLE},
		{"shutdown", &drv.MySQLError{Number: 1053, Message: "Server shutdown in progress"}, booking.EUNAVAILABLE},
		{"killed", &drv.MySQLError{Number: 1927, Message: "Connection was killed"}, booking.EUNAVAILABLE},
		{"deadlock that persisted", &drv.MySQLError{Number: 1213, Message: "Deadlock found when trying to get lock"}, booking.EUNAVAILABLE},
		{"auto-increment not readable", &drv.MySQLError{Number: 1467, Message: "Failed to read auto-increment value from storage engine"}, booking.EUNAVAILABLE},
		{"refused", dial, booking.EUNAVAILABLE},
		{"refused, wrapped", fmt.Errorf("find slot: %w", dial), booking.EUNAVAILABLE},
		{"i/o timeout", &net.OpError{Op: "dial", Net: "tcp", Err: timeoutErr{}}, booking.EUNAVAILABLE},
		{"bad connection", driver.ErrBadConn, booking.EUNAVAILABLE},
		{"invalid connection", drv.ErrInvalidConn, booking.EUNAVAILABLE},
		{"deadline", fmt.Errorf("ping: %w", context.DeadlineExceeded), booking.EUNAVAILABLE},
		{"internal wrapping a lost connection", errors.Join(booking.Errorf(booking.EINTERNAL, "x"), drv.ErrInvalidConn), booking.EUNAVAILABLE},

		// Not the database's availability: left for their own codes (or INTERNAL).
		{"duplicate key", &drv.MySQLError{Number: 1062, Message: "Duplicate entry"}, ""},
		{"syntax", &drv.MySQLError{Number: 1064, Message: "You have an error in your SQL syntax"}, ""},
		{"access denied", &drv.MySQLError{Number: 1045, Message: "Access denied"}, ""},
		{"plain", errors.New("boom"), ""},
		{"sold out", booking.Errorf(booking.ESOLDOUT, "full"), ""},
		{"upstream wrapping a timeout", errors.Join(booking.Errorf(booking.EUPSTREAM, "wechat"), context.DeadlineExceeded), ""},
		{"nil", nil, ""},
	}
	for _, tt := range tests {
		got := mysql.Classify(tt.err)
		if tt.want == "" {
			if got != tt.err {
				t.Errorf("%s: Classify(%v) = %v, want it unchanged", tt.name, tt.err, got)
			}
			continue
		}
		if booking.ErrorCode(got) != tt.want {
			t.Errorf("%s: Classify(%v) code %s, want %s", tt.name, tt.err, booking.ErrorCode(got), tt.want)
		}
		if !errors.Is(got, tt.err) {
			t.Errorf("%s: Classify(%v) = %v lost the driver's error (the log needs it)", tt.name, tt.err, got)
		}
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// TestClassifyRefusedPort goes through the real driver: a port nobody listens
// on is what a stopped database looks like from SCF.
func TestClassifyRefusedPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	db, err := mysql.Open("root@tcp("+addr+")/salon", mysql.SCFOptions)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = db.FindSlot(context.Background(), 1)
	if err == nil {
		t.Fatal("a closed port answered")
	}
	if got := mysql.Classify(err); booking.ErrorCode(got) != booking.EUNAVAILABLE {
		t.Errorf("closed port: %v classified %s", err, booking.ErrorCode(got))
	}
}
